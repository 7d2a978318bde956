"""Checkpoints: bitwise-exact resume (weights, AdamW, LR schedule, RNGs), atomicity, discovery."""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from trainer_helpers import char_tokenizer, group, tiny_llama, traj

from posttrain.trainer import checkpoint as ckpt
from posttrain.trainer.advantages import compute_advantages
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.checkpoint import (CheckpointError, checkpoint_path, latest_checkpoint,
                                          load_checkpoint, prune_checkpoints, save_checkpoint)
from posttrain.trainer.logprobs import token_logprobs_and_entropy
from posttrain.trainer.losses import LOSSES, LossConfig
from posttrain.trainer.optim import build_lr_schedule, build_optimizer

REPO = Path(__file__).resolve().parents[2]


def _fresh(seed):
    # attention dropout makes the forward pass itself consume the torch RNG
    model = tiny_llama(seed, attention_dropout=0.1).train()
    opt = build_optimizer(model, lr=3e-3, weight_decay=0.01)
    sched = build_lr_schedule(opt, warmup_steps=3, total_steps=10, kind="cosine")
    return model, opt, sched


def _rl_step(model, opt, sched, state):
    """One GRPO step on synthetic rollouts drawn from python, numpy and torch RNGs."""
    n = random.randint(2, 4)
    trajs = []
    for _ in range(n):
        length = int(np.random.randint(2, 5))
        toks = torch.randint(1, 32, (length,)).tolist()
        trajs.append(traj([1, 2], toks, float(random.random() > 0.5), logprobs=[-3.0] * length))
    g = group(*trajs)
    batch = build_policy_batch([g], compute_advantages([g], "grpo"), 0)
    opt.zero_grad(set_to_none=True)
    lp, ent = token_logprobs_and_entropy(model, batch)
    loss, _ = LOSSES.get("grpo")(batch, lp, LossConfig(), entropy=ent)
    loss.backward()
    opt.step()
    sched.step()
    state["cursor"] += n
    return loss.item()


def test_resume_is_bitwise_exact(tmp_path):
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    model, opt, sched = _fresh(0)
    state = {"cursor": 0}
    for _ in range(3):
        _rl_step(model, opt, sched, state)
    path = save_checkpoint(checkpoint_path(tmp_path, 3), model=model, tokenizer=char_tokenizer(),
                           optimizer=opt, lr_scheduler=sched, step=3, policy_version=7,
                           data_state=dict(state), extra={"curriculum": {"cell": [1, 2]}})
    losses_a = [_rl_step(model, opt, sched, state) for _ in range(3)]
    params_a = [p.detach().clone() for p in model.parameters()]

    # a different process state: other weights, other RNG positions
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    model_b, opt_b, sched_b = _fresh(123)
    restored = load_checkpoint(latest_checkpoint(tmp_path), model_b, opt_b, sched_b)
    assert (restored.step, restored.policy_version) == (3, 7)
    assert restored.extra == {"curriculum": {"cell": [1, 2]}} and restored.path == path
    state_b = dict(restored.data_state)
    losses_b = [_rl_step(model_b, opt_b, sched_b, state_b) for _ in range(3)]
    assert losses_a == losses_b  # exact float equality, not approx
    assert all(torch.equal(a, b) for a, b in zip(params_a, model_b.parameters()))
    assert state_b == state and sched_b.get_last_lr() == sched.get_last_lr()
    assert (path / "tokenizer").is_dir() and (path / "model" / "config.json").is_file()


def test_tied_embeddings_load_and_mismatched_models_are_refused(tmp_path):
    tied = tiny_llama(0, tie_word_embeddings=True)
    save_checkpoint(tmp_path / "c", model=tied, step=1, policy_version=1)
    other = tiny_llama(5, tie_word_embeddings=True)
    load_checkpoint(tmp_path / "c", other)
    assert all(torch.equal(a, b) for a, b in zip(tied.state_dict().values(), other.state_dict().values()))
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "c", tiny_llama(0, num_hidden_layers=3))
    with pytest.raises(CheckpointError, match="optimizer"):
        load_checkpoint(tmp_path / "c", other, build_optimizer(other, lr=1e-3))


def test_failed_save_leaves_the_previous_checkpoint_untouched(tmp_path, monkeypatch):
    model = tiny_llama(0)
    save_checkpoint(checkpoint_path(tmp_path, 1), model=model, step=1, policy_version=1)

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(ckpt.torch, "save", boom)
    for target in (checkpoint_path(tmp_path, 2), checkpoint_path(tmp_path, 1)):  # new, overwrite
        with pytest.raises(OSError, match="disk full"):
            save_checkpoint(target, model=model, step=2, policy_version=2)
    assert latest_checkpoint(tmp_path) == checkpoint_path(tmp_path, 1)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_00000001"]
    assert load_checkpoint(checkpoint_path(tmp_path, 1), tiny_llama(3)).step == 1


def test_latest_ignores_incomplete_and_temporary_folders_and_prune_keeps_newest(tmp_path):
    model = tiny_llama(0)
    for step in (5, 10, 2):
        save_checkpoint(checkpoint_path(tmp_path, step), model=model, step=step, policy_version=step)
    (tmp_path / "checkpoints" / "step_00000099").mkdir()  # no meta.json: a foreign/incomplete dir
    (tmp_path / "checkpoints" / ".step_00000100.tmp-1-abc").mkdir()
    assert latest_checkpoint(tmp_path) == checkpoint_path(tmp_path, 10)
    assert latest_checkpoint(tmp_path / "nothing") is None
    deleted = prune_checkpoints(tmp_path, keep_last=1)
    assert sorted(p.name for p in deleted) == ["step_00000002", "step_00000005"]
    assert latest_checkpoint(tmp_path) == checkpoint_path(tmp_path, 10)


_SAVER = textwrap.dedent("""
    import torch
    torch.set_num_threads(1)
    from posttrain.trainer.checkpoint import checkpoint_path, save_checkpoint
    # a plain module keeps the child's start-up short; the atomic-write path is the same
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))
    step = 0
    while True:
        step += 1
        with torch.no_grad():
            for p in model.parameters():
                p.fill_(float(step))
        # alternate new folders and overwrites of the same folder
        save_checkpoint(checkpoint_path({run!r}, step if step % 2 else 0), model=model,
                        step=step, policy_version=step)
        print(step, flush=True)
""")


def test_kill_during_saves_never_leaves_a_broken_latest(tmp_path):
    run = tmp_path / "run"
    code = _SAVER.format(run=str(run))
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout.readline()  # at least one save finished
        time.sleep(0.3 + random.random() * 0.3)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    latest = latest_checkpoint(run)
    assert latest is not None
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))
    state = load_checkpoint(latest, model)
    # weights and metadata come from the same save
    assert all(torch.all(p == float(state.step)) for p in model.parameters())
    assert json.loads((latest / "meta.json").read_text())["step"] == state.step
