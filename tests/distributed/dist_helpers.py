"""Shared set-up for async-loop tests: a shrunk tiny model, briefly SFT-ed so rewards vary."""

from __future__ import annotations

import copy

import torch

from posttrain.core.config import DomainSpec, RLConfig, RunConfig, SFTConfig, TinyModelConfig
from posttrain.inference.hf import HFBackend
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.phases import load_policy, run_sft
from posttrain.trainer.sft import pad_id_of
from posttrain.trainer.tasks import TaskStream

torch.set_num_threads(1)

DOMAINS = [DomainSpec(id="math.add-v1", difficulties=[1]), DomainSpec(id="math.compare-v1", difficulties=[1])]
SHAPE = TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64)
_CACHE: dict = {}


def run_config(**rl) -> RunConfig:
    base = dict(steps=3, prompts_per_step=2, group_size=4, max_new_tokens=4, lr=0.01,
                filter_zero_variance=False, max_policy_lag=0)
    base.update(rl)
    return RunConfig(seed=3, model={"tiny": SHAPE}, domains=DOMAINS,
                     sft=SFTConfig(steps=30, batch_size=16, lr=1e-2, warmup_steps=2), rl=RLConfig(**base))


def warm_policy():
    """The SFT-ed tiny model (computed once per test process, then deep-copied)."""
    if "m" not in _CACHE:
        cfg = run_config()
        model, tok = load_policy(cfg)
        run_sft(model, tok, cfg)
        _CACHE["m"] = (model, tok)
    model, tok = _CACHE["m"]
    return copy.deepcopy(model), tok


def setup(cfg: RunConfig):
    """(model, optimizer, schedule, backend, stream, pad_id) exactly as the pipeline builds them."""
    model, tok = warm_policy()
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    stream = TaskStream(cfg.domains, seed=cfg.seed)
    optimizer, schedule = optimizer_from_config(model, cfg.rl)
    return model, optimizer, schedule, backend, stream, pad_id_of(tok)
