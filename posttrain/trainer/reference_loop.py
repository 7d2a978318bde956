"""The synchronous reference RL loop: sample, verify, compute advantages, update, sync weights.

Read it top to bottom; it is the definition of what one RL step *means* in posttrain. The
asynchronous loop (:mod:`posttrain.trainer.loop`) must reproduce it exactly when its
staleness bound is 0.

One step:
1. draw ``prompts_per_step`` tasks from the :class:`~posttrain.trainer.tasks.TaskStream`;
2. play ``group_size`` episodes per task with the inference backend (behaviour policy = the
   current weights), each verified on its live env (the one episode engine, with groups
   hit by an infrastructure failure played again: :func:`posttrain.scheduler.rollouts.play_scheduled`);
3. filter (:class:`~posttrain.scheduler.filters.GroupFilter`, the run's ``filters``
   section): failed, truncated or duplicate trajectories and groups with too few usable
   samples or — DAPO's dynamic filter — all-equal rewards (no group-relative signal), each
   drop counted in ``filter/*``;
4. advantages per the algorithm's estimator; a padded :class:`PolicyBatch`;
5. ``ppo_epochs`` passes of the algorithm's loss against the behaviour logprobs, with
   gradient clipping; an optional KL term to a frozen reference model (k3);
6. bump the policy version and copy the new weights into the backend (in-process weight
   sync: the embedded default; other transports live in ``weight_sync``).

Deviations from the papers, on purpose: DAPO's refill of filtered groups is not done here
(the step trains on fewer groups instead, which keeps one step = one sampling round); the
reference model for the KL term is the policy at the start of RL.

What it guarantees: a step never crashes on a bad rollout (failed trajectories are excluded
from the loss and counted in ``rollout/unusable``); ``state_dict``/``load_state_dict``
capture everything needed to resume exactly (with :mod:`checkpoint`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from posttrain.core.config import FilterConfig, RLConfig
from posttrain.core.types import TrajectoryGroup
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.filters import GroupFilter
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.advantages import compute_advantages
from posttrain.trainer.batch import PolicyBatch, build_policy_batch, without_zero_advantage_rows
from posttrain.trainer.shared_prefix import frozen_policy_logprobs, policy_logprobs
from posttrain.trainer.merge_rows import merge_identical_rows
from posttrain.trainer.losses import LOSSES, LossConfig, get_algorithm
from posttrain.trainer.lora import frozen_copy, sync_weights
from posttrain.trainer.tasks import TaskStream
from posttrain.trainer.validate import episode_limits  # noqa: F401  (moved there; old import path)

MetricsFn = Callable[[int, dict[str, float]], None]


@dataclass
class RLState:
    """What changes from step to step (and what a checkpoint saves besides the weights)."""

    step: int = 0
    policy_version: int = 0
    samples_seen: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def sampling_params(rl: RLConfig, seed: int | None) -> SamplingParams:
    return SamplingParams(n=rl.group_size, temperature=rl.temperature, top_p=rl.top_p,
                          max_new_tokens=rl.max_new_tokens, seed=seed)


def rollout_metrics(groups: list[TrajectoryGroup]) -> dict[str, float]:
    """Reward per domain, overall, and rollout health counters."""
    by_domain: dict[str, list[float]] = defaultdict(list)
    unusable = truncated = tokens = n = 0
    for g in groups:
        for t in g.trajectories:
            n += 1
            unusable += int(not t.usable)
            truncated += int(t.stop_reason == "max_tokens")
            tokens += t.num_action_tokens
            if t.usable:
                by_domain[g.task.domain].append(t.reward)
    out = {f"reward/{d}": sum(r) / len(r) for d, r in by_domain.items()}
    rewards = [r for rs in by_domain.values() for r in rs]
    out["reward/mean"] = sum(rewards) / len(rewards) if rewards else 0.0
    out["rollout/unusable"] = float(unusable)
    out["rollout/truncated_frac"] = truncated / max(1, n)
    out["rollout/mean_tokens"] = tokens / max(1, n)
    out["rollout/samples"] = float(n)
    return out


def policy_update(model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: PolicyBatch,
                  rl: RLConfig, loss_name: str, ref_model: torch.nn.Module | None = None,
                  lr_scheduler: Any = None, policy_version: int = 0) -> dict[str, float]:
    """``ppo_epochs`` optimizer steps of the algorithm's loss on one batch.

    When samples are stale (sampled by an older policy) or there are several epochs, the
    trainer's own logprobs at the start of the step become the PPO "old" policy and the
    behaviour/old mismatch is corrected by a truncated importance weight; fresh single-epoch
    batches skip that extra forward pass (old and behaviour policies are then the same).
    """
    loss_fn = LOSSES.get(loss_name)
    loss_cfg = LossConfig.from_rl(rl)
    share, T = rl.shared_prefix, rl.temperature
    rows = batch.num_rows
    if ref_model is None or rl.kl_coef == 0:  # without a KL term, zero-advantage rows are inert
        batch = without_zero_advantage_rows(batch)
    inert = rows - batch.num_rows
    batch = merge_identical_rows(batch)  # identical samples computed once, weighted (exact)
    if ref_model is not None and rl.kl_coef > 0:
        batch = batch.replace(ref_logprobs=frozen_policy_logprobs(ref_model, batch, T, share=share))
    stale = batch.num_rows and int(batch.policy_versions.min()) < policy_version
    if rl.ppo_epochs > 1 or stale:
        batch = batch.replace(old_logprobs=frozen_policy_logprobs(model, batch, T, share=share))
    model.train()
    metrics: dict[str, float] = {}
    lr = float(optimizer.param_groups[0]["lr"])  # the rate this step uses (the scheduler moves it after)
    for _ in range(rl.ppo_epochs):
        # Each distinct prompt runs once, not once per sample (exact; see shared_prefix.py).
        logprobs, entropy = policy_logprobs(model, batch, T, share=share)
        loss, metrics = loss_fn(batch, logprobs, loss_cfg, entropy=entropy)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        metrics["loss/grad_norm"] = float(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                                        rl.grad_clip))
        optimizer.step()
    if lr_scheduler is not None:
        lr_scheduler.step()
    metrics["batch/inert_rows_skipped"] = float(inert)
    metrics["batch/identical_rows_merged"] = float(rows - inert - batch.num_rows)
    metrics["loss/lr"] = lr
    return metrics


def rl_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, backend: InferenceBackend,
            stream: TaskStream, rl: RLConfig, state: RLState, *, pad_id: int, seed: int = 0,
            ref_model: torch.nn.Module | None = None, lr_scheduler: Any = None,
            on_groups: Callable[[list[TrajectoryGroup]], None] | None = None,
            limits: EpisodeLimits | None = None, filters: FilterConfig | None = None,
            ) -> dict[str, float]:
    """One synchronous RL step; mutates ``model``, ``optimizer``, ``stream``, ``state``.

    ``on_groups`` sees the step's verified groups, before filtering (e.g. to keep them for
    an audit)."""
    algo = get_algorithm(rl.algorithm)
    t0 = time.perf_counter()
    tasks = stream.next(rl.prompts_per_step)
    groups, _, retries = play_scheduled(backend, tasks,
                                        sampling_params(rl, seed * 1_000_003 + state.step),
                                        limits=limits)
    t_sample = time.perf_counter() - t0
    metrics = {**rollout_metrics(groups), **retries}
    if on_groups is not None:
        on_groups(groups)
    chosen = step_filter(rl, filters).apply(groups)
    metrics.update(chosen.metrics())
    kept = chosen.kept
    t1 = time.perf_counter()
    batch = build_policy_batch(kept, compute_advantages(kept, algo.advantage), pad_id) if kept else None
    if batch is not None and batch.num_rows:
        metrics.update(batch.stats)
        metrics.update(policy_update(model, optimizer, batch, rl, algo.loss, ref_model,
                                     lr_scheduler, state.policy_version))
    else:  # nothing trainable this step (all groups filtered, or no policy tokens at all)
        metrics["loss/skipped"] = 1.0
    t_update = time.perf_counter() - t1
    state.step += 1
    state.policy_version += 1
    state.samples_seen += sum(len(g.trajectories) for g in groups)
    t2 = time.perf_counter()
    backend.load_weights(state.policy_version, sync_weights(model))
    metrics.update({"time/sample_s": t_sample, "time/update_s": t_update,
                    "time/sync_s": time.perf_counter() - t2,
                    "time/step_s": time.perf_counter() - t0,
                    "rollout/policy_version": float(state.policy_version),
                    "rollout/samples_seen": float(state.samples_seen)})
    return metrics


def step_filter(rl: RLConfig, filters: FilterConfig | None) -> GroupFilter:
    """The run's filters, zero-variance included when the config or the algorithm asks."""
    algo = get_algorithm(rl.algorithm)
    return GroupFilter(filters, zero_variance=rl.filter_zero_variance or algo.filter_zero_variance)


def frozen_reference(model: torch.nn.Module) -> torch.nn.Module:
    """A frozen copy of the policy (the KL reference; a LoRA policy's shares its frozen base)."""
    return frozen_copy(model)


def train_rl(model: torch.nn.Module, optimizer: torch.optim.Optimizer, backend: InferenceBackend,
             stream: TaskStream, rl: RLConfig, *, pad_id: int, seed: int = 0,
             state: RLState | None = None, on_step: MetricsFn | None = None,
             checkpoint: Callable[[RLState], None] | None = None, checkpoint_every: int = 0,
             lr_scheduler: Any = None, progress: Callable[[int], None] | None = None,
             on_groups: Callable[[list[TrajectoryGroup]], None] | None = None,
             limits: EpisodeLimits | None = None, ref_model: torch.nn.Module | None = None,
             filters: FilterConfig | None = None) -> RLState:
    """Run ``rl.steps`` steps (resuming from ``state.step``).

    ``ref_model``: the KL reference; default a frozen copy of ``model`` as it is now, which is
    right only at the start of RL — a resumed run passes the reference it saved then."""
    state = state or RLState()
    if ref_model is None and rl.kl_coef > 0:
        ref_model = frozen_reference(model)
    while state.step < rl.steps:
        metrics = rl_step(model, optimizer, backend, stream, rl, state, pad_id=pad_id, seed=seed,
                          ref_model=ref_model, lr_scheduler=lr_scheduler, on_groups=on_groups,
                          limits=limits, filters=filters)
        if on_step is not None:
            on_step(state.step, metrics)
        if checkpoint is not None and checkpoint_every and state.step % checkpoint_every == 0:
            checkpoint(state)
        if progress is not None:
            progress(state.step)
    return state
