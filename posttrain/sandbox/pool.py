"""A warm pool of sandboxes, keyed by template, limits and network policy.

What it is: :class:`SandboxPool` keeps idle sandboxes ready per key. ``acquire`` hands one out
(waiting for one of the same key that is being reset, else starting one, within
``max_total``); ``release`` restores it to the clean
snapshot taken right after it started (in a background thread, so the caller does not wait)
and puts it back, or discards it when the reset fails. Idle sandboxes are health-checked
(``ping``) before being handed out after ``health_idle_s``.
``lease`` is the context-manager form. A background thread keeps ``warm`` sandboxes idle per
key that has been used or ``prewarm``-ed.

Guarantees:
- a sandbox handed out is in its clean state (a lease that changed nothing, as the sandbox
  proves with ``unchanged_since``, needs no reset): its work tree, ``/tmp``, home and ``/dev/shm``
  are those of the template (nothing persists from one lease to the next), no process of the
  previous lease is alive (each command's processes die with it);
- at most ``max_total`` sandboxes exist at once (``acquire`` waits, then raises
  ``SandboxError`` after the claim budget ``Timeouts.create_s``);
- a sandbox that fails its restore or health check is closed and replaced, never handed out;
- :meth:`metrics` reports ``sandbox/`` keys: acquire latency (p50, p90), in use, idle,
  created, recycled, discarded.

Does not: share a sandbox between two leases at once, or keep sandboxes past ``close()``.
"""

from __future__ import annotations

import queue
import statistics
import threading
import time
from collections import deque

from posttrain.core.errors import SandboxError

from .factory import make_sandbox
from .policy import Limits, NetworkPolicy, Timeouts
from .template import Template


class _Key(tuple):
    pass


def _key(template: Template | None, limits: Limits | None, network: NetworkPolicy | None):
    return (template or Template(), limits or Limits(), network or NetworkPolicy())


class SandboxPool:
    def __init__(self, *, backend: str = "auto", max_total: int = 8, warm: int = 1,
                 timeouts: Timeouts | None = None, health_idle_s: float = 30.0,
                 untrusted: bool = True):
        self.backend = backend
        self.max_total = max_total
        self.warm = warm
        self.timeouts = timeouts or Timeouts()
        self.health_idle_s = health_idle_s
        self.untrusted = untrusted
        self._cond = threading.Condition()
        self._idle: dict[tuple, list] = {}  # key -> [(sandbox, clean_id, idle_since)]
        self._keys: set = set()
        self._leased: dict[int, tuple] = {}  # id(sandbox) -> (key, clean_id)
        self._starting = 0
        self._resetting = 0
        self._resetting_key: dict = {}  # key -> sandboxes of that key being reset
        self._resets: queue.Queue = queue.Queue()
        self._closed = False
        self._acquire_ms: deque = deque(maxlen=2000)
        self.counts = {"created": 0, "recycled": 0, "discarded": 0}
        self._filler = threading.Thread(target=self._fill_loop, name="posttrain-sandbox-pool",
                                        daemon=True)
        self._filler.start()
        self._resetter = threading.Thread(target=self._reset_loop, name="posttrain-sandbox-reset",
                                          daemon=True)
        self._resetter.start()

    # --- public API -------------------------------------------------------------------------

    def prewarm(self, template=None, limits=None, network=None, wait: bool = True) -> None:
        key = _key(template, limits, network)
        with self._cond:
            self._keys.add(key)
            self._cond.notify_all()
            if wait:
                deadline = time.monotonic() + self.timeouts.create_s
                while len(self._idle.get(key, [])) < self.warm and time.monotonic() < deadline:
                    if self._total() >= self.max_total:
                        break
                    self._cond.wait(0.05)

    def acquire(self, template=None, limits=None, network=None, timeout: float | None = None):
        """A clean sandbox for this key; give it back with :meth:`release`."""
        key = _key(template, limits, network)
        t0 = time.perf_counter()
        deadline = time.monotonic() + (timeout or self.timeouts.create_s)
        with self._cond:
            self._keys.add(key)
            while True:
                if self._closed:
                    raise SandboxError("pool is closed")
                idle = self._idle.get(key)
                if idle:
                    sb, clean, since = idle.pop()
                    break
                if self._resetting_key.get(key):  # one of ours is back in milliseconds
                    self._cond.wait(max(0.0, deadline - time.monotonic()))
                    if time.monotonic() < deadline:
                        continue
                if self._total() < self.max_total:
                    self._starting += 1
                    sb = None
                    break
                if self._evict_other(key):
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SandboxError(f"no sandbox free within {timeout or self.timeouts.create_s}s "
                                       f"(max_total={self.max_total})")
                self._cond.wait(left)
        if sb is None:
            sb, clean = self._create(key)
        elif time.monotonic() - since > self.health_idle_s and not sb.ping():
            self._discard(sb)
            return self.acquire(template, limits, network, timeout)
        with self._cond:
            self._leased[id(sb)] = (key, clean)
            self._cond.notify_all()  # the filler may top the idle list up again
        self._acquire_ms.append((time.perf_counter() - t0) * 1000)
        return sb

    def release(self, sb, wait: bool = False) -> None:
        """Give ``sb`` back. It is reset to its clean snapshot (in the background unless
        ``wait``) and only then handed out again; one that cannot reset is discarded."""
        with self._cond:
            key, clean = self._leased.pop(id(sb))
            self._resetting += 1
            self._resetting_key[key] = self._resetting_key.get(key, 0) + 1
        if wait:
            self._reset(sb, key, clean)
        else:
            self._resets.put((sb, key, clean))

    def _reset_loop(self) -> None:
        while True:
            item = self._resets.get()
            if item is None:
                return
            self._reset(*item)

    def _reset(self, sb, key, clean) -> None:
        try:
            if self._closed or sb.closed:
                raise SandboxError("closed")
            unchanged = getattr(sb, "unchanged_since", None)
            if unchanged is None or not unchanged(clean):  # nothing written: nothing to undo
                sb.restore(clean)
        except Exception:  # noqa: BLE001 - a sandbox that cannot reset is never reused
            with self._cond:
                self._resetting -= 1
                self._resetting_key[key] -= 1
            self._discard(sb)
            return
        with self._cond:
            self._resetting -= 1
            self._resetting_key[key] -= 1
            self.counts["recycled"] += 1
            self._idle.setdefault(key, []).append((sb, clean, time.monotonic()))
            self._cond.notify_all()

    def lease(self, template=None, limits=None, network=None, timeout=None):
        pool = self

        class _Lease:
            def __enter__(self_inner):
                self_inner.sb = pool.acquire(template, limits, network, timeout)
                return self_inner.sb

            def __exit__(self_inner, *exc):
                pool.release(self_inner.sb)

        return _Lease()

    def metrics(self) -> dict:
        with self._cond:
            xs = sorted(self._acquire_ms)
            idle = sum(len(v) for v in self._idle.values())
            out = {"sandbox/in_use": len(self._leased), "sandbox/idle": idle,
                   "sandbox/created": self.counts["created"],
                   "sandbox/recycled": self.counts["recycled"],
                   "sandbox/discarded": self.counts["discarded"]}
        if xs:
            out["sandbox/acquire_ms_p50"] = statistics.median(xs)
            out["sandbox/acquire_ms_p90"] = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
        return out

    def close(self) -> None:
        self._resets.put(None)
        self._resetter.join(timeout=self.timeouts.create_s)
        with self._cond:
            self._closed = True
            idle = [sb for v in self._idle.values() for sb, _, _ in v]
            self._idle.clear()
            self._cond.notify_all()
        for sb in idle:
            sb.close()
        self._filler.join(timeout=self.timeouts.create_s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- internals --------------------------------------------------------------------------

    def _total(self) -> int:
        return (len(self._leased) + sum(len(v) for v in self._idle.values()) + self._starting
                + self._resetting)

    def _evict_other(self, key) -> bool:
        """Free capacity by closing an idle sandbox of another key (called with the lock held)."""
        for other, idle in self._idle.items():
            if other != key and idle:
                sb, _, _ = idle.pop(0)
                threading.Thread(target=sb.close, daemon=True).start()
                self.counts["discarded"] += 1
                return True
        return False

    def _create(self, key):
        template, limits, network = key
        try:
            sb = make_sandbox(self.backend, template=template, limits=limits,
                              timeouts=self.timeouts, network=network, untrusted=self.untrusted)
            clean = sb.snapshot()
        except BaseException:
            with self._cond:
                self._starting -= 1
                self._cond.notify_all()
            raise
        with self._cond:
            self._starting -= 1
            self.counts["created"] += 1
        return sb, clean

    def _discard(self, sb) -> None:
        try:
            sb.close()
        finally:
            with self._cond:
                self.counts["discarded"] += 1
                self._cond.notify_all()

    def _fill_loop(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                need = [k for k in self._keys if len(self._idle.get(k, [])) < self.warm]
                if not need or self._total() >= self.max_total:
                    self._cond.wait(0.5)
                    continue
                key = need[0]
                self._starting += 1
            try:
                sb, clean = self._create(key)
            except Exception:  # noqa: BLE001 - retried on the next round; acquire reports errors
                time.sleep(0.5)
                continue
            with self._cond:
                if self._closed:
                    sb.close()
                    return
                self._idle.setdefault(key, []).append((sb, clean, time.monotonic()))
                self._cond.notify_all()
