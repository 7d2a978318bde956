"""The asynchronous RL loop: rollout producers and the trainer, decoupled by a bounded queue.

``train_async`` has the signature of :func:`~posttrain.trainer.reference_loop.train_rl` plus
``config`` (:class:`AsyncConfig`), and runs the same step — the same tasks, sampling seeds,
advantages, batch and ``policy_update`` — with sampling, env execution and verification
moved off the trainer.

Concurrent parts:
1. **the trainer** (the calling thread): submits jobs, takes results in step order, drops or
   down-weights stale groups, runs ``policy_update``, publishes the new weights;
2. **producers** (a :class:`~posttrain.trainer.producers.ProducerPool`: threads, processes or
   Ray actors): each waits for the weights a job needs, pulls them into its own backend and
   samples; at most ``max_inflight`` jobs (default ``max_policy_lag + 1``) are out at once —
   the bounded queue between the two sides;
3. **env workers** (a thread pool per producer): tool and sandbox steps of live episodes;
4. **verifier workers** (the reward service): ``batch_evaluate`` of finished trajectories;
5. **the weight sync** (:mod:`~posttrain.trainer.weight_sync`) carrying versions across.

Shutdown order (normal end, an exception or KeyboardInterrupt alike): the trainer stops
submitting; the pool stops taking jobs and its producers finish or abandon the job in hand
(threads joined, processes terminated after the timeout); then the env and verifier pools
shut down; last, the caller's ``backend`` gets the final weights.

Staleness: every turn records the version that sampled it; a group whose oldest turn is more
than ``max_policy_lag`` versions behind the trainer is dropped (``stale: drop``, counted in
``async/dropped_stale``) or its samples weighted ``stale_weight ** (lag - max_policy_lag)``
(``stale: downweight``). Stale batches are corrected by the truncated importance weight
against the behaviour logprobs (``policy_update`` with ``policy_version``; ``rl.tis_cap``).
With ``max_policy_lag: 0`` job ``k`` is sampled with exactly version ``k`` and the metrics
(``time/*`` aside) equal the reference loop's on the same seed — a test checks it.

Schedule (``async_rl.schedule``): ``deterministic`` (the default) samples the job of step
``s`` with exactly version ``behaviour_version(s) = max(first, v_s - max_policy_lag)``
(``v_s``: the version step ``s`` trains, ``first``: the version RL started from; a smaller
``max_inflight`` lowers the lag: :func:`schedule_lag`), whichever producer takes it and when; the weight sync holds that ring of ``lag + 1`` versions, and
:func:`behaviour_weights` hands a checkpoint the older ones a resume needs. So a seed fixes
the final weights bit for bit, and a resumed run samples its first jobs with the versions an
uninterrupted one would. ``free_running`` lets a job start once version
``v_s - max_policy_lag`` exists (``gate``) and samples it with the newest weights then
available, and allows ``partial_rollouts``: fresher samples, timing-dependent results.

Accounting: a :class:`TaskLedger` records each scheduled task once — ``trained``,
``dropped`` (stale or zero variance, with the reason) or ``failed`` (every sample failed, or
the job's worker died ``max_attempts`` times; with the reason), with its cell and mean
reward. Resume truncates the ledger to the checkpoint's step, so a killed run resumed from
its checkpoint records each task once.

Durability (``work_store``, ``async_rl.work_store: sqlite``): jobs, their results and the
ledger (:class:`~posttrain.scheduler.ledger.OutcomeLedger`) live in one SQLite file
(:mod:`~posttrain.trainer.store_pool`); after a crash, results completed but not yet trained
are trained from the file instead of sampled again, and jobs in flight are re-run.

Not covered: DAPO refill of filtered groups (as in the reference loop); reordering steps —
results are trained in step order, which keeps the task stream's position a checkpointable
prefix (``stream.position`` counts the tasks of trained steps only).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import torch

from posttrain.core.config import AsyncConfig, FilterConfig, RLConfig
from posttrain.core.errors import ConfigError
from posttrain.core.types import TrajectoryGroup
from posttrain.inference.base import InferenceBackend
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.ledger import OutcomeLedger
from posttrain.scheduler.store import WorkStore
from posttrain.scheduler.filters import WHY
from posttrain.trainer.advantages import compute_advantages
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.losses import get_algorithm
from posttrain.trainer.lora import sync_weights
from posttrain.trainer.producers import POOLS, Job, JobResult, ProducerPool, RolloutSettings
from posttrain.trainer.reference_loop import (MetricsFn, RLState, frozen_reference, policy_update,
                                              rollout_metrics, sampling_params, step_filter)
from posttrain.trainer.store_pool import StorePool
from posttrain.trainer.tasks import TaskStream


class TaskLedger:
    """Each scheduled task's outcome, once: ``trained`` | ``dropped`` | ``failed`` (+ reason)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self.rows: list[dict[str, Any]] = []
        if self.path is not None and self.path.exists():
            self.rows = [json.loads(ln) for ln in self.path.read_text().splitlines() if ln.strip()]

    def truncate(self, before_job: int) -> None:
        """Forget steps a checkpoint does not hold (a resumed run redoes them)."""
        self.rows = [r for r in self.rows if r["job"] < before_job]
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))

    def record(self, job: int, task: str, outcome: str, reason: str = "", **stats: Any) -> None:
        """``stats``: the task's cell and rewards (see :func:`_task_stats`)."""
        self.record_many([{"job": job, "task": task, "outcome": outcome, "reason": reason, **stats}])

    def record_many(self, rows: list[dict[str, Any]]) -> None:
        """Rows of one step, written at once."""
        self.rows.extend(rows)
        if self.path is not None:
            with self.path.open("a") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in rows))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r["outcome"]] = out.get(r["outcome"], 0) + 1
        return out


def _group_lag(group: TrajectoryGroup, version: int) -> int:
    versions = [v for t in group.trajectories for v in t.policy_versions] or [group.policy_version]
    return version - min(versions)


def _failure_reason(group: TrajectoryGroup) -> str:
    for t in group.trajectories:
        err = t.error or (t.score.error if t.score is not None else None)
        if err is not None:
            return f"{err.kind}: {err.message}"[:300]
    return "no usable trajectory"


def _staleness(groups: list[TrajectoryGroup], version: int, max_lag: int, cfg: AsyncConfig):
    """``(kept, weights_per_group, lags, stale groups)`` under the drop/down-weight policy."""
    lags = [_group_lag(g, version) for g in groups]
    kept, weights, stale = [], [], []
    for g, lag in zip(groups, lags):
        if lag <= max_lag:
            kept.append(g)
            weights.append([1.0] * len(g.trajectories))
        elif cfg.stale == "downweight":
            kept.append(g)
            weights.append([cfg.stale_weight ** (lag - max_lag)] * len(g.trajectories))
        else:
            stale.append((g, lag))
    return kept, weights, lags, stale


def _task_stats(task: Any, group: TrajectoryGroup | None = None) -> dict[str, Any]:
    """A ledger row's cell and rewards: usable samples and their mean reward."""
    rewards = [t.reward for t in group.trajectories if t.usable] if group is not None else []
    return {"domain": task.domain, "difficulty": task.difficulty, "samples": len(rewards),
            "reward_mean": sum(rewards) / len(rewards) if rewards else None}


def _record(ledger: TaskLedger | None, job: int, groups, dropped: dict[int, str], stale,
            max_lag) -> None:
    if ledger is None:
        return
    stale_lag = {id(g): lag for g, lag in stale}
    rows = []
    for i, g in enumerate(groups):
        if not any(t.usable for t in g.trajectories):
            outcome, reason = "failed", _failure_reason(g)
        elif id(g) in stale_lag:
            outcome, reason = "dropped", f"stale: lag {stale_lag[id(g)]} > {max_lag}"
        elif i in dropped:
            outcome, reason = "dropped", WHY[dropped[i]]
        else:
            outcome, reason = "trained", ""
        rows.append({"job": job, "task": g.task.key, "outcome": outcome, "reason": reason,
                     **_task_stats(g.task, g)})
    ledger.record_many(rows)


def train_on_result(result: JobResult, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                    rl: RLConfig, state: RLState, cfg: AsyncConfig, *, pad_id: int,
                    ref_model: Any = None, lr_scheduler: Any = None,
                    ledger: TaskLedger | None = None, filters: FilterConfig | None = None,
                    ) -> dict[str, float]:
    """The trainer's half of one step (the reference ``rl_step`` after sampling)."""
    algo = get_algorithm(rl.algorithm)
    groups = list(result.groups)
    metrics = rollout_metrics(groups)
    fresh, weights, lags, stale = _staleness(groups, state.policy_version, rl.max_policy_lag, cfg)
    chosen = step_filter(rl, filters).apply(fresh)
    metrics.update(chosen.metrics())
    kept = chosen.kept
    weights = [[weights[p][i] for i in idx] for p, idx in zip(chosen.positions, chosen.kept_trajectories)]
    at = {id(g): i for i, g in enumerate(groups)}
    dropped = {at[id(fresh[p])]: why for p, why in chosen.dropped.items()}
    batch = None
    if kept:
        batch = build_policy_batch(kept, compute_advantages(kept, algo.advantage), pad_id, weights)
        metrics.update(batch.stats)
    if batch is not None and batch.num_rows:
        metrics.update(policy_update(model, optimizer, batch, rl, algo.loss, ref_model,
                                     lr_scheduler, state.policy_version))
    else:  # nothing trainable (e.g. every completion empty): a step without an update
        metrics["loss/skipped"] = 1.0
    _record(ledger, result.index, groups, dropped, stale, rl.max_policy_lag)
    if result.error is not None:
        metrics["async/failed_jobs"] = 1.0
    metrics["async/lag_mean"] = sum(lags) / len(lags) if lags else 0.0
    metrics["async/lag_max"] = float(max(lags, default=0))
    metrics["async/dropped_stale"] = float(sum(len(g.trajectories) for g, _ in stale))
    metrics["async/downweighted"] = float(sum(1 for ws in weights for w in ws if w < 1.0))
    state.samples_seen += sum(len(g.trajectories) for g in groups)
    return metrics


def _record_failed_job(ledger: TaskLedger | None, job: Job, reason: str) -> None:
    if ledger is not None:
        ledger.record_many([{"job": job.index, "task": t.key, "outcome": "failed", "reason": reason,
                             **_task_stats(t)} for t in job.tasks])


def schedule_lag(rl: RLConfig, cfg: AsyncConfig) -> int:
    """The lag the deterministic schedule samples at: ``max_policy_lag``, or less when the job
    window is smaller (``max_inflight: 1`` gives on-policy steps)."""
    window = cfg.max_inflight or rl.max_policy_lag + 1
    return min(rl.max_policy_lag, window - 1)


def first_version(state: RLState) -> int:
    """The version RL started from (each step bumps step and version by one)."""
    return state.policy_version - state.step


def behaviour_version(state: RLState, step: int, max_lag: int) -> int:
    """The version that samples step ``step`` under the deterministic schedule."""
    trained_at = state.policy_version + (step - state.step)
    return max(first_version(state), trained_at - max_lag)


def needed_versions(state: RLState, max_lag: int) -> range:
    """Versions older than the current one that the schedule still samples with."""
    return range(behaviour_version(state, state.step, max_lag), state.policy_version)


def behaviour_weights(sync: Any, state: RLState, max_lag: int) -> dict[int, Any]:
    """``{version: state dict}`` of :func:`needed_versions`, for a checkpoint."""
    return {v: sync.weights(v) for v in needed_versions(state, max_lag)}


class _Jobs:
    """The trainer's side of the bounded queue: submits jobs ahead, hands results back in order."""

    def __init__(self, pool: ProducerPool, stream: TaskStream, rl: RLConfig, state: RLState,
                 seed: int, cfg: AsyncConfig):
        self.pool, self.stream, self.rl, self.state, self.seed, self.cfg = pool, stream, rl, state, seed, cfg
        self.window = cfg.max_inflight or rl.max_policy_lag + 1
        self.exact = cfg.schedule == "deterministic"
        self.next = state.step
        self.jobs: dict[int, Job] = {}
        self.done: dict[int, JobResult] = {}

    def _version(self, j: int) -> int:
        """Job ``j``'s ``min_version``: the exact version (deterministic) or the gate."""
        if self.exact:
            return behaviour_version(self.state, j, schedule_lag(self.rl, self.cfg))
        return behaviour_version(self.state, j, self.rl.max_policy_lag) if self.cfg.gate else 0

    def fill(self) -> None:
        st, P = self.state, self.rl.prompts_per_step
        while self.next < self.rl.steps and self.next - st.step < self.window:
            j = self.next
            base = self.stream.position + (j - st.step) * P
            # Positions are asked for in order, at a point fixed by the step: a curriculum
            # stream draws each cell from the same state whatever the producers' timing.
            tasks = tuple(self.stream.task_at(i) for i in range(base, base + P))
            job = Job(j, tasks, sampling_params(self.rl, self.seed * 1_000_003 + j), self._version(j),
                      exact=self.exact)
            self.jobs[j] = job
            self.pool.submit(job)
            self.next += 1

    def take(self) -> tuple[Job, JobResult, float]:
        """The result of the current step's job (waiting for it), and the seconds waited."""
        j = self.state.step
        t0 = time.perf_counter()
        while j not in self.done:
            res = self.pool.get(timeout=0.5)
            if res is not None:
                self.done[res.index] = res
            elif time.perf_counter() - t0 > self.cfg.wait_timeout_s:
                raise TimeoutError(f"no rollouts for step {j} after {self.cfg.wait_timeout_s:g} s")
        return self.jobs.pop(j), self.done.pop(j), time.perf_counter() - t0


def _checkpoint(checkpoint: Callable[[RLState], None], state: RLState, sync: Any, rl: RLConfig,
                cfg: AsyncConfig) -> None:
    """Call ``checkpoint`` with the older versions the schedule still needs in ``state.extra``
    (references to the sync's snapshots; dropped after, so they do not outlive the ring)."""
    if cfg.schedule == "deterministic":
        state.extra[BEHAVIOUR_WEIGHTS] = behaviour_weights(sync, state, schedule_lag(rl, cfg))
    try:
        checkpoint(state)
    finally:
        state.extra.pop(BEHAVIOUR_WEIGHTS, None)


def _resolve_pool(cfg: AsyncConfig, backend: Any, model: Any, state: RLState, rl: RLConfig,
                  settings: RolloutSettings, pool: ProducerPool | None,
                  work_store: WorkStore | None) -> ProducerPool:
    if pool is None:
        factory = POOLS.get(cfg.executor)
        n = cfg.num_producers or max(1, rl.max_policy_lag)
        keep = schedule_lag(rl, cfg) + 1 if cfg.schedule == "deterministic" else 1  # the ring
        pool = factory(backend, model, state.policy_version, settings, num_producers=n,
                       max_attempts=cfg.max_attempts, imports=tuple(cfg.worker_imports), config=cfg,
                       keep=keep)
    past = state.extra.pop(BEHAVIOUR_WEIGHTS, None)  # a resume: the older versions still needed
    if cfg.schedule == "deterministic":
        _restore_ring(pool.sync, past or {}, state, schedule_lag(rl, cfg))
    if work_store is not None:  # every job becomes an item of the SQLite work store
        pool = StorePool(pool, work_store, first_job=state.step, lease_s=cfg.lease_s)
    return pool


BEHAVIOUR_WEIGHTS = "behaviour_weights"  # RLState.extra key: {version: state dict} for checkpoints


def _restore_ring(sync: Any, past: dict[int, Any], state: RLState, lag: int) -> None:
    """Put the checkpoint's older versions back; refuse to resume without them."""
    need = set(needed_versions(state, lag))
    missing = sorted(need - set(past))
    if missing:
        raise ConfigError(f"resume at step {state.step} (version {state.policy_version}) with "
                          f"schedule lag {lag}: the checkpoint lacks the weights of versions "
                          f"{missing} that the deterministic schedule samples the next jobs with; "
                          f"allowed: a checkpoint written by train_async with state.extra"
                          f"[{BEHAVIOUR_WEIGHTS!r}], or async_rl.schedule: free_running")
    if need:
        sync.preload({v: past[v] for v in need})


def _check_schedule(cfg: AsyncConfig) -> None:
    if cfg.schedule == "deterministic" and cfg.partial_rollouts:
        raise ConfigError("invalid config:\n  async_rl.partial_rollouts: got true with async_rl.schedule "
                          "\"deterministic\"; newer weights between turns depend on timing: allowed are "
                          "partial_rollouts: false, or schedule: free_running")


def train_async(model: torch.nn.Module, optimizer: torch.optim.Optimizer, backend: InferenceBackend,
                stream: TaskStream, rl: RLConfig, *, pad_id: int, seed: int = 0,
                state: RLState | None = None, on_step: MetricsFn | None = None,
                checkpoint: Callable[[RLState], None] | None = None, checkpoint_every: int = 0,
                lr_scheduler: Any = None, progress: Callable[[int], None] | None = None,
                config: AsyncConfig | None = None, settings: RolloutSettings | None = None,
                ledger: TaskLedger | None = None, pool: ProducerPool | None = None,
                on_groups: Callable[[list[TrajectoryGroup]], None] | None = None,
                work_store: WorkStore | None = None, ref_model: torch.nn.Module | None = None,
                limits: EpisodeLimits | None = None, filters: FilterConfig | None = None) -> RLState:
    """Run ``rl.steps`` steps (resuming from ``state.step``) with producers off the trainer.

    ``on_groups`` sees each step's verified groups, as in the reference loop. ``work_store``:
    jobs are items of that SQLite store (:mod:`.store_pool`), the ledger defaults to its
    ``outcomes`` table, and the caller acks results after each durable checkpoint
    (``store_pool.ack_trained``; a resume makes up for a missed one). ``ref_model``: the KL
    reference (default: a frozen copy of ``model`` now — right only at the start of RL; a
    resume passes the saved one). Under the deterministic schedule ``checkpoint`` finds in
    ``state.extra[BEHAVIOUR_WEIGHTS]`` the older versions to save, and a resumed ``state``
    must bring them back there. ``limits``: the episode budgets (the run config's ``episode``
    section, as the reference loop gets them); ignored when ``settings`` is given."""
    cfg = config or AsyncConfig()
    _check_schedule(cfg)
    state = state or RLState()
    ledger = OutcomeLedger(work_store) if ledger is None and work_store is not None else ledger
    if ledger is not None:
        ledger.truncate(state.step)
    settings = settings or RolloutSettings(
        limits=limits or EpisodeLimits(), partial_rollouts=cfg.partial_rollouts,
        checkpoint_path=work_store.path if work_store is not None else None)
    pool = _resolve_pool(cfg, backend, model, state, rl, settings, pool, work_store)
    if ref_model is None and rl.kl_coef > 0:
        ref_model = frozen_reference(model)
    jobs = _Jobs(pool, stream, rl, state, seed, cfg)
    try:
        while state.step < rl.steps:
            t0 = time.perf_counter()
            jobs.fill()
            job, result, wait_s = jobs.take()
            if result.error is not None:
                _record_failed_job(ledger, job, result.error)
            if on_groups is not None:
                on_groups(list(result.groups))
            t1 = time.perf_counter()
            metrics = train_on_result(result, model, optimizer, rl, state, cfg, pad_id=pad_id,
                                      ref_model=ref_model, lr_scheduler=lr_scheduler, ledger=ledger,
                                      filters=filters)
            t_update = time.perf_counter() - t1
            state.step += 1
            state.policy_version += 1
            stream.position += rl.prompts_per_step
            t2 = time.perf_counter()
            pool.sync.publish(state.policy_version, sync_weights(model))
            metrics.update({f"time/{k}": v for k, v in result.times.items()})
            metrics.update(result.stats)
            metrics.update(pool.metrics())
            metrics.update({"time/update_s": t_update, "time/wait_s": wait_s,
                            "time/sync_s": time.perf_counter() - t2,
                            "time/step_s": time.perf_counter() - t0,
                            "async/inflight": float(jobs.next - state.step),
                            "rollout/policy_version": float(state.policy_version),
                            "rollout/samples_seen": float(state.samples_seen)})
            if on_step is not None:
                on_step(state.step, metrics)
            if checkpoint is not None and checkpoint_every and state.step % checkpoint_every == 0:
                _checkpoint(checkpoint, state, pool.sync, rl, cfg)
            if progress is not None:
                progress(state.step)
        if checkpoint is not None and cfg.schedule == "deterministic":  # for the caller's final one
            state.extra[BEHAVIOUR_WEIGHTS] = behaviour_weights(pool.sync, state, schedule_lag(rl, cfg))
    finally:
        pool.close()
        backend.load_weights(state.policy_version, sync_weights(model))
    return state
