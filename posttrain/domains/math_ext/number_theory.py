"""Number theory: gcd, lcm, modular power and inverse, factorisation, divisors, totient, CRT.

Every answer is one integer (``math.factorize-v1``: a product of primes) checked exactly; the
operands are built from their answer so the tasks are never degenerate (a gcd of 1 is rare,
an inverse always exists, CRT moduli are pairwise coprime). Difficulty scales magnitude.
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, hidden_answer

from ._kit import answer_text, drop_correct, fail, int_check, parse_int

SMALL_PRIMES = [p for p in range(2, 200) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
INT_FMT = "Reply with only the integer."


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in SMALL_PRIMES[:25]:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def factorize(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def rand_prime(rng: random.Random, lo: int, hi: int) -> int:
    while True:
        n = rng.randint(lo, hi)
        if is_prime(n):
            return n


def _gcd(rng: random.Random, difficulty: int) -> Draft:
    """Greatest common divisor of 2 (d1, d2) or 3 (d3) integers.

    Trains Euclid's algorithm on numbers up to 10^2 / 10^4 / 10^6 sharing a planted factor.
    Not covered: negative numbers, Bezout coefficients. Probes: "1", the smallest operand,
    the product of the operands.
    """
    hi = (100, 10_000, 1_000_000)[difficulty - 1]
    g = rng.randint(2, int(hi ** 0.5))
    nums = [g * rng.randint(1, hi // g) for _ in range(3 if difficulty == 3 else 2)]
    ans = math.gcd(*nums)
    prompt = f"What is the greatest common divisor of {', '.join(map(str, nums))}? {INT_FMT}"
    return Draft(prompt, answer=ans, public={"numbers": nums})


def _gcd_exploits(task: Task) -> dict[str, str]:
    nums = task.public["numbers"]
    return drop_correct({"one": "1", "min": str(min(nums)), "product": str(math.prod(nums))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.gcd-v1", _gcd, int_check, _gcd_exploits, description=_gcd.__doc__))


def _lcm(rng: random.Random, difficulty: int) -> Draft:
    """Least common multiple of 2 (d1, d2) or 3 (d3) integers.

    Trains lcm = a*b/gcd with shared factors, operands up to 30 / 500 / 2000.
    Not covered: fractions' common denominators. Probes: the product, the largest operand.
    """
    hi = (30, 500, 2000)[difficulty - 1]
    g = rng.randint(2, 12)
    nums = [g * rng.randint(2, max(3, hi // g)) for _ in range(3 if difficulty == 3 else 2)]
    ans = math.lcm(*nums)
    prompt = f"What is the least common multiple of {', '.join(map(str, nums))}? {INT_FMT}"
    return Draft(prompt, answer=ans, public={"numbers": nums})


def _lcm_exploits(task: Task) -> dict[str, str]:
    nums = task.public["numbers"]
    return drop_correct({"product": str(math.prod(nums)), "max": str(max(nums))}, hidden_answer(task))


register_domain(SingleTurnDomain("math.lcm-v1", _lcm, int_check, _lcm_exploits, description=_lcm.__doc__))


def _modpow(rng: random.Random, difficulty: int) -> Draft:
    """A^b mod m by repeated squaring (b up to 20 / 10^4 / 10^12).

    Not covered: negative exponents. Probes: 0, a mod m, a*b mod m.
    """
    a = rng.randint(2, (20, 1000, 10 ** 6)[difficulty - 1])
    b = rng.randint(3, (20, 10 ** 4, 10 ** 12)[difficulty - 1])
    m = rng.randint(7, (50, 1000, 10 ** 6)[difficulty - 1])
    prompt = f"Compute {a}^{b} mod {m} (the remainder in 0..{m - 1}). {INT_FMT}"
    return Draft(prompt, answer=pow(a, b, m),
                 public={"a": a, "b": b, "m": m})


def _modpow_exploits(task: Task) -> dict[str, str]:
    a, b, m = (task.public[k] for k in "abm")
    return drop_correct({"zero": "0", "base": str(a % m), "times": str(a * b % m)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.modpow-v1", _modpow, int_check, _modpow_exploits,
                                 description=_modpow.__doc__))


def _modinv(rng: random.Random, difficulty: int) -> Draft:
    """The inverse of a modulo m (exists by construction), in 1..m-1.

    Trains the extended Euclidean algorithm, moduli up to 30 / 1000 / 10^6 (prime or not).
    Not covered: proving non-existence. Probes: 1, a, m - a.
    """
    a = m = 0
    while not a:
        m = rng.randint(7, (30, 1000, 10 ** 6)[difficulty - 1])
        for _ in range(40):  # some moduli (8, 12, 24) have only self-inverse units: redraw m
            c = rng.randint(2, m - 1)
            if math.gcd(c, m) == 1 and pow(c, -1, m) != c:
                a = c
                break
    prompt = (f"Find the multiplicative inverse of {a} modulo {m}, i.e. the x in 1..{m - 1} "
              f"with {a}*x = 1 (mod {m}). {INT_FMT}")
    return Draft(prompt, answer=pow(a, -1, m), public={"a": a, "m": m})


def _modinv_exploits(task: Task) -> dict[str, str]:
    a, m = task.public["a"], task.public["m"]
    return drop_correct({"one": "1", "self": str(a), "neg": str(m - a)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.modinv-v1", _modinv, int_check, _modinv_exploits,
                                 description=_modinv.__doc__))


def _factorize(rng: random.Random, difficulty: int) -> Draft:
    """Prime factorisation written as ``2 * 2 * 3 * 7``.

    Trains trial division on n up to 10^3 / 10^5 / 10^9 (d3: often two 4-5 digit primes).
    Partial credit: when the listed factors multiply to n, the value is the fraction of them
    that are prime (``2 * 42`` for 84 earns 0.5); a product different from n scores 0, so
    listing candidate primes cannot earn anything. Not covered: exponent notation.
    Probes: ``1 * n``, ``n`` itself (n is composite), the distinct primes without repeats.
    """
    if difficulty == 3 and rng.random() < 0.5:
        n = rand_prime(rng, 1000, 30000) * rand_prime(rng, 1000, 30000)
    else:
        hi = (1000, 100_000, 10 ** 9)[difficulty - 1]
        while True:
            n = rng.randint(12, hi)
            fs = factorize(n)
            if len(fs) >= 3 and len(set(fs)) < len(fs):
                break
    prompt = (f"Give the prime factorisation of {n} as primes in non-decreasing order joined by "
              f"' * ', with repeats (e.g. 12 = 2 * 2 * 3, reply '2 * 2 * 3'). Reply with only that.")
    return Draft(prompt, answer=" * ".join(map(str, factorize(n))),
                 public={"n": n})


def _factorize_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    text = answer_text(answer)
    fs = None if text is None else [parse_int(p) for p in text.split("*")]
    if not fs or any(f is None or f < 1 for f in fs) or len(fs) > 64:
        return fail(task.domain, "not a '*'-joined list of positive integers")
    if math.prod(fs) != n:
        return fail(task.domain, "the factors do not multiply to n", name="product")
    prime = sum(1 for f in fs if is_prime(f)) / len(fs)
    return Score.weighted({"product": (1.0, 0.0), "prime_fraction": (prime, 1.0)},
                          reason=f"product ok, {prime:.0%} of factors prime", verifier_version=task.domain)


def _factorize_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    distinct = sorted(set(factorize(n)))
    return drop_correct({"one_n": f"1 * {n}", "n": str(n),
                         "distinct": " * ".join(map(str, distinct))}, hidden_answer(task))


register_domain(SingleTurnDomain("math.factorize-v1", _factorize, _factorize_check, _factorize_exploits,
                                 description=_factorize.__doc__))


def _spf(rng: random.Random, difficulty: int) -> Draft:
    """The smallest prime factor of n (n itself when prime).

    d1 n < 500, d2 n < 10^5, d3 a semiprime of two 3-4 digit primes (or a prime).
    Not covered: full factorisation (see math.factorize-v1). Probes: 2, 1, n, n // 2.
    """
    if difficulty == 3:
        p = rand_prime(rng, 101, 3000)
        n = p * rand_prime(rng, p, 9000) if rng.random() < 0.8 else rand_prime(rng, 10 ** 5, 10 ** 6)
    else:
        n = rng.randrange(3, (500, 100_000)[difficulty - 1], 2)
    prompt = f"What is the smallest prime factor of {n}? (If {n} is prime, answer {n}.) {INT_FMT}"
    return Draft(prompt, answer=factorize(n)[0], public={"n": n})


def _spf_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return drop_correct({"two": "2", "one": "1", "n": str(n), "half": str(n // 2)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.spf-v1", _spf, int_check, _spf_exploits, description=_spf.__doc__))


def _divisors(rng: random.Random, difficulty: int) -> Draft:
    """The number of positive divisors of n (d(n) from the exponents).

    n up to 200 / 10^4 / 10^7. Not covered: the sum of divisors. Probes: 2, the number of
    prime factors with repeats, n // 2.
    """
    n = rng.randint(12, (200, 10_000, 10 ** 7)[difficulty - 1])
    fs = factorize(n)
    ans = math.prod(fs.count(p) + 1 for p in set(fs))
    prompt = f"How many positive divisors does {n} have (including 1 and {n})? {INT_FMT}"
    return Draft(prompt, answer=ans, public={"n": n})


def _divisors_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return drop_correct({"two": "2", "omega": str(len(factorize(n))), "half": str(n // 2)},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.divisors-v1", _divisors, int_check, _divisors_exploits,
                                 description=_divisors.__doc__))


def _totient(rng: random.Random, difficulty: int) -> Draft:
    """Euler's phi(n), the count of 1..n coprime to n.

    n up to 100 / 10^4 / 10^7. Not covered: Carmichael's function. Probes: n - 1, n, n // 2.
    """
    while True:
        n = rng.randint(10, (100, 10_000, 10 ** 7)[difficulty - 1])
        if not is_prime(n):
            break
    phi = n
    for p in set(factorize(n)):
        phi = phi // p * (p - 1)
    prompt = f"Compute Euler's totient phi({n}), the number of k in 1..{n} with gcd(k, {n}) = 1. {INT_FMT}"
    return Draft(prompt, answer=phi, public={"n": n})


def _totient_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return drop_correct({"n_minus_1": str(n - 1), "n": str(n), "half": str(n // 2)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.totient-v1", _totient, int_check, _totient_exploits,
                                 description=_totient.__doc__))


def _crt(rng: random.Random, difficulty: int) -> Draft:
    """The least non-negative x satisfying 2 (d1, d2) or 3 (d3) congruences.

    Pairwise coprime moduli (products up to ~10^2 / 10^4 / 10^7): trains the Chinese remainder
    theorem. Not covered: non-coprime moduli. Probes: 0, the product of the moduli, the sum
    of the residues.
    """
    k, hi = ((2, 12), (2, 100), (3, 200))[difficulty - 1]
    mods: list[int] = []
    while len(mods) < k:
        m = rng.randint(3, hi)
        if all(math.gcd(m, o) == 1 for o in mods):
            mods.append(m)
    big = math.prod(mods)
    x = rng.randint(1, big - 1)
    res = [x % m for m in mods]
    eqs = "; ".join(f"x = {r} (mod {m})" for r, m in zip(res, mods))
    prompt = f"Find the smallest non-negative integer x with {eqs}. {INT_FMT}"
    return Draft(prompt, answer=x, public={"mods": mods, "residues": res})


def _crt_exploits(task: Task) -> dict[str, str]:
    mods, res = task.public["mods"], task.public["residues"]
    return drop_correct({"zero": "0", "prod": str(math.prod(mods)), "sum": str(sum(res))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.crt-v1", _crt, int_check, _crt_exploits, description=_crt.__doc__))
