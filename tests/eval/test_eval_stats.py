"""Wilson and bootstrap intervals, McNemar, paired bootstrap, Holm."""

import math

import numpy as np
import pytest

from posttrain.eval.intervals import bootstrap_ci, wilson_interval
from posttrain.eval.paired import holm, mcnemar_exact, paired_bootstrap


def test_wilson_known_value():
    # 8/10 at 95 %: the textbook Wilson interval is (0.4902, 0.9433)
    iv = wilson_interval(8, 10)
    assert iv.value == 0.8
    assert iv.low == pytest.approx(0.4902, abs=1e-4)
    assert iv.high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_edges_stay_in_unit_interval():
    zero, full = wilson_interval(0, 20), wilson_interval(20, 20)
    assert zero.low == 0.0 and 0 < zero.high < 0.2
    assert full.high == 1.0 and 0.8 < full.low < 1.0
    with pytest.raises(ValueError):
        wilson_interval(1, 0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_wilson_narrows_with_more_trials():
    a, b = wilson_interval(5, 10), wilson_interval(500, 1000)
    assert (b.high - b.low) < (a.high - a.low) / 5


def test_bootstrap_is_seeded_and_contains_the_mean():
    rng = np.random.default_rng(0)
    x = rng.random(50)
    a, b = bootstrap_ci(x, seed=3), bootstrap_ci(x, seed=3)
    assert a == b
    assert a.low <= x.mean() <= a.high
    assert a.value == pytest.approx(x.mean())
    # roughly mean ± 1.96 sd/sqrt(n)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert (a.high - a.low) == pytest.approx(2 * 1.96 * se, rel=0.25)
    assert bootstrap_ci([0.5, 0.5]).low == 0.5


def test_mcnemar_exact_values():
    # 10 items lost, 0 won: p = 0.5**10 for a regression
    base = [True] * 10 + [True] * 20
    new = [False] * 10 + [True] * 20
    r = mcnemar_exact(base, new)
    assert r.discordant == (10, 0)
    assert r.p_regression == pytest.approx(0.5 ** 10)
    assert r.p_improvement == 1.0
    assert r.delta == pytest.approx(-10 / 30)
    same = mcnemar_exact(base, base)
    assert same.delta == 0 and same.p_regression == 1.0
    # 6 lost, 4 won: P(X >= 6 | Bin(10, .5)) = 386/1024
    b = [1] * 6 + [0] * 4
    n = [0] * 6 + [1] * 4
    assert mcnemar_exact(b, n).p_regression == pytest.approx(386 / 1024)


def test_paired_bootstrap_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(1)
    base = rng.random(80)
    worse = np.clip(base - 0.2, 0, 1)
    r = paired_bootstrap(base, worse)
    assert r.delta < -0.15 and r.p_regression < 0.01 and r.high < 0
    ident = paired_bootstrap(base, base)
    assert ident.delta == 0 and ident.p_regression == 1.0
    noise = paired_bootstrap(base, np.clip(base + rng.normal(0, 0.01, 80), 0, 1))
    assert noise.p_regression > 0.01


def test_stratified_bootstrap_weights_domains_equally():
    base = [1.0] * 100 + [1.0] * 10
    new = [1.0] * 100 + [0.0] * 10
    r = paired_bootstrap(base, new, strata=["a"] * 100 + ["b"] * 10)
    assert r.delta == pytest.approx(-0.5)


def test_holm():
    adj = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adj["a"] == pytest.approx(0.03)
    assert adj["c"] == pytest.approx(0.06)
    assert adj["b"] == pytest.approx(0.06)  # monotone
    assert holm({"x": 0.9, "y": 0.8})["x"] == 1.0
