"""The reward service: verifiers and a learned reward model (a local HF sequence classifier)
scored in batches, combined per trajectory, failures recorded — never raised."""

import pytest
import torch

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Trajectory, Turn
from posttrain.domains.base import get_domain, sample_task
from posttrain.rollout.reward_service import (LocalRewardService, SequenceClassifierReward, VerifierSource,
                                              batch_evaluate)


def _trajs(n=6):
    dom = get_domain("math.add-v1")
    out = []
    for seed in range(n):
        task = sample_task(dom, seed, 1)
        answer = dom.solve(task) if seed % 2 else "x"
        out.append(Trajectory(task=task, turns=(Turn(Observation(task.prompt), Completion(answer)),)))
    return out


@pytest.fixture(scope="module")
def reward_model():
    from transformers import LlamaConfig, LlamaForSequenceClassification

    from posttrain.models.tokenizer import build_char_tokenizer

    tok = build_char_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, num_labels=1,
                      pad_token_id=tok.pad_token_id, max_position_embeddings=128)
    return LlamaForSequenceClassification(cfg).eval(), tok


def test_reward_model_scores_in_batches_like_one_at_a_time(reward_model):
    model, tok = reward_model
    trajs = _trajs(7)
    batched = SequenceClassifierReward(model, tok, batch_size=4).score_batch(trajs)
    single = [SequenceClassifierReward(model, tok, batch_size=1).score_batch([t])[0] for t in trajs]
    assert len(batched) == 7 and all(0 < s.value < 1 and s.ok for s in batched)
    for a, b in zip(batched, single):
        assert a.value == pytest.approx(b.value, abs=1e-5)
    assert len({round(s.value, 6) for s in batched}) > 1  # the texts differ, so do the scores


def test_verifier_and_model_combine_and_failures_are_recorded(reward_model):
    model, tok = reward_model
    trajs = _trajs(4)
    trajs.append(Trajectory(task=trajs[0].task, turns=(), error=ErrorInfo("sandbox", "died"), stop_reason="error"))
    rm = SequenceClassifierReward(model, tok, batch_size=3)
    scores = batch_evaluate(trajs, [(VerifierSource(), 3.0), (rm, 1.0)])
    for t, s in zip(trajs[:4], scores):
        v = 1.0 if t.turns[0].action.text == get_domain("math.add-v1").solve(t.task) else 0.0
        assert s.components["verifier"] == (v, 3.0) and s.value == pytest.approx(
            (3 * v + s.components["reward_model"][0]) / 4)
    assert not scores[4].ok and "died" in scores[4].reason

    class Broken:
        name = "broken"

        def score_batch(self, trajectories):
            raise RuntimeError("reward model OOM")

    broken = batch_evaluate(trajs[:2], [(VerifierSource(), 1.0), (Broken(), 1.0)])
    assert all(not s.ok and "broken failed" in s.reason for s in broken)


def test_local_service_spreads_chunks_and_keeps_order():
    trajs = _trajs(10)
    svc = LocalRewardService(workers=3, chunk=3)
    try:
        assert [s.value for s in svc.batch_evaluate(trajs)] == [0.0, 1.0] * 5
    finally:
        svc.close()
