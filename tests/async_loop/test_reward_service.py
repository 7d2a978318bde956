"""Learned reward models beside the env's verification: a local HF sequence classifier scored
in batches and combined per trajectory with the Score the engine got from the live env;
failures recorded — never raised."""

import pytest
import torch

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Trajectory
from posttrain.domains.base import get_domain, sample_task
from posttrain.inference.fake import FakeBackend
from posttrain.inference.base import SamplingParams
from posttrain.rollout import run_groups
from posttrain.rollout.reward_service import EnvScore, SequenceClassifierReward, batch_evaluate


def _trajs(n=6):
    """Episodes played and verified by the engine: odd seeds answered right, even ones "x"."""
    dom = get_domain("math.add-v1")
    tasks = [sample_task(dom, seed, 1) for seed in range(n)]
    answers = {t.prompt[-1]["content"]: (dom.solve(t) if t.seed % 2 else "x") for t in tasks}
    backend = FakeBackend(lambda messages, j: answers[messages[-1]["content"]])
    return [g.trajectories[0] for g in run_groups(backend, tasks, SamplingParams(max_new_tokens=40))]


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
    scores = batch_evaluate(trajs, [(EnvScore(), 3.0), (rm, 1.0)])
    for t, s in zip(trajs[:4], scores):
        v = 1.0 if t.turns[0].action.text == get_domain("math.add-v1").solve(t.task) else 0.0
        assert s.components["verifier"] == (v, 3.0) and s.value == pytest.approx(
            (3 * v + s.components["reward_model"][0]) / 4)
    assert not scores[4].ok and "died" in scores[4].reason

    class Broken:
        name = "broken"

        def score_batch(self, trajectories):
            raise RuntimeError("reward model OOM")

    broken = batch_evaluate(trajs[:2], [(EnvScore(), 1.0), (Broken(), 1.0)])
    assert all(not s.ok and "broken failed" in s.reason for s in broken)
