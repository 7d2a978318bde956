"""Training scenarios run both by 2 gloo ranks (spawned) and by one plain process (the test).

Everything here is real: a transformers Llama with random weights, PolicyBatches padded by
``pad_segments``, the registered losses, fused AdamW, FSDP2 and DCP. The batches are built so
that a wrong normalisation shows: samples of very different lengths, unequal token counts per
rank, a group of zero advantages (dropped as inert, still counted in the normaliser).
"""

from __future__ import annotations

import random
from pathlib import Path

import torch

from posttrain.core.config import RLConfig
from posttrain.trainer.batch import PolicyBatch, Segment, pad_segments, select_rows
from posttrain.trainer.fsdp.dist import current, shard_model
from posttrain.trainer.fsdp.state import (full_model_state, full_optimizer_state, load_sharded,
                                          save_sharded)
from posttrain.trainer.fsdp.update import sharded_policy_update
from posttrain.trainer.optim import build_optimizer

STEPS = 3
# (loss, ppo_epochs, micro_batch_tokens): micro-batching is checked on dapo (token mean)
RUNS = {"grpo": ("grpo", 1, 0), "dapo": ("dapo", 2, 0), "dr_grpo": ("dr_grpo", 1, 0),
        "dapo_micro": ("dapo", 2, 40), "grpo_micro": ("grpo", 1, 40),
        "grpo_one_sample": ("grpo", 1, 0)}  # one trajectory: rank 1 runs fillers only
RESUME_AT, RESUME_STEPS = 2, 4


def model(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64,
                      tie_word_embeddings=False)
    return LlamaForCausalLM(cfg)


def batch(step: int) -> PolicyBatch:
    """Four groups of three samples: shared prompts, 1-14 action tokens, one inert group."""
    rng = random.Random(1000 + step)
    segs, advs, sample_ids = [], [], []
    for g in range(4):
        prompt = tuple(rng.randrange(3, 32) for _ in range(rng.randint(2, 6)))
        rewards = [0.5] * 3 if g == 1 else [rng.random() for _ in range(3)]
        mean = sum(rewards) / 3
        for r in rewards:
            n = rng.choice([1, 2, 5, 9, 14])
            acts = tuple(rng.randrange(3, 32) for _ in range(n))
            segs.append(Segment(prompt + acts, (False,) * len(prompt) + (True,) * n,
                                (0.0,) * len(prompt) + tuple(-3.5 + rng.uniform(-0.4, 0.4)
                                                             for _ in range(n)), 0))
            advs.append(r - mean)
            sample_ids.append(len(sample_ids))
    t = pad_segments(segs, 0)
    n = len(segs)
    return PolicyBatch(**t, advantages=torch.tensor(advs), group_ids=torch.arange(n) // 3,
                       sample_ids=torch.tensor(sample_ids), sample_weights=torch.ones(n))


def rl(loss: str, epochs: int) -> RLConfig:
    return RLConfig(algorithm="grpo" if loss == "grpo" else "dapo", lr=2e-2, grad_clip=1.0,
                    ppo_epochs=epochs, max_new_tokens=14)


def setup(seed: int = 0):
    m = shard_model(model(seed))
    return m, build_optimizer(m, 2e-2)


def one_sample(b: PolicyBatch) -> PolicyBatch:
    return select_rows(b, (b.sample_ids == 0).nonzero(as_tuple=True)[0])


def train(m, opt, loss: str, epochs: int, micro: int, steps: range,
          shrink=lambda b: b) -> list[float]:
    cfg = rl(loss, epochs)
    return [sharded_policy_update(m, opt, shrink(batch(s)), cfg, loss, micro_batch_tokens=micro)
            ["loss/total"] for s in steps]


def parity_runs() -> dict:
    """Losses and final full weights of every run in RUNS (rank 0's copy; {} elsewhere)."""
    out = {}
    for name, (loss, epochs, micro) in RUNS.items():
        m, opt = setup()
        shrink = one_sample if name.endswith("one_sample") else (lambda b: b)
        losses = train(m, opt, loss, epochs, micro, range(STEPS), shrink)
        out[name] = {"losses": losses, "weights": full_model_state(m)}
    return out


def save_and_continue(root: Path, tag: str) -> dict:
    """Save at RESUME_AT into ``root/ck_<tag>``, then run on to RESUME_STEPS."""
    m, opt = setup()
    train(m, opt, "dapo", 2, 0, range(RESUME_AT))
    save_sharded(root / f"ck_{tag}", m, opt, {"step": RESUME_AT})
    out = {"saved_model": full_model_state(m), "saved_optim": full_optimizer_state(m, opt)}
    train(m, opt, "dapo", 2, 0, range(RESUME_AT, RESUME_STEPS))
    out["uninterrupted"] = full_model_state(m)
    return out


def resume_from(path: Path) -> dict:
    """Load a checkpoint into a model of other initial weights and run on to RESUME_STEPS."""
    m, opt = setup(seed=7)  # the load must replace every weight and moment
    meta = load_sharded(path, m, opt)
    out = {"loaded_model": full_model_state(m), "loaded_optim": full_optimizer_state(m, opt)}
    train(m, opt, "dapo", 2, 0, range(meta["step"], RESUME_STEPS))
    out["resumed"] = full_model_state(m)
    return out


def two_rank_main(rank: int, root: str) -> None:
    """The spawned side: every scenario on 2 ranks; rank 0 writes ``results.pt``."""
    root_p = Path(root)
    results = {"world_size": current().world_size, "parity": parity_runs(),
               "run": save_and_continue(root_p, "2"), "own": resume_from(root_p / "ck_2"),
               "other": resume_from(root_p / "ck_1")}
    if rank == 0:
        torch.save(results, root_p / "results.pt")
