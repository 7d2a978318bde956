"""Advantage estimators against values worked out by hand, and the zero-variance filter."""

import math

import pytest
from trainer_helpers import group, traj

from posttrain.trainer.advantages import ADVANTAGES, compute_advantages

# Two groups used throughout:
#   A = [1, 0, 0, 1]: mean 0.5, sample std sqrt((4 * 0.25) / 3) = 0.577350
#   B = [1, 0, 0]:    mean 1/3, deviations (2/3, -1/3, -1/3), var (4/9 + 1/9 + 1/9) / 2 = 1/3,
#                     sample std 0.577350
REWARDS = [[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]


def _close(got, want, tol=1e-5):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            assert a == pytest.approx(b, abs=tol)


def test_grpo_hand_values():
    # A: ±0.5 / 0.577350 = ±0.866025;  B: (2/3) / 0.577350 = 1.154701, (-1/3) / 0.577350 = -0.577350
    _close(ADVANTAGES.get("grpo")(REWARDS),
           [[0.866025, -0.866025, -0.866025, 0.866025], [1.154701, -0.577350, -0.577350]])


def test_dr_grpo_subtracts_mean_only():
    _close(ADVANTAGES.get("dr_grpo")(REWARDS), [[0.5, -0.5, -0.5, 0.5], [2 / 3, -1 / 3, -1 / 3]])


def test_rloo_leave_one_out():
    # A, r=1: others (0, 0, 1) mean 1/3 -> 2/3; r=0: others (1, 0, 1) mean 2/3 -> -2/3
    # B, r=1: others (0, 0) -> 1; r=0: others (1, 0) mean 1/2 -> -1/2
    _close(ADVANTAGES.get("rloo")(REWARDS), [[2 / 3, -2 / 3, -2 / 3, 2 / 3], [1.0, -0.5, -0.5]])


def test_reinforce_pp_whitens_over_the_whole_batch():
    # Centred: A (.5, -.5, -.5, .5), B (2/3, -1/3, -1/3). Seven values, mean 0,
    # sum of squares 1 + 6/9 = 5/3, sample var (5/3)/6 = 5/18, std 0.527046.
    # A: ±0.5 / 0.527046 = ±0.948683; B: 1.264911, -0.632456, -0.632456
    _close(ADVANTAGES.get("reinforce_pp")(REWARDS),
           [[0.948683, -0.948683, -0.948683, 0.948683], [1.264911, -0.632456, -0.632456]])
    # Unlike per-group GRPO, one group's scale changes the other's advantages.
    scaled = ADVANTAGES.get("reinforce_pp")([[1.0, 0.0, 0.0, 1.0], [0.1, 0.0, 0.0]])
    assert scaled[0][0] != pytest.approx(0.948683, abs=1e-3)


def test_singleton_and_constant_groups_have_zero_advantage():
    for name in ("grpo", "dr_grpo", "rloo"):
        out = ADVANTAGES.get(name)([[0.7], [0.3, 0.3, 0.3]])
        assert out == [[0.0], [0.0, 0.0, 0.0]], name
    out = ADVANTAGES.get("reinforce_pp")([[0.3, 0.3]])
    assert all(math.isfinite(a) and a == 0.0 for a in out[0])


def test_compute_advantages_skips_unusable_trajectories():
    g = group(traj([1], [2], 1.0), traj([1], [2], 0.0), traj([1], [2], 1.0, error=True))
    adv = compute_advantages([g], "grpo")
    # Usable rewards (1, 0): mean .5, sample std sqrt(.5) = .707107 -> ±0.707107; unusable -> 0
    _close(adv, [[0.707107, -0.707107, 0.0]])


def test_unknown_estimator_suggests_names():
    with pytest.raises(KeyError, match="grpo"):
        ADVANTAGES.get("grpoo")
