"""Outcome advantages from group rewards (the zero-variance group filter is in
:mod:`posttrain.scheduler.filters`, with the other filters of the training path).

Every registered estimator has one signature, batch-level so that estimators that need the
whole batch (REINFORCE++) fit the same slot::

    fn(rewards_per_group: Sequence[Sequence[float]], eps: float) -> list[list[float]]

The output has exactly the shape of the input (one advantage per reward, per group). Pure
functions of floats: no torch, no trajectories. :func:`compute_advantages` adapts them to
``TrajectoryGroup`` lists: only usable trajectories (scored, no error) enter the statistics,
and unusable ones get advantage 0 (``build_policy_batch`` drops them anyway).

Conventions (see docs/algorithms.md): standard deviations are the unbiased sample std
(Bessel's correction), as ``torch.std`` in the reference implementations; a group of one
sample has advantage 0 under every estimator with a group baseline.

Not here: per-token or process-reward advantages (the losses accept ``[B, L]`` advantages,
but no estimator here produces them), value-function baselines (no critic).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from posttrain.core.registry import Registry
from posttrain.core.types import TrajectoryGroup

AdvantageFn = Callable[..., list[list[float]]]
ADVANTAGES: Registry[AdvantageFn] = Registry("advantage", entry_point_group="posttrain.advantages",
                                             versioned=False)

DEFAULT_EPS = 1e-6


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _centred(xs: Sequence[float]) -> list[float]:
    """x - mean(x), exactly 0 for a constant group (float sums would leave ~1e-17 residue)."""
    if not xs or max(xs) == min(xs):
        return [0.0] * len(xs)
    m = _mean(xs)
    return [x - m for x in xs]


def _std(xs: Sequence[float]) -> float:
    """Unbiased sample standard deviation; 0 for fewer than two values."""
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


@ADVANTAGES.register("grpo")
def grpo(rewards_per_group: Sequence[Sequence[float]], eps: float = DEFAULT_EPS) -> list[list[float]]:
    """A_i = (r_i - mean(r)) / (std(r) + eps), per group (Shao et al. 2024)."""
    return [[c / (_std(rewards) + eps) for c in _centred(rewards)] for rewards in rewards_per_group]


@ADVANTAGES.register("dr_grpo")
def dr_grpo(rewards_per_group: Sequence[Sequence[float]], eps: float = DEFAULT_EPS) -> list[list[float]]:
    """A_i = r_i - mean(r), per group: no std division (Liu et al. 2025, "Dr. GRPO")."""
    del eps  # no division, nothing to guard
    return [_centred(rewards) for rewards in rewards_per_group]


@ADVANTAGES.register("rloo")
def rloo(rewards_per_group: Sequence[Sequence[float]], eps: float = DEFAULT_EPS) -> list[list[float]]:
    """A_i = r_i - mean_{j != i} r_j  (= G/(G-1) * (r_i - mean(r))); 0 for a group of one."""
    del eps
    out = []
    for rewards in rewards_per_group:
        g = len(rewards)
        if g < 2:
            out.append([0.0] * g)
            continue
        # r_i - mean_{j != i} r_j  ==  G / (G - 1) * (r_i - mean(r))
        out.append([g / (g - 1) * c for c in _centred(rewards)])
    return out


@ADVANTAGES.register("reinforce_pp")
def reinforce_pp(rewards_per_group: Sequence[Sequence[float]],
                 eps: float = DEFAULT_EPS) -> list[list[float]]:
    """REINFORCE++-baseline (Hu et al. 2025): subtract the group mean, then whiten over the batch.

    a_i = r_i - mean(group of i);  A_i = (a_i - mean(a)) / (std(a) + eps) over every sample of
    every group. The global normalisation is what distinguishes it from Dr. GRPO.
    """
    centred = dr_grpo(rewards_per_group)
    flat = [a for group in centred for a in group]
    m, s = _mean(flat), _std(flat)
    return [[(a - m) / (s + eps) for a in group] for group in centred]


def compute_advantages(groups: Sequence[TrajectoryGroup], name: str = "grpo",
                       eps: float = DEFAULT_EPS) -> list[list[float]]:
    """Advantages aligned with ``groups[g].trajectories``; usable trajectories only are scored.

    Unusable trajectories (verifier or infrastructure error) neither enter the baseline nor
    the std, and get 0. The result feeds ``build_policy_batch(groups, advantages, pad_id)``.
    """
    fn = ADVANTAGES.get(name)
    usable_idx = [[i for i, t in enumerate(g.trajectories) if t.usable] for g in groups]
    rewards = [[g.trajectories[i].reward for i in idx] for g, idx in zip(groups, usable_idx)]
    advs = fn(rewards, eps=eps)
    out: list[list[float]] = []
    for g, idx, adv in zip(groups, usable_idx, advs):
        full = [0.0] * len(g.trajectories)
        for i, a in zip(idx, adv):
            full[i] = float(a)
        out.append(full)
    return out
