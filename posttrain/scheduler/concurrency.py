"""Rollout concurrency matched to what the trainer consumes.

Two signals set the number of episodes allowed to run at once (``limit``):

- the ready queue between watermarks: at or above ``high_watermark`` groups waiting, the
  producer is ahead of the trainer, so the limit drops by one (and the local scheduler
  stops claiming, which also bounds how stale a waiting group can get); at or below
  ``low_watermark`` the trainer is about to starve, so the limit rises;
- Little's law: to keep up with a consumer taking ``rate`` groups/s when an episode takes
  ``latency`` s, about ``rate * latency`` episodes must be in flight; when rising, the limit
  jumps straight to that (plus one) instead of creeping up by one.

Guarantees: ``min_c <= limit <= max_c`` always. Not thread-safe by itself (the local
scheduler calls it from its dispatcher thread only).
"""

from __future__ import annotations

import math


class AdaptiveConcurrency:
    def __init__(self, min_c: int, max_c: int, low_wm: int, high_wm: int, ema: float = 0.2):
        self.min_c, self.max_c = min_c, max_c
        self.low_wm, self.high_wm = low_wm, high_wm
        self.limit = min_c
        self.ema = ema
        self.rate: float | None = None  # groups consumed per second
        self.latency: float | None = None  # seconds per episode
        self._last_take: float | None = None

    def observe_consumed(self, n: int, now: float) -> None:
        if self._last_take is not None and now > self._last_take:
            r = n / (now - self._last_take)
            self.rate = r if self.rate is None else (1 - self.ema) * self.rate + self.ema * r
        self._last_take = now

    def observe_latency(self, seconds: float) -> None:
        s = max(seconds, 1e-6)
        self.latency = s if self.latency is None else (1 - self.ema) * self.latency + self.ema * s

    def littles_law(self) -> int | None:
        if self.rate is None or self.latency is None:
            return None
        return int(math.ceil(self.rate * self.latency)) + 1

    def update(self, ready: int) -> int:
        if ready >= self.high_wm:
            self.limit = max(self.min_c, self.limit - 1)
        elif ready <= self.low_wm:
            target = max(self.limit + 1, self.littles_law() or 0)
            self.limit = min(self.max_c, target)
        return self.limit
