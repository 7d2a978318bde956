"""Rollout workers as Ray actors: the ``ray`` producer pool of the async loop.

Importing this module registers ``"ray"`` in :data:`posttrain.trainer.producers.POOLS`, so
the same run config switches from the embedded thread pool to Ray by one field
(``executor: ray``). Placement:

- :class:`RolloutWorker` — one actor per producer (``ray_cpus_per_worker`` CPUs, plus
  ``num_gpus`` when given, plus any custom ``ray_resources``); it holds its own backend (an
  HF backend over its copy of the model, or with a vLLM template backend an engine of its
  own on the same model folder: ``producers.worker_settings``) and pulls weights through
  :class:`~posttrain.distributed.ray_sync.RayWeightSync`;
- verification runs where the episode ran: a worker verifies each episode on its live env
  (the one episode engine), on its own env threads — never on the trainer;
- the trainer stays in the driver, or runs inside :class:`~posttrain.distributed.ray_trainer.TrainerActor`.

Guarantees (the pool contract of :mod:`posttrain.trainer.producers`): each submitted job
yields one JobResult; a worker that dies mid-episode (``ray.kill``, node loss, OOM) is
replaced by a fresh actor and its job re-run (with the same weights version when the
schedule fixes it), up to ``max_attempts`` runs in all, then the job
is a failed result naming the reason. ``close()`` stops the driver thread, then kills the
rollout workers and the weight store, in that order.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import ray

from posttrain.trainer.producers import (POOLS, Job, JobResult, RolloutSettings, produce,
                                         worker_settings)

from .ray_sync import RayWeightSync


@ray.remote
class RolloutWorker:
    def __init__(self, name: str, model: Any, tokenizer: Any, sync: RayWeightSync,
                 settings: RolloutSettings, imports: tuple[str, ...] = (), threads: int = 1):
        import importlib
        from concurrent.futures import ThreadPoolExecutor

        import torch

        torch.set_num_threads(threads)
        for mod in imports:
            importlib.import_module(mod)

        self.name, self.sync, self.settings = name, sync, settings
        self.backend = settings.new_backend(model, tokenizer)
        self.env_pool = ThreadPoolExecutor(max(1, settings.limits.env_workers),
                                           thread_name_prefix="env")

    def run(self, job: Job) -> JobResult:
        try:
            return produce(job, self.backend, self.sync, self.settings, self.env_pool,
                           lambda: False, self.name)
        except Exception as exc:  # a bug in an episode fails its job, recorded
            return JobResult(job.index, worker=self.name, error=f"{type(exc).__name__}: {exc}"[:500])

    def pid(self) -> int:
        import os

        return os.getpid()

    def shutdown(self) -> None:
        """Do now what this process's exit hooks would: ``ray.kill`` ends an actor without
        them, and they close its sandbox pools and remove its staged cache directory (the
        chaos loop found those left on the host after every Ray run, until the next start
        swept them). Only our hooks: Ray's own must not run inside a live actor."""
        self.env_pool.shutdown(wait=False, cancel_futures=True)
        _close_process_sandboxes()


def _close_process_sandboxes() -> None:
    """Close this process's sandbox pools (tool envs', the HumanEval judge's) and remove its
    cache directory; each is a no-op when never made. Safe to run again at exit."""
    import sys

    from posttrain.envs import tool_env
    from posttrain.sandbox import template

    judge = sys.modules.get("posttrain.domains.adapters.humaneval")  # only if this process used it
    pools = [tool_env._POOL, *getattr(judge, "_POOLS", {}).values()]
    for pool in pools:
        if pool is not None:
            pool.close()
    if template._cache_root is not None:
        template._remove_own(template._cache_root, template._cache_pid)


@dataclass
class _Slot:
    name: str
    actor: Any
    job: Job | None = None
    ref: Any = None


class RayProducerPool:
    def __init__(self, model: Any, tokenizer: Any, state_dict: Any, version: int,
                 settings: RolloutSettings, *, num_workers: int = 1, max_attempts: int = 2,
                 imports: tuple[str, ...] = (), num_cpus: float = 1.0, num_gpus: float = 0.0,
                 resources: dict[str, float] | None = None, keep: int = 1):
        self.sync = RayWeightSync(keep=keep)  # keep: the schedule's ring, max_policy_lag + 1
        self.sync.publish(version, state_dict)
        self.settings, self.max_attempts, self.imports = settings, max_attempts, imports
        self._model_ref, self._tokenizer = ray.put(model), tokenizer
        self._opts = dict(num_cpus=num_cpus, num_gpus=num_gpus, resources=resources or {},
                          max_restarts=0)
        self._count = 0
        self.restarts = 0
        self._slots = [self._new_slot() for _ in range(num_workers)]
        self._pending: deque[Job] = deque()
        self._results: queue.Queue[JobResult] = queue.Queue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._driver = threading.Thread(target=self._drive, daemon=True, name="ray-pool")
        self._driver.start()

    def _new_slot(self) -> _Slot:
        name = f"ray-worker-{self._count}"
        self._count += 1
        actor = RolloutWorker.options(**self._opts).remote(
            name, self._model_ref, self._tokenizer, self.sync, self.settings, self.imports)
        return _Slot(name, actor)

    def submit(self, job: Job) -> None:
        with self._lock:
            self._pending.append(job)

    def busy_actors(self) -> list[Any]:
        """Actors holding a job right now (what a fault-injection test kills)."""
        with self._lock:
            return [s.actor for s in self._slots if s.job is not None]

    def _assign(self) -> None:
        with self._lock:
            for s in self._slots:
                if s.job is None and self._pending:
                    s.job = self._pending.popleft()
                    s.ref = s.actor.run.remote(s.job)

    def _finish(self, slot_i: int) -> None:
        s = self._slots[slot_i]
        try:
            res = ray.get(s.ref)
        except ray.exceptions.RayActorError as exc:  # the worker died mid-job: replace, retry
            job = s.job
            with self._lock:
                self._slots[slot_i] = self._new_slot()
                self.restarts += 1
                if job.attempt < self.max_attempts:  # the same job (its exact version too), once more
                    self._pending.appendleft(dataclasses.replace(job, attempt=job.attempt + 1))
                    return
            res = JobResult(job.index, worker=s.name, attempts=job.attempt,
                            error=f"ray worker {s.name} died after {job.attempt} attempts: "
                                  f"{type(exc).__name__}"[:500])
        except ray.exceptions.RayError as exc:  # anything else Ray reports fails the job, recorded
            res = JobResult(s.job.index, worker=s.name, attempts=s.job.attempt,
                            error=f"{type(exc).__name__}: {exc}"[:500])
        s.job, s.ref = None, None
        self._results.put(res)

    def _drive(self) -> None:
        while not self._stop.is_set():
            self._assign()
            with self._lock:
                live = {s.ref: i for i, s in enumerate(self._slots) if s.ref is not None}
                refs = [s.ref for s in self._slots if s.ref is not None]
            if not refs:
                time.sleep(0.01)
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
            for ref in ready:
                self._finish(live[ref])

    def get(self, timeout: float | None = None) -> JobResult | None:
        try:
            return self._results.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._driver.join(timeout)
        done = [s.actor.shutdown.remote() for s in self._slots]  # after any job in hand
        try:
            ray.wait(done, num_returns=len(done), timeout=timeout)
        except Exception:  # an actor already dead: nothing of it left to close
            pass
        for s in self._slots:
            ray.kill(s.actor)
        ray.kill(self.sync.store)

    def metrics(self) -> dict[str, float]:
        return {"async/producers": float(len(self._slots)),
                "async/worker_restarts": float(self.restarts)}


def ensure_ray(address: str | None = None, **init_kw: Any) -> None:
    """Connect to ``address`` ('auto', 'ray://host:10001') or start a local cluster."""
    if not ray.is_initialized():
        env = {"env_vars": {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}}
        ray.init(address=address, include_dashboard=False, runtime_env=env, **init_kw)


@POOLS.register("ray")
def ray_pool(backend: Any, model: Any, version: int, settings: RolloutSettings, *,
             num_producers: int, max_attempts: int = 2, imports: tuple[str, ...] = (),
             config: Any = None, keep: int = 1, **_: Any) -> RayProducerPool:
    ensure_ray(getattr(config, "ray_address", None))
    # an engine without a module of its own (vLLM) ships the trainer's; its workers ignore it
    return RayProducerPool(getattr(backend, "model", model), backend.tokenizer, model.state_dict(),
                           version, worker_settings(backend, settings),
                           num_workers=num_producers, max_attempts=max_attempts, imports=imports,
                           num_cpus=getattr(config, "ray_cpus_per_worker", 1.0),
                           resources=dict(getattr(config, "ray_resources", {}) or {}),
                           keep=keep)
