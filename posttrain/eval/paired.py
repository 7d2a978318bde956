"""Paired significance tests of two versions on the same items.

- :func:`mcnemar_exact` — for one binary outcome per item on each side: an exact binomial
  test on the discordant pairs (base passed / new failed vs. the reverse);
- :func:`paired_bootstrap` — for per-item rates or rewards in [0, 1] (several samples per
  item): the mean paired difference, a percentile interval, and a one-sided p-value from the
  bootstrap distribution re-centred on the null of no difference;
- :func:`paired_z` — the normal-approximation gain of two evaluations of the same tasks
  (one reward each, ``None`` where a task failed): the gain, the standard error of the
  per-task differences and z — the before/after figure of a training run;
- :func:`holm` — Holm–Bonferroni adjustment across domains, so that a hundred domains do not
  raise five false alarms at α = 0.05.

Guarantees: identical inputs give delta 0 and p-value 1 (an identical pair never fails a
gate); every generator is seeded. p-values here are one-sided *for a regression* (new worse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class PairedResult:
    """Outcome of one paired comparison (new − base)."""

    method: str
    items: int
    delta: float
    low: float
    high: float
    p_regression: float
    p_improvement: float
    base_mean: float
    new_mean: float
    discordant: tuple[int, int] | None = None  # (base-only passes, new-only passes)

    def to_dict(self) -> dict:
        return {"method": self.method, "items": self.items, "delta": self.delta,
                "low": self.low, "high": self.high, "p_regression": self.p_regression,
                "p_improvement": self.p_improvement, "base_mean": self.base_mean,
                "new_mean": self.new_mean,
                "discordant": list(self.discordant) if self.discordant else None}


def _binom_tail_ge(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exact via integers."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n


def _as_pair(base: Sequence[float], new: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    b, n = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if b.shape != n.shape or b.ndim != 1:
        raise ValueError(f"paired tests need two equal-length 1-D arrays, got {b.shape} and {n.shape}")
    if b.size == 0:
        raise ValueError("paired tests need at least one item")
    return b, n


def mcnemar_exact(base: Sequence[bool], new: Sequence[bool], level: float = 0.95) -> PairedResult:
    """Exact McNemar test; ``low``/``high`` bound the paired difference by a normal-approximation CI."""
    b, n = _as_pair([float(x) for x in base], [float(x) for x in new])
    lost = int(np.sum((b == 1) & (n == 0)))
    won = int(np.sum((b == 0) & (n == 1)))
    m = b.size
    delta = (won - lost) / m
    p_reg = _binom_tail_ge(lost, lost + won) if lost + won else 1.0
    p_imp = _binom_tail_ge(won, lost + won) if lost + won else 1.0
    # Interval of the difference of paired proportions (normal approximation, for display).
    var = ((lost + won) / m - delta * delta) / m
    half = _zq(level) * math.sqrt(max(var, 0.0))
    return PairedResult("mcnemar_exact", m, delta, delta - half, delta + half, p_reg, p_imp,
                        float(b.mean()), float(n.mean()), (lost, won))


def _zq(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


def paired_bootstrap(base: Sequence[float], new: Sequence[float], strata: Sequence[str] | None = None,
                     resamples: int = 5000, seed: int = 0, level: float = 0.95) -> PairedResult:
    """Paired bootstrap of mean(new − base); with ``strata`` the statistic is the mean of stratum means
    and items are resampled within their stratum (each domain counts once, whatever its size)."""
    b, n = _as_pair(base, new)
    d = n - b
    groups = _strata_index(strata, d.size)
    point = float(np.mean([d[g].mean() for g in groups]))
    if np.all(d == 0):
        return PairedResult("paired_bootstrap", d.size, 0.0, 0.0, 0.0, 1.0, 1.0,
                            float(b.mean()), float(n.mean()))
    rng = np.random.default_rng(seed)
    boot = np.zeros(resamples)
    for g in groups:
        idx = rng.integers(0, g.size, size=(resamples, g.size))
        boot += d[g][idx].mean(axis=1)
    boot /= len(groups)
    alpha = (1 - level) / 2
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    centred = boot - point  # the bootstrap distribution under "no difference"
    p_reg = float((1 + np.sum(centred <= point)) / (resamples + 1))
    p_imp = float((1 + np.sum(centred >= point)) / (resamples + 1))
    return PairedResult("paired_bootstrap", d.size, point, float(min(low, point)),
                        float(max(high, point)), min(p_reg, 1.0), min(p_imp, 1.0),
                        float(b.mean()), float(n.mean()))


def _strata_index(strata: Sequence[str] | None, size: int) -> list[np.ndarray]:
    if strata is None:
        return [np.arange(size)]
    if len(strata) != size:
        raise ValueError(f"strata has {len(strata)} labels for {size} items")
    labels = np.asarray(list(strata))
    return [np.flatnonzero(labels == s) for s in sorted(set(strata))]


def paired_z(before: Sequence[float | None], after: Sequence[float | None]) -> dict[str, Any]:
    """Gain of ``after`` over ``before`` on the same tasks: ``before``, ``after`` (means over the
    tasks scored both times), ``gain``, ``se`` (sd of the per-task differences / sqrt n), ``z``
    (gain / se; 0 when nothing changed, None when every task changed alike) and ``n`` (tasks scored both times)."""
    if len(before) != len(after):
        raise ValueError(f"paired_z: {len(before)} tasks before, {len(after)} after; "
                         "compare evaluations of the same held-out tasks")
    both = [(b, a) for b, a in zip(before, after) if b is not None and a is not None]
    n = len(both)
    if not n:
        return {"before": 0.0, "after": 0.0, "gain": 0.0, "se": 0.0, "z": 0.0, "n": 0}
    diffs = [a - b for b, a in both]
    gain = sum(diffs) / n
    sd = math.sqrt(sum((x - gain) ** 2 for x in diffs) / max(1, n - 1))
    se = sd / math.sqrt(n)
    # se 0 with a gain: every task moved by the same amount; z is undefined (None keeps the
    # summary valid JSON, where inf would not be)
    z = gain / se if se else (None if gain else 0.0)
    return {"before": sum(b for b, _ in both) / n, "after": sum(a for _, a in both) / n,
            "gain": gain, "se": se, "z": z, "n": n}


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm–Bonferroni adjusted p-values (monotone, capped at 1)."""
    order = sorted(p_values, key=lambda k: p_values[k])
    m = len(order)
    adjusted: dict[str, float] = {}
    running = 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (m - i) * p_values[key]))
        adjusted[key] = running
    return adjusted
