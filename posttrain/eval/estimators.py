"""Unbiased estimators of multi-attempt success from n samples with c successes.

- :func:`pass_at_k` — probability that at least one of k attempts succeeds,
  ``1 − C(n−c, k)/C(n, k)`` (Chen et al., 2021);
- :func:`pass_hat_k` — "pass^k", probability that *all* k attempts succeed, ``C(c, k)/C(n, k)``.

Guarantees:
- both are computed as products in log space (``log1p`` terms summed with ``math.fsum``,
  then ``expm1``/``exp``), so n in the thousands or millions neither overflows nor loses the
  small tail: the result matches exact rational arithmetic to ~1e-12 relative;
- ``pass_at_k`` is exactly 1.0 when ``n − c < k`` (every k-subset holds a success) and exactly
  0.0 when ``c == 0``; ``pass_hat_k`` is exactly 0.0 when ``c < k`` and exactly 1.0 when
  ``c == n``;
- ``n < k`` raises :class:`ValueError`: the estimator is undefined there, and silently
  returning the empirical rate would compare unlike things across runs.

It does not decide what counts as a success (see :mod:`posttrain.eval.samples`).
"""

from __future__ import annotations

import math
from typing import Sequence


def _check(n: int, c: int, k: int) -> None:
    for name, v in (("n", n), ("c", c), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if n < k:
        raise ValueError(
            f"pass@{k} is undefined with only n={n} samples per task: sample at least k={k} "
            f"(use --n >= {k}) or drop k={k}"
        )


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: ``1 − C(n−c, k)/C(n, k)`` as ``1 − Π_{i=n−c+1}^{n} (1 − k/i)``."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    if c == 0:
        return 0.0
    log_fail = math.fsum(math.log1p(-k / i) for i in range(n - c + 1, n + 1))
    return -math.expm1(log_fail)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k attempts succeed): ``C(c, k)/C(n, k) = Π_{i=0}^{k−1} (c−i)/(n−i)``."""
    _check(n, c, k)
    if c < k:
        return 0.0
    if c == n:
        return 1.0
    log_all = math.fsum(math.log((c - i) / (n - i)) for i in range(k))
    return math.exp(log_all)


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """Mean of per-task pass@k over ``(n, c)`` pairs (the dataset-level pass@k)."""
    if not counts:
        raise ValueError("mean_pass_at_k needs at least one task")
    return math.fsum(pass_at_k(n, c, k) for n, c in counts) / len(counts)


def mean_pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """Mean of per-task pass^k over ``(n, c)`` pairs."""
    if not counts:
        raise ValueError("mean_pass_hat_k needs at least one task")
    return math.fsum(pass_hat_k(n, c, k) for n, c in counts) / len(counts)
