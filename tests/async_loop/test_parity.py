"""With max_policy_lag 0 the async loop reproduces the synchronous reference loop exactly."""

import torch

from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_async
from posttrain.trainer.reference_loop import train_rl

from async_helpers import run_config, setup


def _run(loop, cfg, **kw):
    model, opt, sched, backend, stream, pad = setup(cfg)
    rows = {}
    state = loop(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                 on_step=lambda s, m: rows.__setitem__(s, m), **kw)
    return rows, state, model, stream, backend


def test_lag0_reproduces_reference_metrics_and_weights():
    cfg = run_config(steps=3)
    ref_rows, ref_state, ref_model, ref_stream, _ = _run(train_rl, cfg)
    ledger = TaskLedger()
    rows, state, model, stream, backend = _run(train_async, cfg, config=AsyncConfig(), ledger=ledger)
    assert sorted(rows) == sorted(ref_rows) == [1, 2, 3]
    rewards = [ref_rows[s]["reward/mean"] for s in ref_rows]
    assert any(ref_rows[s]["loss/grad_norm"] > 1e-4 for s in ref_rows), "no learning signal"
    assert len(set(rewards)) > 1
    for step, ref in ref_rows.items():
        got = rows[step]
        for key, value in ref.items():
            if not key.startswith("time/"):
                assert got[key] == value, f"step {step} {key}: {got[key]} != {value}"
        for key in ("time/sample_s", "time/env_s", "time/verify_s", "time/update_s", "time/wait_s",
                    "async/lag_mean", "async/dropped_stale", "loss/entropy"):
            assert key in got
        assert got["async/lag_mean"] == 0.0
    for (n, a), b in zip(ref_model.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), n
    assert (state.step, state.policy_version, state.samples_seen) == \
        (ref_state.step, ref_state.policy_version, ref_state.samples_seen)
    assert stream.position == ref_stream.position == 6
    assert backend.policy_version == 3
    assert ledger.counts().get("trained", 0) + ledger.counts().get("failed", 0) + \
        ledger.counts().get("dropped", 0) == 6
    assert len({r["task"] for r in ledger.rows}) == 6
