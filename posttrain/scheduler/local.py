"""The local scheduler: runs episodes from the work store with bounded, adaptive concurrency.

``episode_fn(item, ctx) -> TrajectoryGroup`` runs one item (G rollouts of one task). Each runs
on its own thread: episodes wait on inference servers and sandbox subprocesses, so threads
are the right tool (CPU-heavy verification already runs in sandbox processes; a process or
Ray pool belongs to ``posttrain.distributed``). A dispatcher thread claims items while
fewer than ``limit`` episodes run and fewer than ``high_watermark`` groups wait.

Outcomes:
- an infrastructure exception (``retry.classify``) or a group whose every trajectory failed
  on infrastructure: ``store.fail(retryable=True)`` with exponential backoff + jitter, up to
  ``max_attempts``; any other exception is a bug: failed at once with its message;
- a returned group is the task's result whatever its score (task failures are data): it is
  cleaned (``filters.py``), completed in the store with its rewards (and the group itself,
  so a crash loses no finished work), passed to ``on_group`` (the curriculum update), then
  dropped if zero-variance/duplicate/too small, else queued for the consumer (``take``).

Staged timeouts: a claim holds a lease renewed every ``lease_s / 3`` (a dead process stops
renewing, and the item is re-queued); after ``episode_timeout_s`` the episode's cancel event
is set (a cooperative rollout loop returns what it has, recorded as a timeout); after
``hard_grace_s`` more the thread is abandoned, its slot freed, the item retried, and anything
it writes later is fenced off by the store. ``queue_timeout_s`` fails items never started.
Long episodes call ``ctx.checkpoint(data)``; a retry gets it back as ``ctx.resume``.

Not covered: killing a hung thread (Python cannot); an abandoned one runs on until it returns.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable

from posttrain.core.serde import to_dict
from posttrain.core.types import TrajectoryGroup

from .concurrency import AdaptiveConcurrency
from .config import LocalConfig, local_config
from .filters import GroupFilter
from .retry import BUG, CANCELLED, INFRA, Cancelled, WorkerLost, backoff_s, classify
from .store import WorkItem, WorkStore


@dataclass
class EpisodeContext:
    """What an episode may use: its cancel signal, its checkpoint, its deadline."""

    item: WorkItem
    store: WorkStore
    deadline: float
    cancel_event: threading.Event = field(default_factory=threading.Event)
    cancel_reason: str | None = None  # timeout | shutdown | cancel | lost

    def cancel(self, reason: str) -> None:
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    @property
    def resume(self) -> Any:
        """The checkpoint a previous attempt saved (None on a first attempt)."""
        return self.item.checkpoint

    def checkpoint(self, data: Any) -> None:
        """Save progress; raises Cancelled when this claim was lost (someone else holds it)."""
        if not self.store.save_checkpoint(self.item, data):
            raise Cancelled(f"claim on {self.item.key} was lost")

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled(f"episode {self.item.key} cancelled")


@dataclass(frozen=True)
class ReadyGroup:
    """A cleaned, informative group ready for the trainer; ``ack`` it once it is durable."""

    item_id: int
    key: str
    payload: dict[str, Any]
    group: TrajectoryGroup


@dataclass
class _Live:
    item: WorkItem
    ctx: EpisodeContext
    thread: threading.Thread
    started: float
    last_beat: float
    abandoned: bool = False


EpisodeFn = Callable[[WorkItem, EpisodeContext], TrajectoryGroup]
OnGroup = Callable[[WorkItem, TrajectoryGroup, int], None]  # (item, cleaned group, seq)


class LocalScheduler:
    def __init__(self, store: WorkStore, episode_fn: EpisodeFn, config: LocalConfig | dict | None = None,
                 *, on_group: OnGroup | None = None, worker_id: str | None = None, seed: int = 0,
                 persist_groups: bool = True):
        self.cfg = cfg = local_config(config)
        self.store, self.episode_fn, self.on_group = store, episode_fn, on_group
        self.persist_groups = persist_groups
        self.worker_id = worker_id or f"local-{uuid.uuid4().hex[:8]}"
        self.filter = GroupFilter(cfg)
        self.conc = AdaptiveConcurrency(cfg.min_concurrency, cfg.max_concurrency,
                                        cfg.low_watermark, cfg.high_watermark)
        self.counters: Counter[str] = Counter()
        self._count_lock = threading.Lock()
        self.max_live_seen = 0
        self._rng = random.Random(seed)
        self._claims = itertools.count()
        self._live: dict[int, _Live] = {}
        self._ready: deque[ReadyGroup] = deque()
        self._cv = threading.Condition()
        self._hook_lock = threading.Lock()
        self._stopping = threading.Event()
        self._dispatcher: threading.Thread | None = None
        self._last_stale_check = 0.0

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "LocalScheduler":
        if self._dispatcher is None:
            self._stopping.clear()
            self._dispatcher = threading.Thread(target=self._dispatch, name="sched-dispatch", daemon=True)
            self._dispatcher.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop claiming, cancel running episodes and give their items back to the queue."""
        self._stopping.set()
        with self._cv:
            self._cv.notify_all()
        if self._dispatcher is not None:  # first: no new claims while we wind down
            self._dispatcher.join(timeout)
            self._dispatcher = None
        with self._cv:
            live = list(self._live.values())
        for lv in live:
            lv.ctx.cancel("shutdown")
        end = time.monotonic() + timeout
        for lv in live:
            lv.thread.join(max(0.0, end - time.monotonic()))
        with self._cv:
            for lv in self._live.values():  # still running: give back, fenced against late writes
                if not lv.abandoned:
                    self.store.release(lv.item)
                    lv.abandoned = True

    def cancel(self, key: str) -> bool:
        """Fail an item for good and ask its episode (if running) to stop."""
        ok = self.store.cancel(key)
        with self._cv:
            for lv in self._live.values():
                if lv.item.key == key:
                    lv.ctx.cancel("cancel")
        self._count("cancelled", ok)
        return ok

    # ----------------------------------------------------------------- consumer side
    def take(self, n: int, timeout: float | None = None) -> list[ReadyGroup]:
        """Up to ``n`` ready groups, waiting up to ``timeout`` s for the first one."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while not self._ready:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return []
                self._cv.wait(left)
            out = [self._ready.popleft() for _ in range(min(n, len(self._ready)))]
            self.conc.observe_consumed(len(out), time.monotonic())
            self._cv.notify_all()
        return out

    def redeliver(self, groups: list[ReadyGroup]) -> None:
        """Queue groups completed before a restart but never acknowledged by the consumer."""
        with self._cv:
            for g in groups:
                self.filter.group_verdict(g.group)  # remember them, so a duplicate is caught
                self._ready.append(g)
            self._cv.notify_all()
        self._count("redelivered", len(groups))

    def ready_count(self) -> int:
        with self._cv:
            return len(self._ready)

    def live_count(self) -> int:
        with self._cv:
            return sum(not lv.abandoned for lv in self._live.values())

    # ----------------------------------------------------------------- dispatcher
    def _dispatch(self) -> None:
        cfg = self.cfg
        while not self._stopping.is_set():
            now = time.monotonic()
            self._watch(now)
            if cfg.queue_timeout_s and now - self._last_stale_check > 1.0:
                self._last_stale_check = now
                self._count("queue_timeout", self.store.fail_stale(cfg.queue_timeout_s))
            with self._cv:
                limit = self.conc.update(len(self._ready))
                room = self.live_count_unlocked() < limit and len(self._ready) < cfg.high_watermark
            try:
                item = self.store.claim(f"{self.worker_id}/{next(self._claims)}", cfg.lease_s) if room else None
            except Exception:  # a busy or failing database must not kill the dispatcher
                self._count("store_errors")
                item = None
            if item is not None:
                self._launch(item)
                continue
            with self._cv:
                self._cv.wait(cfg.poll_s)

    def live_count_unlocked(self) -> int:
        return sum(not lv.abandoned for lv in self._live.values())

    def _launch(self, item: WorkItem) -> None:
        now = time.monotonic()
        ctx = EpisodeContext(item, self.store, deadline=now + self.cfg.episode_timeout_s)
        th = threading.Thread(target=self._run, args=(item, ctx), name=f"episode-{item.key}", daemon=True)
        with self._cv:
            self._live[item.id] = _Live(item, ctx, th, now, now)
            self.max_live_seen = max(self.max_live_seen, self.live_count_unlocked())
        self._count("started")
        th.start()

    def _watch(self, now: float) -> None:
        """Renew leases; soft-cancel overdue episodes; abandon hung ones."""
        cfg = self.cfg
        with self._cv:
            live = [lv for lv in self._live.values() if not lv.abandoned]
        for lv in live:
            if now - lv.last_beat > cfg.lease_s / 3:
                lv.last_beat = now
                if not self.store.heartbeat(lv.item, cfg.lease_s):
                    lv.ctx.cancel("lost")  # cancelled or expired: stop wasting work on it
            if now > lv.ctx.deadline and not lv.ctx.cancelled:
                lv.ctx.cancel("timeout")
                self._count("soft_timeout")
            if now > lv.ctx.deadline + cfg.hard_grace_s:
                with self._cv:
                    lv.abandoned = True
                    self._cv.notify_all()
                self._count("abandoned")
                self._retry(lv.item, WorkerLost(f"episode hung past its hard timeout "
                                                f"({cfg.episode_timeout_s + cfg.hard_grace_s:g} s)"))

    # ----------------------------------------------------------------- episode thread
    def _run(self, item: WorkItem, ctx: EpisodeContext) -> None:
        t0 = time.monotonic()
        try:
            outcome: Any = self.episode_fn(item, ctx)
        except BaseException as exc:  # the worker boundary: classify, never propagate
            outcome = exc
        with self._cv:
            lv = self._live.get(item.id)
            abandoned = lv is None or lv.abandoned
        try:
            if not abandoned:
                self.conc.observe_latency(time.monotonic() - t0)
                self._settle(item, ctx, outcome)
            else:
                self._count("late_results_discarded")
        finally:
            with self._cv:
                self._live.pop(item.id, None)
                self._cv.notify_all()

    def _settle(self, item: WorkItem, ctx: EpisodeContext, outcome: Any) -> None:
        if isinstance(outcome, BaseException):
            kind = classify(outcome)
            if kind == INFRA:
                self._retry(item, outcome)
            elif kind == CANCELLED and ctx.cancel_reason == "timeout":
                # it gave up at the soft timeout without a partial result: an attempt spent
                self._retry(item, TimeoutError(f"episode passed {self.cfg.episode_timeout_s:g} s"))
            elif kind == CANCELLED:
                # shutdown gives the item back; a user cancel or a lost claim is settled already
                self._count("released" if self.store.release(item) else "cancel_seen")
            else:
                self._count("bug_failures")
                self.store.fail(item, f"{type(outcome).__name__}: {outcome}"[:500], retryable=False)
            return
        if not isinstance(outcome, TrajectoryGroup):
            self._count("bug_failures")
            self.store.fail(item, f"episode returned {type(outcome).__name__}, not TrajectoryGroup",
                            retryable=False)
            return
        self._accept(item, outcome)

    def _retry(self, item: WorkItem, exc: BaseException) -> None:
        wait = backoff_s(item.attempt, self.cfg.backoff_base_s, self.cfg.backoff_max_s, self._rng)
        state = self.store.fail(item, f"{getattr(exc, 'kind', INFRA)}: {type(exc).__name__}: {exc}"[:500],
                                retryable=True, backoff_s=wait, max_attempts=self.cfg.max_attempts)
        self._count("retried" if state == "queued" else "infra_failures" if state == "failed" else "lost")

    def _accept(self, item: WorkItem, group: TrajectoryGroup) -> None:
        clean, dropped = self.filter.clean(group)
        if not clean.trajectories and dropped.get("infra_error", 0) == len(group.trajectories) > 0:
            self._retry(item, WorkerLost("every trajectory of the group failed on infrastructure"))
            return
        verdict = self.filter.group_verdict(clean)
        summary: dict[str, Any] = dict(rewards=clean.rewards_G, dropped=dropped, verdict=verdict,
                                       policy_version=clean.policy_version)
        if verdict is None and self.persist_groups:
            summary["group"] = to_dict(clean)
        # complete + on_group under one lock: the order of completions (their seq) is the
        # order of curriculum updates, so a replay after a crash rebuilds the same statistics
        with self._hook_lock:
            seq = self.store.complete(item, summary)
            if not seq:
                self._count("lost")  # another holder owns it now; its result stands
                return
            if self.on_group is not None and clean.trajectories:
                self.on_group(item, clean, seq)
        self._count("completed")
        if verdict is not None:
            self._count(f"dropped_{verdict}")
            return
        with self._cv:
            self._ready.append(ReadyGroup(item.id, item.key, item.payload, clean))
            self._cv.notify_all()

    def _count(self, key: str, n: int = 1) -> None:
        with self._count_lock:
            self.counters[key] += n

    # ----------------------------------------------------------------- metrics
    def metrics(self) -> dict[str, float]:
        out = {f"sched/local/{k}": float(v) for k, v in sorted(self.counters.items())}
        out.update({f"sched/filter/{k}": float(v) for k, v in sorted(self.filter.counts.items())})
        out["sched/local/concurrency_limit"] = float(self.conc.limit)
        out["sched/local/live"] = float(self.live_count())
        out["sched/local/ready"] = float(self.ready_count())
        out["sched/local/max_live_seen"] = float(self.max_live_seen)
        if self.conc.rate is not None:
            out["sched/local/consume_rate"] = self.conc.rate
        if self.conc.latency is not None:
            out["sched/local/episode_latency_s"] = self.conc.latency
        return out
