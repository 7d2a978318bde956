"""Pre-training of a foundation: causal LM loss on the corpus rows, with exact resume.

What it is: a fresh ``LlamaForCausalLM`` of the recipe's shape (vocabulary = the corpus
tokenizer's, initialised from ``training.seed``) trained on ``tokens.npy`` rows: AdamW
(``posttrain.trainer.optim``: matrices decayed, vectors not) with linear warm-up then cosine
decay to ``min_lr_ratio``, gradient clipping, a rich progress bar, periodic checkpoints
through ``posttrain.trainer.checkpoint`` (weights, optimizer, schedule, RNG, step — atomic,
size- and crc-checked) and a validation loss on a held-out split of the rows.

Data order is a pure function of (seed, step): sample ``p = step * batch + j`` is row
``perm_e[p mod n]`` of the training split, ``perm_e`` a permutation seeded by (seed, epoch
``e = p div n``). A resume therefore needs only the step, and a build killed at any point and
resumed from its last checkpoint ends with bit-identical weights (tested).

The validation split is ``val_fraction`` of the rows (a permutation seeded by the corpus,
not by the training seed, so builds of one corpus are compared on the same rows); the
unigram baseline is the cross-entropy of the training rows' token frequencies (add-one)
on those rows — what a model that ignores context scores.

Not: multi-process or GPU-specific (it runs where torch runs; ``device`` picks the device),
mixed precision, or gradient accumulation.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from posttrain.core.errors import ConfigError
from posttrain.trainer.checkpoint import (checkpoint_path, latest_checkpoint, load_checkpoint,
                                          prune_checkpoints, save_checkpoint)
from posttrain.trainer.optim import build_lr_schedule, build_optimizer

from .recipe import FoundationRecipe, ShapeSpec, TrainingSpec

VAL_SPLIT_SEED = 1234  # fixed: the split depends on the corpus only


class BuildInterrupted(RuntimeError):
    """Raised by ``stop_after`` (a simulated kill) once that many steps ran in this call."""


def build_model(shape: ShapeSpec, tokenizer: Any, seed: int):
    """A fresh Llama of ``shape`` for ``tokenizer``; deterministic in ``seed``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         use_cache=True, **shape.model_dump())
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    gen = model.generation_config
    gen.pad_token_id, gen.bos_token_id, gen.eos_token_id = (
        tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    return model.to(torch.float32)


def split_rows(n_rows: int, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """``(train, val)`` row indices; at least one row each."""
    perm = np.random.default_rng(VAL_SPLIT_SEED).permutation(n_rows)
    n_val = min(n_rows - 1, max(1, int(round(n_rows * val_fraction))))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


class Sampler:
    """Rows of step ``s``: a pure function of (seed, s) over the training split."""

    def __init__(self, train_rows: np.ndarray, batch_size: int, seed: int):
        self.rows, self.batch, self.seed = train_rows, batch_size, seed
        self._perm: dict[int, np.ndarray] = {}

    def _permutation(self, epoch: int) -> np.ndarray:
        if epoch not in self._perm:
            self._perm = {epoch: np.random.default_rng([self.seed, epoch]).permutation(len(self.rows))}
        return self._perm[epoch]

    def indices(self, step: int) -> np.ndarray:
        n = len(self.rows)
        out = []
        for p in range(step * self.batch, (step + 1) * self.batch):
            out.append(self.rows[self._permutation(p // n)[p % n]])
        return np.asarray(out)


def _batch(tokens: np.ndarray, idx: np.ndarray, device: str) -> torch.Tensor:
    return torch.from_numpy(np.asarray(tokens[idx], dtype=np.int64)).to(device)


@torch.no_grad()
def validation_loss(model: Any, tokens: np.ndarray, val_rows: np.ndarray, batch_size: int,
                    device: str = "cpu") -> float:
    """Mean next-token cross-entropy (nats) over the validation rows."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(val_rows), batch_size):
        x = _batch(tokens, val_rows[i:i + batch_size], device)
        logits = model(input_ids=x).logits[:, :-1].float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 x[:, 1:].reshape(-1), reduction="sum")
        total, count = total + float(loss), count + x[:, 1:].numel()
    model.train(was_training)
    return total / max(1, count)


def unigram_loss(tokens: np.ndarray, train_rows: np.ndarray, val_rows: np.ndarray, vocab: int) -> float:
    """Cross-entropy (nats) of add-one unigram frequencies of the training rows on the val rows."""
    counts = np.bincount(np.asarray(tokens[train_rows]).ravel(), minlength=vocab).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    targets = np.asarray(tokens[val_rows])[:, 1:].ravel()
    return float(-logp[targets].mean())


@dataclass
class PretrainResult:
    model: Any
    steps: int
    train_loss: float
    val_loss: float
    unigram_loss: float
    tokens_trained: int
    train_s: float
    tokens_per_s: float
    resumed_from: int
    history: list[tuple[int, float]] = field(default_factory=list)


def _checkpoint(run_dir: Path, spec: TrainingSpec, model: Any, opt: Any, sched: Any, step: int,
                history: list, corpus_hash: str | None) -> None:
    save_checkpoint(checkpoint_path(run_dir, step), model=model, optimizer=opt, lr_scheduler=sched,
                    step=step, policy_version=0, data_state={"samples": step * spec.batch_size},
                    extra={"history": list(history), "corpus_hash": corpus_hash})
    prune_checkpoints(run_dir, spec.keep_checkpoints)


def pretrain(recipe: FoundationRecipe, tokens: np.ndarray, tokenizer: Any, run_dir: str | Path, *,
             progress: bool = True, device: str = "cpu", stop_after: int | None = None,
             corpus_hash: str | None = None, log: Callable[[str], None] | None = None) -> PretrainResult:
    """Train (or resume from ``run_dir``'s last checkpoint) for ``training.steps()`` steps.
    A checkpoint written for another ``corpus_hash`` is refused, never resumed on new data."""
    spec, run_dir = recipe.training, Path(run_dir)
    torch.set_num_threads(spec.threads)
    steps = spec.steps()
    train_rows, val_rows = split_rows(len(tokens), spec.val_fraction)
    val_rows = val_rows[:spec.val_max_sequences]
    model = build_model(recipe.model, tokenizer, spec.seed).to(device)
    opt = build_optimizer(model, spec.lr, spec.weight_decay, betas=(spec.beta1, spec.beta2))
    sched = build_lr_schedule(opt, spec.warmup_steps, steps, "cosine", spec.min_lr_ratio)
    start, history = 0, []
    last = latest_checkpoint(run_dir)
    if last is not None:
        state = load_checkpoint(last, model, opt, sched)
        if state.extra.get("corpus_hash") != corpus_hash:
            raise ConfigError(f"{last} was trained on corpus {str(state.extra.get('corpus_hash'))[:12]}, "
                              f"not {str(corpus_hash)[:12]}; delete {run_dir} to start over")
        start, history = state.step, list(state.extra.get("history", []))
        (log or (lambda _m: None))(f"resuming the build from step {start} ({last})")
    else:
        torch.manual_seed(spec.seed)
    sampler = Sampler(train_rows, spec.batch_size, spec.seed)
    model.train()
    t0 = time.perf_counter()
    with _bar(progress, steps, start) as bar:
        for step in range(start, steps):
            x = _batch(tokens, sampler.indices(step), device)
            loss = model(input_ids=x, labels=x).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), spec.grad_clip)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            history.append((step + 1, float(loss.detach())))
            done = step + 1
            bar(done, history[-1][1])
            if spec.eval_every and done % spec.eval_every == 0 and done < steps:
                val = validation_loss(model, tokens, val_rows, spec.batch_size, device)
                (log or (lambda _m: None))(f"step {done}: train {history[-1][1]:.3f} val {val:.3f}")
            if spec.checkpoint_every and done % spec.checkpoint_every == 0 and done < steps:
                _checkpoint(run_dir, spec, model, opt, sched, done, history, corpus_hash)
            if stop_after is not None and done - start >= stop_after and done < steps:
                raise BuildInterrupted(f"stopped after step {done}")
    train_s = time.perf_counter() - t0
    trained = (steps - start) * spec.batch_size * spec.seq_len
    tail = [v for _, v in history[-10:]]
    model.eval()
    return PretrainResult(
        model=model, steps=steps, train_loss=float(np.mean(tail)) if tail else math.nan,
        val_loss=validation_loss(model, tokens, val_rows, spec.batch_size, device),
        unigram_loss=unigram_loss(tokens, train_rows, val_rows, len(tokenizer)),
        tokens_trained=steps * spec.batch_size * spec.seq_len, train_s=train_s,
        tokens_per_s=trained / train_s if train_s > 0 else 0.0, resumed_from=start, history=history)


class _bar:
    """A rich progress bar over the steps showing the running loss (silent when disabled)."""

    def __init__(self, enabled: bool, total: int, start: int):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self._p = Progress(TextColumn("[bold]pre-train[/] loss {task.fields[loss]}"), BarColumn(),
                           MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                           disable=not enabled)
        self._task = self._p.add_task("pretrain", total=total, completed=start, loss="-")

    def __enter__(self) -> Callable[[int, float], None]:
        self._p.__enter__()
        return lambda done, loss: self._p.update(self._task, completed=done, loss=f"{loss:.3f}")

    def __exit__(self, *exc: object) -> None:
        self._p.__exit__(*exc)
