"""Shared pieces of the LoRA tests: a small tiny-model run config with an adapter (on
lm_head too: over a random base, 20 SFT steps then answer math.compare ~75% right, so RL
groups have reward variance and the adapter gets gradients)."""

import pytest
import torch

from posttrain.core.config import validate_config

SMALL = {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64}


def lora_config(**over):
    data = {"seed": 3, "model": {"tiny": dict(SMALL), "lora": {"r": 8, "alpha": 16.0,
                      "target_modules": ["q_proj", "v_proj", "down_proj", "lm_head"]}},
            "domains": [{"id": "math.compare-v1", "difficulties": [1]}],
            "sft": {"steps": 20, "batch_size": 16, "lr": 0.05, "warmup_steps": 0},
            "rl": {"steps": 2, "prompts_per_step": 2, "group_size": 4, "max_new_tokens": 4,
                   "lr": 0.05, "filter_zero_variance": False, "max_policy_lag": 0, "kl_coef": 0.1},
            "eval": {"heldout_per_domain": 6, "max_new_tokens": 4}}
    for dotted, value in over.items():
        node = data
        *head, last = dotted.split("__")
        for k in head:
            node = node.setdefault(k, {})
        node[last] = value
    return validate_config(data)


@pytest.fixture
def make_cfg():
    """``make_cfg(rl__steps=3, ...)``: the small LoRA run config with dotted overrides."""
    return lora_config


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
