"""Rollout producers for the async loop: jobs in, scored groups out, on threads or processes.

A :class:`Job` is one training step's worth of rollouts: the step's tasks, its sampling
params (seed included) and the policy version that samples it (``min_version``). A producer
waits until that version is published and pulls into its own inference backend exactly
that version (``exact``: the async loop's deterministic schedule, the default) or the
newest one (free-running, ``async_rl.schedule: free_running``), then plays the
job's episodes with the one episode engine, :func:`~posttrain.rollout.play_groups` (sampling,
env steps and verification on each live env on the producer's env thread pool, under the
run's episode budgets ``RolloutSettings.limits``) and returns a :class:`JobResult`.

Pools (registered in :data:`POOLS`, chosen by ``AsyncConfig.executor``; ``posttrain.distributed``
registers ``"ray"``):

- ``thread`` — the embedded default: one thread per producer, each with its own backend (an
  HF backend over its own copy of the model), weights through :class:`InProcessWeightSync`.
  Torch releases the GIL inside its ops, so sampling overlaps the trainer's update. A
  backend marked ``shared_by_threads`` (vLLM: one engine per process, see
  :mod:`posttrain.inference.vllm_backend`) is shared by every thread instead of copied; a
  producer holds its ``exclusive()`` lock from the weight pull to the job's last episode,
  so jobs on one shared engine take turns (sampling still overlaps the trainer's update).
- ``process`` — one spawned process per producer, weights through shared memory. A monitor
  thread notices a dead process (killed, OOM, segfault): its job is re-run on a fresh
  process (``max_attempts`` in all), then recorded as failed with the reason.

Process and Ray workers build their backend with ``RolloutSettings.backend_factory``; when
none is given and the pool's template backend carries an ``engine_spec`` (vLLM), each worker
starts its own engine from that spec (:func:`worker_settings`).

Guarantees: an ``exact`` job is sampled with the weights of version ``min_version`` and
nothing else (a re-run after a worker died too), so its result depends on the job alone,
not on which producer took it or when; every submitted job yields exactly one JobResult —
its groups, or ``error`` with the reason — unless the pool is closed first; ``close()``
stops taking jobs, cancels the episodes of running ones at their next round (the engine's
``cancelled``: envs closed, nothing delivered; threads are joined for ``timeout`` s,
processes terminated after it) and shuts the env pool last. Not covered: killing a hung thread
(Python cannot).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from posttrain.core.registry import Registry
from posttrain.core.types import Task, TrajectoryGroup
from posttrain.inference.base import SamplingParams
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.store import WorkStoreCheckpoints
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.weight_sync import InProcessWeightSync, SharedMemoryWeightSync, WeightSync


@dataclass(frozen=True)
class Job:
    index: int
    tasks: tuple[Task, ...]
    params: SamplingParams
    min_version: int
    attempt: int = 1
    exact: bool = False  # sample with exactly ``min_version`` (the deterministic schedule)


@dataclass(frozen=True)
class JobResult:
    index: int
    groups: tuple[TrajectoryGroup, ...] = ()
    times: Mapping[str, float] = field(default_factory=dict)
    worker: str = ""
    error: str | None = None
    attempts: int = 1
    stats: Mapping[str, float] = field(default_factory=dict)  # rollout counters (retries)


@dataclass(frozen=True)
class RolloutSettings:
    """What a producer needs besides its backend; picklable (it travels to processes/actors).

    ``limits`` are the run's episode budgets (the config's ``episode`` section), the same the
    reference loop and evaluation use; ``make_env`` overrides the domains' own envs (tests);
    ``backend_factory`` builds each process/actor worker's backend (a picklable callable;
    e.g. a scripted policy in the cross-engine tests, or another engine).
    """

    make_env: Callable[[Task], Any] | None = None
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    checkpoint_path: str | None = None  # the run's work store: episode checkpoints survive a kill
    partial_rollouts: bool = False
    backend_factory: Callable[[Any, Any], Any] | None = None  # (model, tokenizer) -> backend

    def new_backend(self, model: Any, tokenizer: Any) -> Any:
        """A worker's own inference backend (HF over its copy of the model by default)."""
        if self.backend_factory is not None:
            return self.backend_factory(model, tokenizer)
        from posttrain.models.loading import policy_backend

        return policy_backend(model.eval(), tokenizer, policy_version=-1)


class Stopped(Exception):
    """The pool closed while a producer waited for weights."""


class ProducerPool(Protocol):
    sync: WeightSync

    def submit(self, job: Job) -> None: ...

    def get(self, timeout: float | None = None) -> JobResult | None: ...

    def close(self, timeout: float = 10.0) -> None: ...

    def metrics(self) -> dict[str, float]: ...


def worker_settings(backend: Any, settings: RolloutSettings) -> RolloutSettings:
    """``settings`` for process/Ray workers: without a ``backend_factory`` of its own, a
    template backend with an ``engine_spec`` (vLLM) gives each worker an engine of its own."""
    spec = getattr(backend, "engine_spec", None)
    if settings.backend_factory is None and spec is not None:
        return dataclasses.replace(settings, backend_factory=spec)
    return settings


def engine_session(backend: Any) -> Any:
    """The backend's ``exclusive()`` lock when threads share it, else a no-op context."""
    hold = getattr(backend, "exclusive", None)
    return hold() if hold is not None else nullcontext()


def produce(job: Job, backend: Any, sync: WeightSync, settings: RolloutSettings, env_pool: Any,
            stopped: Callable[[], bool], worker: str) -> JobResult:
    """Run one job on one backend (the body every pool shares)."""
    t0 = time.perf_counter()
    while not sync.wait_for(job.min_version, 0.05):
        if stopped():
            raise Stopped(f"job {job.index}")
    with engine_session(backend):  # a shared engine: no other thread's weights mid-job
        return _play_job(job, backend, sync, settings, env_pool, stopped, worker, t0)


def _play_job(job: Job, backend: Any, sync: WeightSync, settings: RolloutSettings, env_pool: Any,
              stopped: Callable[[], bool], worker: str, t0: float) -> JobResult:
    sync.pull(backend, job.min_version if job.exact else None)
    weights_wait = time.perf_counter() - t0
    # newer weights between turns is free-running only: the loop refuses it with exact jobs
    between = (lambda: sync.pull(backend)) if settings.partial_rollouts and not job.exact else None
    ckpts = WorkStoreCheckpoints(settings.checkpoint_path) if settings.checkpoint_path else None
    try:
        groups, times, stats = play_scheduled(backend, job.tasks, job.params, limits=settings.limits,
                                              make_env=settings.make_env, env_pool=env_pool,
                                              between_turns=between, cancelled=stopped,
                                              checkpoints=ckpts)
    finally:
        if ckpts is not None:
            ckpts.close()
    if stopped():  # the pool is closing: its episodes were cancelled, nothing to deliver
        raise Stopped(f"job {job.index}")
    return JobResult(job.index, tuple(groups), {**times.as_dict(), "weights_wait_s": weights_wait},
                     worker, attempts=job.attempt, stats=stats)


def next_result(results: "queue.Queue[JobResult]", timeout: float | None) -> JobResult | None:
    """A pool's ``get``: the next result, or None after ``timeout`` seconds."""
    try:
        return results.get(timeout=timeout)
    except queue.Empty:
        return None


POOLS: Registry[Callable[..., ProducerPool]] = Registry("producer_pool", entry_point_group="posttrain.producer_pools",
                                                      versioned=False)


class ThreadProducerPool:
    """Producers as threads of this process (see the module docstring)."""

    def __init__(self, backends: list[Any], sync: WeightSync, settings: RolloutSettings):
        self.sync, self.settings = sync, settings
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._results: queue.Queue[JobResult] = queue.Queue()
        self._stop = threading.Event()
        self._env_pool = ThreadPoolExecutor(max(1, settings.limits.env_workers),
                                            thread_name_prefix="env")
        self.done = 0
        self._threads = [threading.Thread(target=self._run, args=(b, f"thread-{i}"), daemon=True,
                                          name=f"producer-{i}") for i, b in enumerate(backends)]
        for th in self._threads:
            th.start()

    def _run(self, backend: Any, name: str) -> None:
        while True:
            job = self._jobs.get()
            if job is None or self._stop.is_set():
                return
            try:
                res = produce(job, backend, self.sync, self.settings, self._env_pool,
                              self._stop.is_set, name)
            except Stopped:
                return
            except Exception as exc:  # a producer bug fails its job, recorded, never the loop
                res = JobResult(job.index, worker=name, error=f"{type(exc).__name__}: {exc}"[:500])
            self.done += 1
            self._results.put(res)

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def get(self, timeout: float | None = None) -> JobResult | None:
        return next_result(self._results, timeout)

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        for _ in self._threads:
            self._jobs.put(None)
        end = time.monotonic() + timeout
        for th in self._threads:
            th.join(max(0.0, end - time.monotonic()))
        self._env_pool.shutdown(wait=False, cancel_futures=True)

    def metrics(self) -> dict[str, float]:
        return {"async/producers": float(len(self._threads))}


@POOLS.register("thread")
def thread_pool(backend: Any, model: Any, version: int, settings: RolloutSettings, *,
                num_producers: int, keep: int = 1, **_: Any) -> ThreadProducerPool:
    """Producer 0 samples with ``backend`` itself; the others with deep copies of it, or with
    ``backend`` too when it is ``shared_by_threads`` (one vLLM engine per process).

    ``keep``: versions the weight sync holds (the schedule's ring, ``max_policy_lag + 1``)."""
    shared = getattr(backend, "shared_by_threads", False)
    backends = [backend] + [backend if shared else copy.deepcopy(backend)
                            for _ in range(num_producers - 1)]
    return ThreadProducerPool(backends, InProcessWeightSync(version, model.state_dict(), keep=keep),
                              settings)


# ------------------------------------------------------------------------ processes
def _worker_main(name, model, tokenizer, sync, settings, inbox, outbox, imports) -> None:
    import importlib

    import torch

    from posttrain.trainer.lifetime import exit_with_parent

    exit_with_parent()  # a SIGKILLed trainer must not leave its producers (and sandboxes) behind

    torch.set_num_threads(1)
    for mod in imports:
        importlib.import_module(mod)
    backend = settings.new_backend(model, tokenizer)
    env_pool = ThreadPoolExecutor(max(1, settings.limits.env_workers), thread_name_prefix="env")
    while (job := inbox.get()) is not None:
        try:
            res = produce(job, backend, sync, settings, env_pool, lambda: False, name)
        except Exception as exc:  # recorded on the job; the process lives on
            res = JobResult(job.index, worker=name, error=f"{type(exc).__name__}: {exc}"[:500])
        outbox.put(res)


@dataclass
class _Proc:
    name: str
    proc: Any
    inbox: Any
    job: Job | None = None


class ProcessProducerPool:
    """Producers as spawned processes; a dead one is replaced and its job re-run."""

    def __init__(self, model: Any, tokenizer: Any, version: int, settings: RolloutSettings, *,
                 num_workers: int = 1, max_attempts: int = 2, imports: tuple[str, ...] = (),
                 state_dict: Any = None, keep: int = 1):
        import torch.multiprocessing as tmp

        self._ctx = tmp.get_context("spawn")
        self.sync = SharedMemoryWeightSync(state_dict if state_dict is not None else model.state_dict(),
                                           version, ctx=self._ctx, keep=keep)
        self.settings, self.max_attempts, self.imports = settings, max_attempts, imports
        self._model, self._tokenizer = model, tokenizer
        self._outbox = self._ctx.Queue()
        self._results: queue.Queue[JobResult] = queue.Queue()
        self._pending: list[Job] = []
        self._lock = threading.Lock()
        self._names = itertools.count()
        self.restarts = 0
        self._procs = [self._spawn() for _ in range(num_workers)]
        self._stop = threading.Event()
        self._monitor = threading.Thread(target=self._watch, daemon=True, name="proc-monitor")
        self._monitor.start()

    def _spawn(self) -> _Proc:
        name = f"proc-{next(self._names)}"
        inbox = self._ctx.Queue()
        proc = self._ctx.Process(target=_worker_main, name=name, daemon=True,
                                 args=(name, copy.deepcopy(self._model), self._tokenizer, self.sync,
                                       self.settings, inbox, self._outbox, self.imports))
        proc.start()
        return _Proc(name, proc, inbox)

    def busy_pids(self) -> list[int]:
        """Processes holding a job right now (what a fault-injection test kills)."""
        with self._lock:
            return [p.proc.pid for p in self._procs if p.job is not None and p.proc.is_alive()]

    def submit(self, job: Job) -> None:
        with self._lock:
            self._pending.append(job)

    def _assign(self) -> None:
        with self._lock:
            for p in self._procs:
                if p.job is None and self._pending and p.proc.is_alive():
                    p.job = self._pending.pop(0)
                    p.inbox.put(p.job)

    def _reap(self) -> None:
        with self._lock:
            for i, p in enumerate(self._procs):
                if p.proc.is_alive():
                    continue
                code, job = p.proc.exitcode, p.job
                self._procs[i] = self._spawn()
                self.restarts += 1
                if job is None:
                    continue
                if job.attempt < self.max_attempts:
                    self._pending.insert(0, dataclasses.replace(job, attempt=job.attempt + 1))
                else:
                    self._results.put(JobResult(job.index, worker=p.name, attempts=job.attempt,
                                                error=f"worker process {p.name} died (exit code "
                                                      f"{code}) after {job.attempt} attempts"))

    def _watch(self) -> None:
        while not self._stop.is_set():
            self._reap()
            self._assign()
            try:
                res = self._outbox.get(timeout=0.05)
            except queue.Empty:
                continue
            with self._lock:
                for p in self._procs:
                    if p.name == res.worker:
                        p.job = None
            self._results.put(res)

    def get(self, timeout: float | None = None) -> JobResult | None:
        return next_result(self._results, timeout)

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._monitor.join(timeout)
        for p in self._procs:
            p.inbox.put(None)
        end = time.monotonic() + timeout
        for p in self._procs:
            p.proc.join(max(0.0, end - time.monotonic()))
            if p.proc.is_alive():
                p.proc.terminate()
                p.proc.join(1.0)

    def metrics(self) -> dict[str, float]:
        return {"async/producers": float(len(self._procs)),
                "async/worker_restarts": float(self.restarts)}


@POOLS.register("process")
def process_pool(backend: Any, model: Any, version: int, settings: RolloutSettings, *,
                 num_producers: int, max_attempts: int = 2, imports: tuple[str, ...] = (),
                 keep: int = 1, **_: Any) -> ProcessProducerPool:
    return ProcessProducerPool(model, getattr(backend, "tokenizer", None), version,
                               worker_settings(backend, settings),
                               num_workers=num_producers, max_attempts=max_attempts, imports=imports,
                               state_dict=model.state_dict(), keep=keep)
