"""Optimizer groups and LR schedules from configs."""

import math

import pytest
import torch
from trainer_helpers import tiny_llama

from posttrain.core.config import SFTConfig
from posttrain.core.errors import ConfigError
from posttrain.trainer.optim import build_lr_schedule, build_optimizer, optimizer_from_config


def _lrs(sched, opt, n):
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_warmup_then_constant_and_cosine():
    model = tiny_llama(0)
    opt = build_optimizer(model, lr=1.0)
    lrs = _lrs(build_lr_schedule(opt, warmup_steps=4, total_steps=10), opt, 6)
    assert lrs == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0, 1.0])
    opt = build_optimizer(model, lr=2.0)
    lrs = _lrs(build_lr_schedule(opt, warmup_steps=2, total_steps=6, kind="cosine", min_lr_ratio=0.1),
               opt, 8)
    # after warm-up: 0.1 + 0.9 * (1 + cos(pi * k / 4)) / 2 for k = 0..4, then flat at the floor
    want = [1.0, 2.0] + [2 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * k / 4))) for k in range(5)] + [0.2]
    assert lrs == pytest.approx(want)


def test_no_weight_decay_on_vectors():
    model = tiny_llama(0)
    opt = build_optimizer(model, lr=1e-3, weight_decay=0.1)
    decayed, plain = opt.param_groups
    assert decayed["weight_decay"] == 0.1 and plain["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decayed["params"]) and all(p.dim() == 1 for p in plain["params"])
    assert len(decayed["params"]) + len(plain["params"]) == len(list(model.parameters()))


def test_from_config_and_bad_values():
    model = tiny_llama(0)
    opt, sched = optimizer_from_config(model, SFTConfig(lr=0.01, warmup_steps=5, steps=50, weight_decay=0.02))
    assert opt.param_groups[0]["lr"] == pytest.approx(0.002) and opt.param_groups[0]["weight_decay"] == 0.02
    state = sched.state_dict()
    fresh_opt, fresh = optimizer_from_config(model, SFTConfig(lr=0.01, warmup_steps=5, steps=50))
    for _ in range(3):
        opt.step(), sched.step()
    fresh.load_state_dict(sched.state_dict())
    assert fresh.last_epoch == 3 and state["last_epoch"] == 0
    with pytest.raises(ConfigError, match="allowed"):
        build_lr_schedule(torch.optim.SGD(model.parameters(), lr=1.0), kind="linear")
