"""Confidence intervals: Wilson for proportions, percentile bootstrap over tasks for the rest.

Guarantees:
- :func:`wilson_interval` is the score interval for a binomial proportion; it stays inside
  [0, 1] and is sensible at 0 and n successes (where the normal interval collapses);
- :func:`bootstrap_ci` resamples *tasks* (the unit that was drawn at random), never the
  samples inside a task, with a seeded generator: same inputs, same interval;
- intervals always contain their point estimate.

It does not correct for multiple comparisons (the regression gate does, see
:mod:`posttrain.eval.paired`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval at level ``level``."""

    value: float
    low: float
    high: float
    level: float = 0.95
    method: str = ""

    def to_dict(self) -> dict[str, float | str]:
        return {"value": self.value, "low": self.low, "high": self.high,
                "level": self.level, "method": self.method}


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``trials``."""
    if trials <= 0:
        raise ValueError("wilson_interval needs at least one trial")
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    z = _z(level)
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(p, min(low, p), max(high, p), level, "wilson")


def bootstrap_ci(values: Sequence[float], level: float = 0.95, resamples: int = 2000,
                 seed: int = 0, statistic: Callable[[np.ndarray], np.ndarray] | None = None
                 ) -> Interval:
    """Percentile bootstrap of the mean (or ``statistic``) of per-task ``values``.

    ``statistic`` maps a ``(resamples, n)`` array to ``resamples`` numbers; the default is
    the row mean. One task gives a degenerate interval at its value.
    """
    _z(level)
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    stat = statistic or (lambda a: a.mean(axis=-1))
    point = float(stat(x[None, :])[0])
    if x.size == 1 or np.all(x == x[0]):
        return Interval(point, point, point, level, "bootstrap")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    boot = stat(x[idx])
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return Interval(point, float(min(low, point)), float(max(high, point)), level, "bootstrap")
