"""Env calls of the episode engine: started on the env pool, waited for with staged timeouts,
and the admission of sandboxed episodes.

Guarantees: a stage timeout counts from when a call *starts* running, never from when it was
queued (a call behind others in the pool is not taken for a hung one); a call that has run its
stage's timeout is abandoned and its episode fails with kind ``timeout``; admission of
sandboxed episodes depends only on the order of tasks and on waiting, never on polling, so
batch composition is independent of thread timing.
"""

from __future__ import annotations

import time
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from .episode import Episode

QUEUE_FACTOR = 10  # a call queued this many stage timeouts without starting is given up


class EnvCall:
    """An env call on the pool that notes when it starts: a stage timeout counts from there,
    so a call waiting behind others in the pool's queue is never taken for a hung one."""

    def __init__(self, ep: Episode, fn: Callable[[], Any]):
        self.ep, self.fn, self.started = ep, fn, None
        self.future: Future | None = None

    def __call__(self) -> Any:
        self.started = time.monotonic()
        return self.fn()

    def submit(self, pool: Executor) -> "EnvCall":
        self.future = pool.submit(self)
        return self

    def wait(self, timeout_s: float) -> bool:
        """True when the call ended; False once it has run ``timeout_s`` without ending, or
        has waited ``QUEUE_FACTOR * timeout_s`` without starting (every worker of the pool is
        held by an abandoned call: nothing queued will run)."""
        queued_until = time.monotonic() + QUEUE_FACTOR * timeout_s
        while True:
            started = self.started
            now = time.monotonic()
            left = min(0.05, queued_until - now) if started is None else started + timeout_s - now
            try:
                self.future.result(timeout=max(0.0, left))
                return True
            except FutureTimeout:
                if started is not None or time.monotonic() >= queued_until:
                    return False


def submit_all(pool: Executor, calls: list[tuple[Episode, Callable[[], Any]]]) -> list[EnvCall]:
    """Start each episode's env call on the pool; :func:`wait_all` collects them."""
    return [EnvCall(ep, fn).submit(pool) for ep, fn in calls]


def wait_all(calls: list[EnvCall], stage: str, timeout_s: float) -> None:
    """Wait for started env calls; a call that has run ``timeout_s`` is abandoned and its
    episode fails with kind ``timeout`` (its env is then closed by ``finish``, which kills a
    sandbox and so unblocks the call)."""
    for call in calls:
        if not call.wait(timeout_s):
            call.ep.timed_out(stage, timeout_s)


def run_all(pool: Executor, calls: list[tuple[Episode, Callable[[], Any]]], stage: str,
            timeout_s: float) -> None:
    """:func:`submit_all` then :func:`wait_all`."""
    wait_all(submit_all(pool, calls), stage, timeout_s)


def finished(call: EnvCall, timeout_s: float) -> None:
    """Wait for an episode's ``finish``; once it has run ``timeout_s``, abandon it."""
    if not call.wait(timeout_s):
        call.ep.abandon(timeout_s)


class Admission:
    """Which episodes play now: all, except that at most ``limits.max_sandbox_episodes``
    sandboxed episodes hold a sandbox at once, counted until their verification has ended.

    Why: an episode keeps its sandbox lease from its first tool call to ``close``, and a
    verifier may lease one more for hidden tests; with more live sandboxed episodes than the
    pool holds, leases would wait on each other forever. The cap (half the pool by default)
    keeps the demand within the pool. Admission is first come, first served in task order,
    and a slot is freed by *waiting* for the oldest verification, never by polling, so the
    batch composition does not depend on timing.
    """

    def __init__(self, eps: list[Episode], cap: int, verify_timeout_s: float):
        self.waiting, self.cap = list(eps), max(1, cap)
        self.live_sandboxed = 0
        self.verify_timeout_s = verify_timeout_s
        self.verifying: list[EnvCall] = []  # finish() of sandboxed episodes, oldest first

    @staticmethod
    def sandboxed(ep: Episode) -> bool:
        return bool(getattr(ep.env, "has_sandbox", False))

    def take(self, anything_live: bool) -> list[Episode]:
        out, keep = [], []
        for ep in self.waiting:
            if self.sandboxed(ep) and not self._slot(must=not anything_live and not out):
                keep.append(ep)
                continue
            self.live_sandboxed += int(self.sandboxed(ep))
            out.append(ep)
        self.waiting = keep
        return out

    def _slot(self, must: bool) -> bool:
        while self.live_sandboxed + len(self.verifying) >= self.cap:
            if not self.verifying:
                return must  # nothing will free a slot: only an idle engine may overrun
            finished(self.verifying.pop(0), self.verify_timeout_s)
        return True

    def ended(self, call: EnvCall) -> None:
        if self.sandboxed(call.ep):
            self.live_sandboxed -= 1
            self.verifying.append(call)
