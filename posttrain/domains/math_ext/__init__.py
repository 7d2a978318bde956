"""Extended math domains (beyond the foundation ``math.add/sub/mul/compare`` of ``basic``).

Modules: number_theory (gcd, lcm, modpow, modinv, factorize, spf, divisors, totient, crt),
arith (base_convert, fraction_arith, expr_eval, percent, to_roman, from_roman, int_log, clock,
divmod), algebra (linear1, linear2, quadratic, poly_eval, poly_derivative, sequence_next,
series_sum, determinant, matmul), combinatorics (ncr, multiset_perm, derangements, dice_prob,
card_prob, stars_bars, lattice_paths, stats, incl_excl). Shared parsers live in ``_kit``.
"""

from . import algebra, arith, combinatorics, number_theory  # noqa: F401  (registration side effects)
