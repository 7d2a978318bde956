"""Rollout jobs through the SQLite work store (``async_rl.work_store: sqlite``).

:class:`StorePool` is a :class:`~posttrain.trainer.producers.ProducerPool` that puts every job
of the async loop in a :class:`~posttrain.scheduler.store.WorkStore` and runs it on any other
pool (``thread``, ``process``, ``ray``):

- for each ``submit(job)`` a feeder thread enqueues the item ``job/<index>`` (priority
  ``-index``: earlier steps first) whose payload is the whole job — its tasks, sampling
  params, ``min_version`` and whether that version is exact (:func:`job_payload`); enqueue
  is idempotent, and a key already in the file with a different payload is an error (the
  run folder was made by another config, raised by the next ``get``); then it claims the
  submitted items (only those: ``min_priority``) and hands each to the inner pool;
- a pump thread renews the claims' leases and writes each outcome back fenced by the claim:
  the job's verified groups (:mod:`posttrain.core.serde`), times and worker on
  ``complete``, or the inner pool's error on ``fail``; ``get`` returns what was written;
- a submitted item the file already holds ``done`` (completed before a crash, never
  trained) is returned from the file as it is — not sampled again; one held ``failed``
  returns its reason as the job's error;
- :func:`ack_trained` acknowledges the results of jobs below a step: call it once a
  checkpoint of that step is durable (the pipeline does); result bodies below the previous
  ack point are then dropped, so the file stays flat over a long run.

Opening on an existing file (resume from a checkpoint at step ``s``): results of jobs below
``s`` are acknowledged (a crash between checkpoint and ack lost only the ack), and every item
left ``running`` by the dead process is re-queued at once (``WorkStore.recover``; it spends
the attempt, so a job that keeps killing its process fails after ``max_attempts``).

Guarantees: each job's result is delivered at most once per session and, across sessions,
every job below the final step ends ``done`` (trained from exactly that result) or
``failed`` with its reason; a result carries the policy versions that sampled it, so the
loop's lag bound applies to it after a resume as to any other. ``close()`` stops claiming,
closes the inner pool, completes jobs that finished meanwhile and gives unfinished ones back
without spending their attempt. Not covered: episode checkpoints (``ctx.checkpoint``) — the
async loop's rollouts are whole jobs, re-run from the start when interrupted.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import queue
import threading
import time
import uuid
from collections import Counter
from typing import Any

from posttrain.core.errors import SchedulerError
from posttrain.core.serde import from_dict, to_dict
from posttrain.core.types import TrajectoryGroup
from posttrain.scheduler.store import WorkItem, WorkStore
from posttrain.trainer.producers import Job, JobResult, ProducerPool, next_result


# the ``async/store_<name>`` metrics (docs/metrics.md)
COUNTERS = ("acked_at_open", "recovered", "claimed", "completed", "failed", "reused", "lost_claims",
            "reclaimed", "late_discarded", "released")


def job_key(index: int) -> str:
    return f"job/{int(index):08d}"


def job_payload(job: Job) -> dict[str, Any]:
    """The item's payload: everything that decides what a job samples (``exact``: the
    schedule fixes its weights version, so a stored result equals a fresh sampling of it)."""
    return json.loads(json.dumps({"job": job.index, "min_version": job.min_version,
                                  "exact": job.exact,
                                  "params": to_dict(job.params),
                                  "tasks": [to_dict(t) for t in job.tasks]}))


def result_body(res: JobResult) -> dict[str, Any]:
    return {"groups": [to_dict(g) for g in res.groups], "times": dict(res.times),
            "worker": res.worker, "attempts": res.attempts, "stats": dict(res.stats)}


def result_from_body(index: int, body: dict[str, Any]) -> JobResult:
    groups = tuple(from_dict(TrajectoryGroup, g) for g in body["groups"])
    return JobResult(index, groups, body.get("times", {}), body.get("worker", ""),
                     attempts=body.get("attempts", 1), stats=body.get("stats", {}))


ACK_POINTS = "store_pool/ack_points"  # state: the last two distinct ``before_job`` of ack_trained


def ack_trained(store: WorkStore, before_job: int) -> int:
    """Acknowledge the results of jobs ``< before_job`` (a checkpoint holds them now), and
    drop the bodies of results no kept checkpoint can need again.

    Bodies (a job's verified groups, ~20 KiB a trajectory) of jobs below the *previous* ack
    point are replaced by JSON ``null``, and their payloads slimmed to the job index and each
    task's (domain, difficulty, seed) (``"compacted": 1``): the pipeline keeps the last two
    checkpoints, and a resume from either one re-trains only jobs at or above its step, so
    what is dropped is never read again (``groups.jsonl`` keeps the run's record of the
    groups). Without this the file grew by every result ever sampled (the soak measured
    about 176 KiB per step, then 11 KiB of payloads); with it, by a slim item row and the
    outcomes ledger, which is kept (3-4 KiB a step there) — freed pages are reused. State, attempts, reasons and the
    outcomes table are kept."""
    ids = [r.id for r in store.results(unacked_only=True) if r.payload.get("job", before_job) < before_job]
    store.ack(ids)
    points = [int(p) for p in store.get_state(ACK_POINTS, [])]
    if not points or points[-1] != before_job:
        points = (points + [int(before_job)])[-2:]
        store.put_state(ACK_POINTS, points)
    if len(points) == 2:
        with store.transaction() as c:
            c.execute(_COMPACT, (min(points),))
    return len(ids)


# A done, acknowledged job below the older kept checkpoint keeps its state, attempts, reason,
# its job index and each task's (domain, difficulty, seed) — what the books need — and drops
# its result body and the rest of its payload (prompts, hidden data: ~3 KiB a task here).
_COMPACT = """
UPDATE items SET result = 'null', payload = json_object(
    'job', json_extract(payload, '$.job'), 'compacted', 1,
    'tasks', (SELECT json_group_array(json_object('domain', json_extract(t.value, '$.domain'),
                                                  'difficulty', json_extract(t.value, '$.difficulty'),
                                                  'seed', json_extract(t.value, '$.seed')))
              FROM json_each(items.payload, '$.tasks') AS t))
WHERE state = 'done' AND acked = 1 AND json_extract(payload, '$.compacted') IS NULL
  AND json_extract(payload, '$.job') < ?
"""


class StorePool:
    """Jobs as work-store items, run on ``inner`` (see the module docstring).

    Two threads keep SQLite off the trainer's path: the *feeder* enqueues submitted jobs,
    delivers those the file already settled and claims the rest; the *pump* writes the inner
    pool's results back and renews the leases."""

    def __init__(self, inner: ProducerPool, store: WorkStore, *, first_job: int = 0,
                 lease_s: float = 60.0, poll_s: float = 0.05):
        self.inner, self.store, self.sync = inner, store, inner.sync
        self.lease_s, self.poll_s = lease_s, poll_s
        self.worker = f"trainer-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.counters: Counter[str] = Counter(dict.fromkeys(COUNTERS, 0))
        self.counters["acked_at_open"] = ack_trained(store, first_job)
        self.counters["recovered"] = store.recover()
        self._lock = threading.Lock()
        self._submitted: dict[int, Job] = {}  # not delivered yet
        self._new: list[Job] = []  # submitted, not enqueued yet
        self._held: dict[int, WorkItem] = {}  # our claims, running on the inner pool
        self._max_index = -1  # the highest job enqueued: claims go no further
        self._wake = threading.Event()  # the feeder has work (new jobs, a lost claim, a timer)
        self._out: queue.Queue[JobResult] = queue.Queue()
        self._claims = itertools.count()
        self._failure: BaseException | None = None
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._guarded, args=(fn,), name=f"store-{fn.__name__[1:]}",
                                          daemon=True) for fn in (self._feed, self._pump)]
        for th in self._threads:
            th.start()

    # ----------------------------------------------------------------- trainer side
    def submit(self, job: Job) -> None:
        with self._lock:
            self._submitted[job.index] = job
            self._new.append(job)
        self._wake.set()

    def get(self, timeout: float | None = None) -> JobResult | None:
        res = next_result(self._out, timeout) if self._failure is None else None
        if self._failure is not None:  # a thread died: the run cannot go on
            raise SchedulerError(f"work store: {self._failure}") from self._failure
        return res

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        for th in self._threads:
            th.join(timeout)
        self.inner.close(timeout)
        while (res := self.inner.get(timeout=0)) is not None:  # finished while closing: keep it
            self._settle(res)
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for item in held:
            self.counters["released"] += self.store.release(item)

    def metrics(self) -> dict[str, float]:
        out = dict(self.inner.metrics())
        out.update({f"async/store_{k}": float(v) for k, v in sorted(self.counters.items())})
        out.update({f"async/store_items_{k}": float(v) for k, v in self.store.counts().items()})
        return out

    # ----------------------------------------------------------------- threads
    def _guarded(self, loop) -> None:
        try:
            loop()
        except BaseException as exc:  # surfaced to the trainer by get()
            self._failure = exc
            self._out.put(None)  # type: ignore[arg-type]  # wakes a waiting get()
        finally:
            self.store.close()  # this thread's connection

    def _feed(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.lease_s / 3)  # the timer also notices items others settled
            self._wake.clear()
            self._enqueue_new()
            self._deliver_settled()
            self._claim()

    def _pump(self) -> None:
        last_beat = time.monotonic()
        while not self._stop.is_set():
            self._settle(self.inner.get(timeout=self.poll_s))
            if time.monotonic() - last_beat > self.lease_s / 3:
                last_beat = time.monotonic()
                self._heartbeat()

    def _enqueue_new(self) -> None:
        with self._lock:
            new, self._new = self._new, []
        if not new:
            return
        payloads = {job_key(j.index): job_payload(j) for j in new}
        self.store.enqueue_many([(k, p, -p["job"]) for k, p in payloads.items()])
        for key, payload in payloads.items():  # new or from before a crash: the same job?
            if json.loads(self.store.item(key)["payload"]) != payload:
                raise SchedulerError(f"{self.store.path} holds {key} with another spec (tasks, sampling "
                                     f"params, min_version or exact): this run folder was made by another "
                                     f"config; use a new folder or delete work.sqlite")
        self._max_index = max(self._max_index, max(j.index for j in new))

    def _deliver(self, index: int, res: JobResult) -> bool:
        """Hand a result to the trainer, once: False if this job was delivered already."""
        with self._lock:
            fresh = self._submitted.pop(index, None) is not None
        if fresh:
            self._out.put(res)
        return fresh

    def _deliver_settled(self) -> None:
        """Deliver submitted jobs whose items are settled in the file but not by us."""
        with self._lock:
            waiting = [i for i in self._submitted if i not in self._held]
        for i in waiting:
            row = self.store.item(job_key(i))
            if row is None:  # submitted after this round's enqueue: the next round has it
                continue
            if row["state"] == "done":  # sampled before (a crash): not sampled again
                self.counters["reused"] += self._deliver(i, result_from_body(i, json.loads(row["result"])))
            elif row["state"] == "failed":
                error = f"work store: {row['reason']}"
                self.counters["failed"] += self._deliver(i, JobResult(i, error=error, attempts=row["attempts"]))

    def _claim(self) -> None:
        """Claim every queued item of a submitted job and start it on the inner pool."""
        while self._max_index >= 0:
            item = self.store.claim(f"{self.worker}/{next(self._claims)}", self.lease_s,
                                    min_priority=-self._max_index)
            if item is None:
                return
            index = int(item.payload["job"])
            with self._lock:
                job = self._submitted.get(index)
                rerun = job is not None and index in self._held  # our claim expired unnoticed:
                if job is not None:                              # its run goes on, under this claim
                    self._held[index] = item
            if rerun:
                self.counters["reclaimed"] += 1
                continue
            if job is None:  # queued, yet neither asked for nor trained: left by another run
                self.store.cancel(item.key, "not a job of this run's remaining steps")
                continue
            self.counters["claimed"] += 1
            self.inner.submit(dataclasses.replace(job, attempt=item.attempt))

    def _settle(self, res: JobResult | None) -> None:
        if res is None:
            return
        with self._lock:
            item = self._held.pop(res.index, None)
        if item is None:  # a run of a claim we lost, or of a job delivered already
            self.counters["late_discarded"] += 1
            return
        if res.error is not None:
            ok = self.store.fail(item, res.error, retryable=False) == "failed"
        else:
            ok = self.store.complete(item, result_body(res)) > 0
        if ok:
            self.counters["completed" if res.error is None else "failed"] += self._deliver(res.index, res)
        else:  # the claim was lost meanwhile: the file says what happened to the item
            self.counters["lost_claims"] += 1
            self._wake.set()

    def _heartbeat(self) -> None:
        with self._lock:
            held = list(self._held.items())
        for index, item in held:
            if not self.store.heartbeat(item, self.lease_s):
                with self._lock:
                    self._held.pop(index, None)
                self.counters["lost_claims"] += 1
                self._wake.set()
