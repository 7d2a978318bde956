"""Algebra: linear equations (1 and 2 unknowns), quadratic roots, polynomials, sequences,
series, determinants and matrix products.

Exact arithmetic throughout (``fractions.Fraction``); multi-value answers are scored per
value with a strict item count, so extra candidates make the whole answer score 0.
"""

from __future__ import annotations

import random
from fractions import Fraction

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, hidden_answer

from ._kit import (answer_text, drop_correct, fail, fmt_frac, frac_check, int_check, parse_frac,
                   parse_int, parse_items, per_item)

FRAC_FMT = "Reply with only the value as an integer or a fraction p/q in lowest terms."


def _nz(rng: random.Random, hi: int) -> int:
    return rng.choice([i for i in range(-hi, hi + 1) if i])


def _lin(k: int, m: int) -> str:
    """``kx + m`` written plainly; just ``m`` when k = 0."""
    if k == 0:
        return str(m)
    return f"{k}x" + (f" + {m}" if m > 0 else f" - {-m}" if m < 0 else "")


def _linear1(rng: random.Random, difficulty: int) -> Draft:
    """Solve a*x + b = c*x + d for x (a != c).

    d1 integer solution with c = 0, d2 integer solution both sides, d3 fractional solution.
    Not covered: no-solution / infinitely-many cases. Probes: the sign error (d - b)/(a + c),
    the value of the right-hand side constant d.
    """
    while True:
        a, c = _nz(rng, 9), (0 if difficulty == 1 else _nz(rng, 9))
        if a == c or a + c == 0:
            continue
        x = Fraction(rng.randint(-12, 12)) if difficulty < 3 else Fraction(_nz(rng, 20), rng.randint(2, 9))
        b = rng.randint(-30, 30)
        d = (a - c) * x + b
        if d.denominator == 1 and (difficulty < 3 or x.denominator > 1):
            break
    prompt = f"Solve for x: {_lin(a, b)} = {_lin(c, int(d))}. {FRAC_FMT}"
    return Draft(prompt, answer=fmt_frac(x),
                 public={"a": a, "b": b, "c": c, "d": int(d)})


def _linear1_exploits(task: Task) -> dict[str, str]:
    a, b, c, d = (task.public[k] for k in "abcd")
    return drop_correct({"sign_error": fmt_frac(Fraction(d - b, a + c)), "rhs": str(d)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.linear1-v1", _linear1, frac_check, _linear1_exploits,
                                 description=_linear1.__doc__))


def _linear2(rng: random.Random, difficulty: int) -> Draft:
    """Solve a 2x2 linear system; answer ``x, y``.

    Per-unknown partial credit (0.5 each), exactly two values required. d1/d2 integer
    solutions (small / larger coefficients), d3 fractional. Not covered: singular systems,
    3 unknowns. Probes: the solution swapped ``y, x`` (x != y), ``0, 0``.
    """
    hi = (5, 12, 12)[difficulty - 1]
    while True:
        a, b, c, d = (_nz(rng, hi) for _ in range(4))
        det = a * d - b * c
        if det == 0:
            continue
        if difficulty < 3:
            x, y = rng.randint(-10, 10), rng.randint(-10, 10)
            e, f = a * x + b * y, c * x + d * y
        else:
            e, f = rng.randint(-30, 30), rng.randint(-30, 30)
            x, y = Fraction(e * d - b * f, det), Fraction(a * f - e * c, det)
        if x != y and x != 0 and y != 0:
            break
    eq = lambda k, m, r: f"{k}x {'+' if m > 0 else '-'} {abs(m)}y = {r}"  # noqa: E731
    prompt = (f"Solve the system: {eq(a, b, e)} and {eq(c, d, f)}. Reply with only 'x, y' where each "
              f"value is an integer or a fraction p/q in lowest terms.")
    return Draft(prompt, answer=f"{fmt_frac(x)}, {fmt_frac(y)}",
                 hidden={"x": fmt_frac(x), "y": fmt_frac(y)})


def _linear2_check(task: Task, answer: str) -> Score:
    got = parse_items(answer_text(answer), 2, parse_frac)
    want = [Fraction(task.hidden["x"]), Fraction(task.hidden["y"])]
    return per_item(task.domain, got, want, label="unknown")


def _linear2_exploits(task: Task) -> dict[str, str]:
    x, y = task.hidden["x"], task.hidden["y"]
    return drop_correct({"swapped": f"{y}, {x}", "zeros": "0, 0"}, hidden_answer(task))


register_domain(SingleTurnDomain("math.linear2-v1", _linear2, _linear2_check, _linear2_exploits,
                                 description=_linear2.__doc__))


def _quadratic(rng: random.Random, difficulty: int) -> Draft:
    """The two distinct integer roots of k*(x - r1)(x - r2) expanded.

    Answer ``r1, r2`` ascending; per-root partial credit (0.5 each). d1 monic small roots,
    d2 monic larger roots, d3 a leading coefficient k != 1. Not covered: complex or
    irrational roots, double roots. Probes: the roots with flipped signs, one root alone, the roots padded with 0.
    """
    hi = (6, 15, 12)[difficulty - 1]
    while True:
        r1, r2 = sorted((_nz(rng, hi), _nz(rng, hi)))
        if r1 != r2 and r1 != -r2:
            break
    k = 1 if difficulty < 3 else rng.choice([2, 3, -2, 4, 5, -3])
    b, c = -k * (r1 + r2), k * r1 * r2
    poly = f"{'' if k == 1 else ('-' if k == -1 else k)}x^2 {'+' if b >= 0 else '-'} {abs(b)}x {'+' if c >= 0 else '-'} {abs(c)}"
    prompt = f"Find the roots of {poly} = 0. Reply with only the two roots in ascending order as 'r1, r2'."
    return Draft(prompt, answer=f"{r1}, {r2}",
                 public={"b": b, "c": c}, hidden={"roots": [r1, r2]})


def _quadratic_check(task: Task, answer: str) -> Score:
    got = parse_items(answer_text(answer), 2, parse_int)
    return per_item(task.domain, got, task.hidden["roots"], label="root")


def _quadratic_exploits(task: Task) -> dict[str, str]:
    r1, r2 = task.hidden["roots"]
    return drop_correct({"flipped": f"{-r2}, {-r1}", "one_root": str(r1), "three": f"{r1}, {r2}, 0"},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.quadratic-v1", _quadratic, _quadratic_check, _quadratic_exploits,
                                 description=_quadratic.__doc__))


def _poly_text(coeffs: list[int]) -> str:
    n = len(coeffs) - 1
    parts = []
    for i, c in enumerate(coeffs):
        p = n - i
        mono = "" if p == 0 else ("x" if p == 1 else f"x^{p}")
        parts.append(f"{c}{mono}" if mono else str(c))
    return " + ".join(parts).replace("+ -", "- ")


def _poly_eval(rng: random.Random, difficulty: int) -> Draft:
    """Evaluate an integer polynomial (degree 2 / 3 / 5) at an integer x.

    Trains Horner-style evaluation with negative values. Not covered: rational x.
    Probes: p(1) (the coefficient sum), the constant term.
    """
    deg = (2, 3, 5)[difficulty - 1]
    coeffs = [_nz(rng, 9) for _ in range(deg + 1)]
    x = rng.choice([v for v in range(-5, 6) if v not in (0, 1)])
    val = 0
    for c in coeffs:
        val = val * x + c
    prompt = f"Let p(x) = {_poly_text(coeffs)}. Compute p({x}). Reply with only the integer."
    return Draft(prompt, answer=val, public={"coeffs": coeffs, "x": x})


def _poly_eval_exploits(task: Task) -> dict[str, str]:
    cs = task.public["coeffs"]
    return drop_correct({"p1": str(sum(cs)), "constant": str(cs[-1])}, hidden_answer(task))


register_domain(SingleTurnDomain("math.poly_eval-v1", _poly_eval, int_check, _poly_eval_exploits,
                                 description=_poly_eval.__doc__))


def _poly_derivative(rng: random.Random, difficulty: int) -> Draft:
    """The coefficients of p'(x), highest degree first.

    Per-coefficient partial credit; exactly deg(p) coefficients required (no trailing
    constant, no padding). Degree 2 / 4 / 6, all coefficients non-zero. Not covered:
    products/quotients, non-polynomial functions. Probes: p's own coefficients (wrong count),
    the derivative with one extra zero.
    """
    deg = (2, 4, 6)[difficulty - 1]
    coeffs = [_nz(rng, 12) for _ in range(deg + 1)]
    der = [c * (deg - i) for i, c in enumerate(coeffs[:-1])]
    prompt = (f"Differentiate p(x) = {_poly_text(coeffs)}. Reply with only the {deg} coefficients of "
              f"p'(x) from the highest power down to the constant, comma-separated.")
    return Draft(prompt, answer=", ".join(map(str, der)),
                 public={"coeffs": coeffs}, hidden={"der": der})


def _poly_derivative_check(task: Task, answer: str) -> Score:
    der = task.hidden["der"]
    return per_item(task.domain, parse_items(answer_text(answer), len(der), parse_int), der, label="coef")


def _poly_derivative_exploits(task: Task) -> dict[str, str]:
    return {"original": ", ".join(map(str, task.public["coeffs"])),
            "extra_zero": hidden_answer(task) + ", 0"}


register_domain(SingleTurnDomain("math.poly_derivative-v1", _poly_derivative, _poly_derivative_check,
                                 _poly_derivative_exploits, description=_poly_derivative.__doc__))


def _sequence(rng: random.Random, difficulty: int) -> tuple[str, list[int]]:
    kinds = ["arith", "geo"] + (["quad", "fib"] if difficulty >= 2 else []) + (["alt", "cubic"] if difficulty == 3 else [])
    kind = rng.choice(kinds)
    a, d = rng.randint(-20, 20), _nz(rng, 9)
    n = 8
    if kind == "arith":
        s = [a + d * i for i in range(n)]
    elif kind == "geo":
        r = rng.choice([2, 3, -2, -3, 4])
        s = [_nz(rng, 5) * r ** i for i in range(n)]
        s = [s[0] * r ** i for i in range(n)]
    elif kind == "quad":
        e = _nz(rng, 4)
        s = [a + d * i + e * i * i for i in range(n)]
    elif kind == "fib":
        s = [rng.randint(1, 9), rng.randint(1, 9)]
        while len(s) < n:
            s.append(s[-1] + s[-2])
    elif kind == "alt":
        s = [(a + d * i) * (-1) ** i for i in range(n)]
    else:
        s = [i ** 3 + a for i in range(n)]
    return kind, s


def _sequence_next(rng: random.Random, difficulty: int) -> Draft:
    """The next term of an integer sequence shown by its first 7 terms.

    Kinds: arithmetic, geometric (d1+), quadratic and Fibonacci-like (d2+), alternating-sign
    and cubic (d3). Not covered: sequences needing outside knowledge (primes, OEIS lore).
    Probes: the last term repeated, last + (last difference).
    """
    while True:
        kind, s = _sequence(rng, difficulty)
        if len(set(s)) > 2:
            break
    shown = s[:7]
    prompt = f"What is the next term of the sequence {', '.join(map(str, shown))}, ...? Reply with only the integer."
    return Draft(prompt, answer=s[7], public={"shown": shown},
                 metadata={"kind": kind})


def _sequence_next_exploits(task: Task) -> dict[str, str]:
    s = task.public["shown"]
    return drop_correct({"repeat": str(s[-1]), "linear": str(2 * s[-1] - s[-2])}, hidden_answer(task))


register_domain(SingleTurnDomain("math.sequence_next-v1", _sequence_next, int_check, _sequence_next_exploits,
                                 description=_sequence_next.__doc__))


def _series_sum(rng: random.Random, difficulty: int) -> Draft:
    """Summing the first n terms of arithmetic and geometric series.

    The sum of the first n terms of an arithmetic (d1, d2) or geometric
    (d2, d3) series, given its first terms. Not covered: infinite series. Probes: n * a1,
    the n-th term.
    """
    geo = difficulty == 3 or (difficulty == 2 and rng.random() < 0.5)
    a = _nz(rng, 9)
    n = rng.randint(5, (12, 40, 25)[difficulty - 1])
    if geo:
        r = rng.choice([2, 3, -2, -3])
        terms = [a * r ** i for i in range(n)]
    else:
        d = _nz(rng, 7)
        terms = [a + d * i for i in range(n)]
    prompt = (f"What is the sum of the first {n} terms of the {'geometric' if geo else 'arithmetic'} series "
              f"{terms[0]} + {terms[1]} + {terms[2]} + ...? Reply with only the integer.")
    return Draft(prompt, answer=sum(terms), public={"n": n},
                 hidden={"last": terms[-1], "a": a})


def _series_sum_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"n_a1": str(task.public["n"] * task.hidden["a"]), "last": str(task.hidden["last"])},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.series_sum-v1", _series_sum, int_check, _series_sum_exploits,
                                 description=_series_sum.__doc__))


def _det(m: list[list[int]]) -> int:
    if len(m) == 1:
        return m[0][0]
    return sum((-1) ** j * m[0][j] * _det([row[:j] + row[j + 1:] for row in m[1:]]) for j in range(len(m)))


def _mat_text(m: list[list[int]]) -> str:
    return "[" + "; ".join(", ".join(map(str, r)) for r in m) + "]"


def _determinant(rng: random.Random, difficulty: int) -> Draft:
    """The determinant of an integer matrix, 2x2 / 3x3 / 4x4.

    Matrices are written row by row as ``[a, b; c, d]``. Not covered: symbolic entries.
    Probes: the product of the diagonal, the determinant with the opposite sign.
    """
    n = difficulty + 1
    while True:
        m = [[rng.randint(-6, 9) for _ in range(n)] for _ in range(n)]
        det = _det(m)
        diag = 1
        for i in range(n):
            diag *= m[i][i]
        if det != 0 and det != diag:
            break
    prompt = f"Compute the determinant of the matrix {_mat_text(m)} (rows separated by ';'). Reply with only the integer."
    return Draft(prompt, answer=det, public={"matrix": m}, hidden={"diag": diag})


def _determinant_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"diagonal": str(task.hidden["diag"]), "neg": str(-int(task.hidden["answer"]))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.determinant-v1", _determinant, int_check, _determinant_exploits,
                                 description=_determinant.__doc__))


def _matmul(rng: random.Random, difficulty: int) -> Draft:
    """The product A*B of small integer matrices, written ``[a, b; c, d]``.

    Per-entry partial credit, only when the shape is exactly right (rows by ';', entries by ',').
    Shapes 2x2*2x2 / 2x3*3x2 / 3x3*3x3. Not covered: matrix inverses. Probes: A itself (wrong
    shape or values), the product as one flat row.
    """
    m, k, n = ((2, 2, 2), (2, 3, 2), (3, 3, 3))[difficulty - 1]
    a = [[rng.randint(-5, 9) for _ in range(k)] for _ in range(m)]
    b = [[rng.randint(-5, 9) for _ in range(n)] for _ in range(k)]
    c = [[sum(a[i][t] * b[t][j] for t in range(k)) for j in range(n)] for i in range(m)]
    prompt = (f"Compute A*B for A = {_mat_text(a)} and B = {_mat_text(b)} (rows separated by ';'). "
              f"Reply with only the result in the same bracket format.")
    return Draft(prompt, answer=_mat_text(c), public={"a": a, "b": b},
                 hidden={"c": c})


def _matmul_check(task: Task, answer: str) -> Score:
    c = task.hidden["c"]
    t = answer_text(answer)
    if t is None or not (t.startswith("[") and t.endswith("]")):
        return fail(task.domain, "not a bracketed matrix")
    rows = t[1:-1].split(";")
    got = [parse_items(r, len(c[0]), parse_int) for r in rows]
    if len(rows) != len(c) or any(r is None for r in got):
        return fail(task.domain, f"expected a {len(c)}x{len(c[0])} integer matrix")
    flat_got = [v for r in got for v in r]
    return per_item(task.domain, flat_got, [v for r in c for v in r], label="entry")


def _matmul_exploits(task: Task) -> dict[str, str]:
    c = task.hidden["c"]
    flat = "[" + ", ".join(str(v) for r in c for v in r) + "]"
    probes = {"flat": flat}
    if len(task.public["a"][0]) != len(c[0]):
        probes["a_itself"] = _mat_text(task.public["a"])
    return probes


register_domain(SingleTurnDomain("math.matmul-v1", _matmul, _matmul_check, _matmul_exploits,
                                 description=_matmul.__doc__))
