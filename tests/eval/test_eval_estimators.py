"""pass@k and pass^k against exact rational arithmetic, and the edge rules."""

import math
import random
from fractions import Fraction

import pytest

from posttrain.eval.estimators import mean_pass_at_k, pass_at_k, pass_hat_k


def exact_pass_at_k(n, c, k):
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def exact_pass_hat_k(n, c, k):
    return Fraction(math.comb(c, k), math.comb(n, k))


def _close(got, exact):
    # relative to the value itself: log-space products keep the small tail accurate
    assert got == pytest.approx(float(exact), rel=1e-11, abs=1e-300)


def test_random_cases_match_fractions():
    rng = random.Random(1234)
    for _ in range(400):
        n = rng.choice([rng.randint(1, 20), rng.randint(20, 300), rng.randint(300, 3000)])
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        _close(pass_at_k(n, c, k), exact_pass_at_k(n, c, k))
        _close(pass_hat_k(n, c, k), exact_pass_hat_k(n, c, k))


def test_large_n_is_stable_and_keeps_the_tail():
    # C(5000, 50) overflows a float; the log-space product does not.
    n, c, k = 5000, 1, 50
    assert pass_at_k(n, c, k) == pytest.approx(k / n, rel=1e-12)
    got = pass_at_k(4000, 3, 2)
    _close(got, exact_pass_at_k(4000, 3, 2))
    tiny = pass_hat_k(3000, 1500, 40)
    _close(tiny, exact_pass_hat_k(3000, 1500, 40))
    assert 0 < tiny < 1e-11


def test_edge_rules():
    assert pass_at_k(10, 8, 3) == 1.0  # n - c = 2 < k: every 3-subset holds a success
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_hat_k(10, 2, 3) == 0.0
    assert pass_hat_k(7, 7, 7) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_hat_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 4) == 1.0


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_n_below_k_is_a_clear_error(fn):
    with pytest.raises(ValueError, match=r"undefined.*n=3.*k=4"):
        fn(3, 1, 4)


@pytest.mark.parametrize("args", [(5, 6, 1), (5, -1, 1), (5, 2, 0)])
def test_invalid_counts(args):
    with pytest.raises(ValueError):
        pass_at_k(*args)


def test_type_errors():
    with pytest.raises(TypeError):
        pass_at_k(5.0, 2, 1)
    with pytest.raises(TypeError):
        pass_at_k(5, True, 1)


def test_mean_over_tasks():
    counts = [(10, 0), (10, 5), (10, 10)]
    exact = sum(exact_pass_at_k(n, c, 4) for n, c in counts) / 3
    assert mean_pass_at_k(counts, 4) == pytest.approx(float(exact), rel=1e-12)
    with pytest.raises(ValueError):
        mean_pass_at_k([], 1)
