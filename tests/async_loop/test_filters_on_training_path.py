"""Both training loops filter a step's groups the same way, and say what they dropped."""

from __future__ import annotations

import copy

from async_helpers import run_config, setup, warm_policy

from posttrain.core.config import FilterConfig
from posttrain.inference.hf import HFBackend
from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_on_result
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.producers import JobResult
from posttrain.trainer.reference_loop import RLState, rl_step, sampling_params
from posttrain.scheduler.rollouts import play_scheduled


def _step_groups(max_new_tokens):
    cfg = run_config(max_new_tokens=max_new_tokens, prompts_per_step=3)
    model, tok = warm_policy()
    backend = HFBackend(copy.deepcopy(model), tok)
    _, _, _, _, stream, _ = setup(cfg)
    tasks = stream.next(cfg.rl.prompts_per_step)
    groups, _, _ = play_scheduled(backend, tasks, sampling_params(cfg.rl, 11))
    return cfg, groups


def test_truncation_filter_reaches_the_loss_in_both_loops():
    # One new token never finishes a math.add answer: every sample is cut by the token cap.
    cfg, groups = _step_groups(max_new_tokens=1)
    assert all(t.stop_reason == "max_tokens" for g in groups for t in g.trajectories)
    model, optimizer, schedule, backend, stream, pad_id = setup(cfg)
    on = FilterConfig(truncated=True)

    m_sync = rl_step(model, optimizer, backend, stream, cfg.rl, RLState(), pad_id=pad_id,
                     filters=on)
    assert m_sync["filter/truncated"] == cfg.rl.prompts_per_step * cfg.rl.group_size
    assert m_sync["filter/empty"] == cfg.rl.prompts_per_step and m_sync["loss/skipped"] == 1.0

    model2, tok = warm_policy()
    opt2, _ = optimizer_from_config(model2, cfg.rl)
    ledger = TaskLedger()
    m_async = train_on_result(JobResult(0, tuple(groups)), model2, opt2, cfg.rl, RLState(),
                              AsyncConfig(), pad_id=pad_id, ledger=ledger, filters=on)
    assert m_async["filter/truncated"] == m_sync["filter/truncated"]
    assert m_async["loss/skipped"] == 1.0
    assert {r["outcome"] for r in ledger.rows} == {"dropped"}
    assert all("no trajectory left" in r["reason"] for r in ledger.rows)

    # Filter off (the default): the same truncated samples are trained on.
    m_off = train_on_result(JobResult(0, tuple(groups)), model2, opt2, cfg.rl, RLState(),
                            AsyncConfig(), pad_id=pad_id, filters=FilterConfig())
    assert m_off["filter/truncated"] == 0.0 and "loss/skipped" not in m_off
