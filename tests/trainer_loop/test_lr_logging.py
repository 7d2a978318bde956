"""``loss/lr`` is the learning rate the step's update used, not the next step's."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "async_loop"))  # async_helpers

from async_helpers import run_config, setup  # noqa: E402

from posttrain.trainer.reference_loop import train_rl  # noqa: E402


def test_logged_lr_is_the_rate_of_the_step():
    cfg = run_config(steps=3, lr=0.01, warmup_steps=3, kl_coef=0.05)  # KL: every row trains
    model, opt, sched, backend, stream, pad = setup(cfg)
    rows = {}
    train_rl(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
             on_step=lambda s, m: rows.__setitem__(s, m))
    # warm-up over 3 steps: step s (1-based) trains at lr * s / 3
    assert [rows[s]["loss/lr"] for s in (1, 2, 3)] == pytest.approx([0.01 / 3, 0.02 / 3, 0.01])
