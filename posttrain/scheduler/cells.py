"""Live statistics of (domain, difficulty) cells, held as numpy arrays.

One row per cell. Per group of G rewards a cell gets (``update``):

- discounted pass/fail counts (a reward >= ``success_threshold`` is a pass), which with a
  Beta(``prior_alpha``, ``prior_beta``) prior give a posterior pass rate; the discount
  ``decay`` per group makes the statistics follow a policy that is learning (a window of
  about ``1 / (1 - decay)`` groups);
- a discounted mean of the within-group reward variance (population variance, so it is 0
  exactly when the group's rewards are all equal), with a prior of 0.25 (the largest
  variance of a reward in [0, 1]) worth one group, so an unseen cell looks learnable;
- lifetime counts (rollouts, passes, groups) and the step it was last seen.

From the posterior it predicts, before generation, the probability that a group of G
samples will have all-equal rewards (all pass or all fail) under the Beta-binomial
predictive: ``E[p^G] + E[(1-p)^G]`` = ``prod_k (a+k)/(a+b+k) + prod_k (b+k)/(a+b+k)``.
The learnability score of a cell is ``(1 - P(zero variance)) * expected variance``.

Guarantees: an update touches one row in O(G) Python arithmetic (no O(cells) work);
``state_dict``/``load_state_dict`` round-trip exactly (floats survive JSON unchanged).
Not covered: which cells are active or how they are weighted (see ``curriculum.py``).
For non-binary rewards the zero-variance prediction treats "all pass or all fail" as the
all-equal event; it is a prediction, and groups are also filtered after generation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PRIOR_VAR = 0.25
_FLOAT_FIELDS = ("s_eff", "f_eff", "var_sum", "var_w", "mean_sum")
_INT_FIELDS = ("count", "passes", "groups", "recent", "last_step")


def zero_variance_prob(alpha: np.ndarray | float, beta: np.ndarray | float, group_size: int):
    """Beta-binomial predictive probability that G samples all pass or all fail."""
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    all_pass = np.ones_like(a)
    all_fail = np.ones_like(a)
    for k in range(group_size):
        all_pass = all_pass * (a + k) / (a + b + k)
        all_fail = all_fail * (b + k) / (a + b + k)
    return all_pass + all_fail


class CellStats:
    """Statistics of C cells; row ``i`` is one (domain, difficulty) cell.

    The running sums are plain Python lists (an update reads and writes a handful of
    scalars, which numpy makes slow); the derived per-cell vectors the sampler needs —
    ``pzv``, ``score``, ``pass_rate_C`` — are numpy arrays kept current element by element.
    """

    def __init__(self, n_cells: int, *, group_size: int, success_threshold: float,
                 prior_alpha: float, prior_beta: float, decay: float):
        self.n = n_cells
        self.group_size = group_size
        self.success_threshold = success_threshold
        self.prior_alpha = prior_alpha
        self.prior_beta = prior_beta
        self.decay = decay
        for name in _FLOAT_FIELDS:
            setattr(self, name, [0.0] * n_cells)
        for name in _INT_FIELDS:
            setattr(self, name, [0] * n_cells)
        self.last_step = [-1] * n_cells
        self._refresh_all()

    # derived quantities -------------------------------------------------------------
    def array(self, name: str) -> np.ndarray:
        """One running statistic as a numpy array (a copy)."""
        return np.asarray(getattr(self, name))

    def pass_rate(self) -> np.ndarray:
        """Posterior mean pass rate of every cell (the prior mean where unseen)."""
        return self.pass_rate_C.copy()

    def reward_var(self) -> np.ndarray:
        """Expected within-group reward variance of every cell."""
        return (_PRIOR_VAR + self.array("var_sum")) / (1.0 + self.array("var_w"))

    def reward_mean(self) -> np.ndarray:
        """Discounted mean reward (NaN where unseen)."""
        w = self.array("var_w")
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(w > 0, self.array("mean_sum") / np.maximum(w, 1e-300), np.nan)

    def _refresh_all(self) -> None:
        a = self.prior_alpha + self.array("s_eff")
        b = self.prior_beta + self.array("f_eff")
        self.pass_rate_C = a / (a + b)
        self.pzv = zero_variance_prob(a, b, self.group_size)
        self.score = (1.0 - self.pzv) * self.reward_var()

    def _refresh(self, i: int) -> None:
        a = self.prior_alpha + self.s_eff[i]
        b = self.prior_beta + self.f_eff[i]
        all_pass = all_fail = 1.0
        for k in range(self.group_size):
            all_pass *= (a + k) / (a + b + k)
            all_fail *= (b + k) / (a + b + k)
        pzv = all_pass + all_fail
        var = (_PRIOR_VAR + self.var_sum[i]) / (1.0 + self.var_w[i])
        self.pass_rate_C[i] = a / (a + b)
        self.pzv[i] = pzv
        self.score[i] = (1.0 - pzv) * var

    # updates ------------------------------------------------------------------------
    def update(self, i: int, rewards_G: list[float] | tuple[float, ...], step: int) -> float:
        """Fold one group's rewards into cell ``i``; returns the group's reward variance."""
        g = len(rewards_G)
        if g == 0:
            return 0.0
        thr = self.success_threshold
        total = 0.0
        passes = 0
        for r in rewards_G:
            total += r
            if r >= thr:
                passes += 1
        mean = total / g
        var = 0.0
        for r in rewards_G:
            var += (r - mean) * (r - mean)
        var /= g
        d = self.decay
        self.s_eff[i] = d * self.s_eff[i] + passes
        self.f_eff[i] = d * self.f_eff[i] + (g - passes)
        self.var_sum[i] = d * self.var_sum[i] + var
        self.mean_sum[i] = d * self.mean_sum[i] + mean
        self.var_w[i] = d * self.var_w[i] + 1.0
        self.count[i] += g
        self.passes[i] += passes
        self.groups[i] += 1
        self.recent[i] += 1
        self.last_step[i] = step
        self._refresh(i)
        return var

    # persistence --------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {name: list(getattr(self, name)) for name in _FLOAT_FIELDS + _INT_FIELDS}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name in _FLOAT_FIELDS + _INT_FIELDS:
            values = list(state[name])
            if len(values) != self.n:
                raise ValueError(f"cell state {name!r} has {len(values)} rows, expected {self.n}")
            cast = float if name in _FLOAT_FIELDS else int
            setattr(self, name, [cast(v) for v in values])
        self._refresh_all()
