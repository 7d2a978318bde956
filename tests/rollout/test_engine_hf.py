"""One real multi-turn episode batch on the tiny model (HF backend) against the sandbox.

The untrained model writes garbage; the test asserts the loop's behaviour: turns and token
limits respected, malformed calls counted, every turn's prompt extending the previous
prompt + action (one trainer row per episode), and the trainer's segments matching.
"""

import torch

from posttrain.core.config import TinyModelConfig
from posttrain.domains import get_domain, sample_task
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.models.tiny import build_tiny_model
from posttrain.rollout import EpisodeLimits, run_groups
from posttrain.rollout.context import ContextConfig
from posttrain.trainer.batch import trajectory_segments

torch.set_num_threads(1)


def test_tiny_model_multi_turn_episodes():
    model, tok = build_tiny_model(TinyModelConfig(max_position_embeddings=4096), seed=0)
    backend = HFBackend(model, tok)
    tasks = [sample_task(get_domain("terminal.organize"), 0, 1), sample_task(get_domain("tools.single_call"), 0, 1)]
    limits = EpisodeLimits(max_turns=3, max_total_tokens=60, context=ContextConfig(max_context_chars=None))

    def strict_env(task):  # only <answer> ends an episode: garbage turns become format errors
        env = get_domain(task.domain).make_env(task)
        env.require_answer = True
        return env

    groups = run_groups(backend, tasks, SamplingParams(n=2, max_new_tokens=24, seed=1),
                              make_env=strict_env, limits=limits)
    turns = [len(tr.turns) for g in groups for tr in g.trajectories]
    assert max(turns) >= 2  # really multi-turn
    for g in groups:
        for tr in g.trajectories:
            assert tr.error is None and tr.score is not None and tr.score.error is None
            assert 1 <= len(tr.turns) <= 3
            assert tr.stop_reason in ("done", "max_turns", "max_tokens")
            assert tr.num_action_tokens <= 60  # each prompt's cap is its own budget left
            for t in tr.turns:
                assert len(t.action.token_ids_T) == len(t.action.logprobs_T) <= 24
                assert "format_ok" in t.info and "tool_calls_valid" in t.info
                if not t.info["format_ok"]:
                    assert t.info["malformed_calls"] >= 1 or t.info["final"]
            for a, b in zip(tr.turns, tr.turns[1:]):
                head = list(a.action.prompt_token_ids) + list(a.action.token_ids_T)
                assert list(b.action.prompt_token_ids[:len(head)]) == head
            segs = trajectory_segments(tr)
            assert len(segs) == 1
            assert sum(segs[0].action_mask) == tr.num_action_tokens
