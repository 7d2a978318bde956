"""The phases of a training run other than RL itself: the model, the SFT cold start, DPO.

Each phase is a plain function over (model, tokenizer, config) that a pipeline calls in
order; none of them knows about progress bars or run folders (the caller passes callbacks).

- :func:`load_policy`: the tiny model (built here, offline) or any local HF folder (a causal
  LM, or a vision-language model with its processor bound: ``models/loading.py``);
- :func:`run_sft`: supervised cold start on reference demonstrations — each domain's
  reference solver answers freshly generated tasks of training seeds, so no data set is
  needed. A mix with a multi-turn domain trains on its reference *trajectories* (tool calls,
  the env's real tool results, final answer) played through the episode engine, in the token
  layout RL trains, packed several per row (:mod:`posttrain.trainer.sft_multiturn`); a mix of
  single-turn domains only keeps the unpacked one-answer batches it always had (so the
  quickstart's published figures stay reproducible); a vision-language policy trains on
  single-turn demonstrations with their images (:mod:`posttrain.trainer.sft_vision`);
- :func:`run_dpo`: preference optimisation on pairs built from verified groups (best answer
  of a group against its worst), with a frozen reference.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from posttrain.core.config import RunConfig
from posttrain.domains.base import get_domain
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.models.loading import load_model, processor_of
from posttrain.models.tiny import build_tiny_model
from posttrain.rollout import run_groups
from posttrain.trainer.lora import apply_lora, sync_weights
from posttrain.trainer.precision import apply_model_knobs
from posttrain.trainer.dpo import build_dpo_batch, dpo_step, pairs_from_groups
from posttrain.trainer.optim import build_optimizer, optimizer_from_config
from posttrain.trainer.reference_loop import frozen_reference
from posttrain.trainer.sft import build_sft_batch, pad_id_of, sft_step
from posttrain.trainer.sft_multiturn import check_training_seeds, multiturn_sft_batch
from posttrain.trainer.tasks import TaskStream
from posttrain.trainer.validate import episode_limits

StepFn = Callable[[int, dict[str, float]], None]


def load_policy(cfg: RunConfig) -> tuple[Any, Any]:
    """``(model, tokenizer)``: ``cfg.model.path`` when set, else a fresh tiny model; with
    ``model.activation_checkpointing`` / ``model.autocast`` applied and, with ``model.lora``,
    wrapped in its LoRA adapter (:mod:`posttrain.trainer.lora`)."""
    if cfg.model.path:
        model, tokenizer = load_model(cfg.model.path, dtype=cfg.model.dtype)
    else:
        model, tokenizer = build_tiny_model(cfg.model.tiny, seed=cfg.seed)
    apply_model_knobs(model, cfg.model)
    if cfg.model.lora is not None:
        model = apply_lora(model, cfg.model.lora, seed=cfg.seed)
    return model, tokenizer


def demonstrations(stream: TaskStream, n: int) -> list[tuple[Any, str]]:
    """``n`` (prompt messages, reference answer) pairs from the stream's next tasks."""
    out = []
    for task in stream.next(n):
        out.append((list(task.prompt), get_domain(task.domain).solve(task)))
    return out


def _has_multiturn(cfg: RunConfig) -> bool:
    return any(callable(getattr(get_domain(d.id), "make_env", None)) for d in cfg.domains)


def _multiturn_batch_fn(model: Any, tokenizer: Any, cfg: RunConfig, stream: TaskStream):
    """Step -> (packed batch or None, stats) over the stream's next training tasks, rendered
    as the RL backend renders them and played under the RL run's budgets."""
    renderer = HFBackend(model, tokenizer, fast=False)  # RL's prompt rendering, no copy
    limits = episode_limits(cfg.episode)
    max_length = int(getattr(model.config, "max_position_embeddings", None) or 1 << 16)

    def batch() -> tuple[Any, dict[str, float]]:
        tasks = stream.next(cfg.sft.batch_size)
        check_training_seeds(tasks, cfg.eval.seed_offset)
        return multiturn_sft_batch(renderer, tasks, pad_id_of(tokenizer), max_length,
                                   max_new_tokens=cfg.rl.max_new_tokens, limits=limits)
    return batch


def _vision_batch_fn(model: Any, cfg: RunConfig, stream: TaskStream):
    """A vision-language policy's batch function (its prompts rendered with their images by
    the vlm backend, :mod:`posttrain.trainer.sft_vision`), or None for a text policy."""
    processor = processor_of(model)
    if processor is None:
        return None
    from posttrain.inference.vlm import VLMBackend
    from posttrain.trainer.sft_vision import vision_sft_batch

    renderer = VLMBackend(model, processor)  # renders only: the policy module itself, no copy
    max_length = int(getattr(getattr(model.config, "text_config", model.config),
                             "max_position_embeddings", None) or 1 << 16)
    return lambda: vision_sft_batch(renderer, stream.next(cfg.sft.batch_size),
                                    pad_id_of(processor.tokenizer), max_length)


def run_sft(model: Any, tokenizer: Any, cfg: RunConfig, *, on_step: StepFn | None = None,
            progress: Callable[[int], None] | None = None) -> dict[str, float]:
    """``cfg.sft.steps`` steps of cross-entropy on reference demonstrations; returns the last
    metrics. A step whose demonstrations all fail or are too long for the model's positions
    does not update (its ``sft/*`` counts are still logged)."""
    stream = TaskStream(cfg.domains, seed=cfg.seed + 1)
    optimizer, schedule = optimizer_from_config(model, cfg.sft, schedule="cosine",
                                                min_lr_ratio=0.1)
    multi = _multiturn_batch_fn(model, tokenizer, cfg, stream) if _has_multiturn(cfg) else None
    vision = _vision_batch_fn(model, cfg, stream)
    metrics: dict[str, float] = {}
    for step in range(cfg.sft.steps):
        if vision is not None:
            batch = vision()
            metrics = dict(batch.stats)
            if batch.input_ids.shape[0]:
                metrics.update(sft_step(model, optimizer, batch, lr_scheduler=schedule))
            elif schedule is not None:
                schedule.step()
        elif multi is None:
            batch = build_sft_batch(tokenizer, demonstrations(stream, cfg.sft.batch_size))
            metrics = sft_step(model, optimizer, batch, lr_scheduler=schedule)
        else:
            packed, stats = multi()
            metrics = dict(stats)
            if packed is not None:
                metrics.update(sft_step(model, optimizer, packed, lr_scheduler=schedule))
            elif schedule is not None:
                schedule.step()  # the schedule follows the step count, trained or not
        if on_step is not None:
            on_step(step + 1, metrics)
        if progress is not None:
            progress(step + 1)
    model.eval()
    return metrics


def run_dpo(model: Any, backend: InferenceBackend, cfg: RunConfig, *, pad_id: int,
            on_step: StepFn | None = None) -> dict[str, float]:
    """``cfg.dpo.steps`` DPO steps on best-vs-worst pairs of freshly sampled, verified groups."""
    ref = frozen_reference(model)
    optimizer = build_optimizer(model, cfg.dpo.lr)
    stream = TaskStream(cfg.domains, seed=cfg.seed + 2)
    params = SamplingParams(n=cfg.rl.group_size, temperature=cfg.rl.temperature,
                            max_new_tokens=cfg.rl.max_new_tokens, seed=cfg.seed)
    metrics: dict[str, float] = {}
    for step in range(cfg.dpo.steps):
        pairs = []
        for _ in range(4):  # groups with a tie carry no preference; sample until some do
            pairs += pairs_from_groups(run_groups(backend, stream.next(cfg.dpo.batch_size), params,
                                                  limits=episode_limits(cfg.episode)))
            if pairs:
                break
        if not pairs:
            continue
        metrics = dpo_step(model, optimizer, build_dpo_batch(pairs, pad_id), beta=cfg.dpo.beta,
                           ref_model=ref)
        backend.load_weights(getattr(backend, "policy_version", 0) + 1, sync_weights(model))
        if on_step is not None:
            on_step(step + 1, metrics)
    model.eval()
    return metrics


def set_threads(n: int) -> None:
    """Pin torch's intra-op threads: on small shared machines 1 thread is the stable choice."""
    torch.set_num_threads(n)
