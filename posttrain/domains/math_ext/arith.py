"""Arithmetic and notation: bases, fractions, precedence, percentages, Roman numerals,
integer logarithms, clock arithmetic, division with remainder.

Answers are checked exactly after strict parsing (see :mod:`._kit`); ``math.divmod-v1`` and
``math.fraction_arith-v1`` give per-field partial credit as their docstrings say.
"""

from __future__ import annotations

import random
from fractions import Fraction

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, hidden_answer

from ._kit import (answer_text, check, drop_correct, fail, fmt_frac, frac_check, int_check, parse_frac,
                   parse_int, parse_items, per_item)

INT_FMT = "Reply with only the integer."
DIGITS = "0123456789abcdef"


def to_base(n: int, b: int) -> str:
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, b)
        out.append(DIGITS[r])
    return "".join(reversed(out))


def _base_convert(rng: random.Random, difficulty: int) -> Draft:
    """Rewrite a number from base b1 to base b2 (2..16, digits 0-9a-f).

    Trains positional notation; values up to 255 / 65535 / 2^32. Case-insensitive, no prefix
    (``0x``) and no leading zeros. Not covered: fractional parts, negative numbers.
    Probes: the input digits unchanged, the decimal value (when b2 != 10).
    """
    n = rng.randint(5, (255, 65535, 2 ** 32)[difficulty - 1])
    b1, b2 = rng.sample([2, 3, 5, 8, 10, 12, 16] if difficulty > 1 else [2, 8, 10, 16], 2)
    src = to_base(n, b1)
    prompt = (f"Convert the base-{b1} number {src} to base {b2}. Use digits 0-9 then a-f, no prefix, "
              f"no leading zeros. Reply with only the base-{b2} digits.")
    return Draft(prompt, answer=to_base(n, b2),
                 public={"src": src, "b1": b1, "b2": b2, "n_digits": len(src)},
                 hidden={"value": n})


def _base_convert_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    return check(task.domain, t is not None and t.lower() == task.hidden["answer"])


def _base_convert_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"unchanged": task.public["src"], "decimal": str(task.hidden["value"])},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.base_convert-v1", _base_convert, _base_convert_check,
                                 _base_convert_exploits, description=_base_convert.__doc__))


def _fraction_arith(rng: random.Random, difficulty: int) -> Draft:
    """(a/b) op (c/d) for op in + - * /, answered as a reduced fraction.

    Partial credit: value right but not in lowest terms earns 0.5 ("value" 1, "reduced" 0);
    a wrong value earns 0. Not covered: mixed numbers, more than two operands.
    Probes: "add the numerators and the denominators", the unreduced cross-multiplied form
    when it is not reduced (half credit is meaningful, so only the wrong-value probe is kept).
    """
    hi = (9, 20, 60)[difficulty - 1]
    ops = "+-" if difficulty == 1 else "+-*/"
    a, b, c, d = (rng.randint(1, hi) for _ in range(4))
    op = rng.choice(ops)
    x, y = Fraction(a, b), Fraction(c, d)
    val = {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op]
    prompt = (f"Compute {a}/{b} {op} {c}/{d}. Reply with only the result in lowest terms as p/q "
              f"(or an integer if q = 1; a leading '-' if negative).")
    return Draft(prompt, answer=fmt_frac(val),
                 public={"terms": [a, b, c, d], "op": op})


def _fraction_arith_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    got = parse_frac(t) if t and "." not in t else None
    if got is None:
        return fail(task.domain, "not a fraction p/q or an integer")
    if got != Fraction(task.hidden["answer"]):
        return Score.weighted({"value": (0.0, 1.0), "reduced": (0.0, 1.0)}, reason="wrong value",
                              verifier_version=task.domain)
    reduced = 1.0 if t.replace(" ", "").lstrip("+") == task.hidden["answer"] else 0.0
    return Score.weighted({"value": (1.0, 1.0), "reduced": (reduced, 1.0)},
                          reason="correct" if reduced else "right value, not in lowest terms",
                          verifier_version=task.domain)


def _fraction_arith_exploits(task: Task) -> dict[str, str]:
    a, b, c, d = task.public["terms"]
    naive = Fraction(a + c, b + d)
    if naive == Fraction(task.hidden["answer"]):
        return {}
    return {"add_parts": f"{a + c}/{b + d}"}


register_domain(SingleTurnDomain("math.fraction_arith-v1", _fraction_arith, _fraction_arith_check,
                                 _fraction_arith_exploits, description=_fraction_arith.__doc__))


def _expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return str(rng.randint(1, 12))
    op = rng.choice("+-*")
    left, right = _expr(rng, depth - 1), _expr(rng, depth - 1)
    if rng.random() < 0.4:
        return f"({left} {op} {right})"
    return f"{left} {op} {right}"


def eval_int_expr(text: str) -> int:
    """Evaluate + - * and parentheses over integers with the usual precedence (tiny parser)."""
    toks = text.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def atom() -> int:
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "(":
            v = add()
            pos += 1
            return v
        if t == "-":
            return -atom()
        return int(t)

    def mul() -> int:
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] == "*":
            pos += 1
            v *= atom()
        return v

    def add() -> int:
        nonlocal pos
        v = mul()
        while pos < len(toks) and toks[pos] in "+-":
            op = toks[pos]
            pos += 1
            v = v + mul() if op == "+" else v - mul()
        return v

    return add()


def left_to_right(text: str) -> int:
    """The classic mistake: ignore precedence and parentheses' scope, apply ops left to right."""
    toks = [t for t in text.replace("(", " ").replace(")", " ").split()]
    v = int(toks[0])
    for op, n in zip(toks[1::2], toks[2::2]):
        v = v + int(n) if op == "+" else v - int(n) if op == "-" else v * int(n)
    return v


def _expr_eval(rng: random.Random, difficulty: int) -> Draft:
    """Evaluate an integer expression with + - * and parentheses.

    Trains operator precedence on random expression trees of depth 2 / 3 / 4.
    Not covered: division, exponents. Probes: strict left-to-right evaluation.
    """
    while True:
        e = _expr(rng, difficulty + 1)
        if any(op in e for op in "+-*") and e.count(" ") >= 2 * difficulty:
            break
    prompt = f"Evaluate {e} using the usual order of operations. {INT_FMT}"
    return Draft(prompt, answer=eval_int_expr(e), public={"expr": e})


def _expr_eval_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"left_to_right": str(left_to_right(task.public["expr"]))}, hidden_answer(task))


register_domain(SingleTurnDomain("math.expr_eval-v1", _expr_eval, int_check, _expr_eval_exploits,
                                 description=_expr_eval.__doc__))


def _percent(rng: random.Random, difficulty: int) -> Draft:
    """Percentages: p% of n, x as a percent of y, successive percentage changes.

    Percentages: p% of n (d1), x as a percent of y (d2), successive
    changes (+p% then -q%, d3). Answers are exact decimals (at most 4 places), any exact
    written form of the value is accepted. Not covered: compound interest over many periods.
    Probes: for d3 the naive net change (p - q)%; for d1 n*p; for d2 y/x.
    """
    if difficulty == 1:
        p, n = rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 75]), rng.randint(2, 400) * 4
        val, prompt, naive = Fraction(p * n, 100), f"What is {p}% of {n}?", Fraction(p * n)
    elif difficulty == 2:
        y = rng.choice([20, 25, 40, 50, 80, 125, 200, 250, 400, 500])
        x = rng.randint(1, 3 * y)
        val, prompt, naive = Fraction(100 * x, y), f"{x} is what percent of {y}?", Fraction(y, x)
    else:
        n, p, q = rng.randint(10, 999) * 100, rng.choice([10, 20, 25, 30, 50]), rng.choice([10, 20, 25, 40])
        val = Fraction(n) * (100 + p) * (100 - q) / 10000
        naive = Fraction(n) * (100 + p - q) / 100
        prompt = f"A price of {n} rises by {p}% and then falls by {q}%. What is the final price?"
    prompt += " Reply with only the number (a decimal if needed, no % sign)."
    ans = fmt_frac(val) if val.denominator == 1 else f"{float(val):.4f}".rstrip("0")
    return Draft(prompt, answer=ans, hidden={"naive": str(naive)})


def _percent_exploits(task: Task) -> dict[str, str]:
    naive = Fraction(task.hidden["naive"])
    if naive == Fraction(task.hidden["answer"]):
        return {}
    return {"naive": fmt_frac(naive) if naive.denominator == 1 else f"{float(naive):.6f}"}


register_domain(SingleTurnDomain("math.percent-v1", _percent, frac_check, _percent_exploits,
                                 description=_percent.__doc__))


ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
         (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n: int, subtractive: bool = True) -> str:
    out = []
    for v, s in ROMAN:
        if not subtractive and len(s) == 2:
            continue
        while n >= v:
            out.append(s)
            n -= v
    return "".join(out)


def _roman_n(rng: random.Random, difficulty: int) -> int:
    while True:
        n = rng.randint(1, (50, 500, 3999)[difficulty - 1])
        if to_roman(n) != to_roman(n, subtractive=False) or difficulty == 1:
            return n


def _to_roman(rng: random.Random, difficulty: int) -> Draft:
    """Write an integer (1..50 / 500 / 3999) in standard Roman numerals.

    Trains subtractive notation (IV, XC, CM). Case-insensitive. Not covered: overlines for
    numbers above 3999. Probes: the purely additive form (IIII, VIIII...), the decimal digits.
    """
    n = _roman_n(rng, difficulty)
    prompt = f"Write {n} in standard Roman numerals. Reply with only the numeral."
    return Draft(prompt, answer=to_roman(n), public={"n": n})


def _to_roman_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    return check(task.domain, t is not None and t.upper() == task.hidden["answer"])


def _to_roman_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return drop_correct({"additive": to_roman(n, subtractive=False), "decimal": str(n)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.to_roman-v1", _to_roman, _to_roman_check, _to_roman_exploits,
                                 description=_to_roman.__doc__))


def _from_roman(rng: random.Random, difficulty: int) -> Draft:
    """Read a standard Roman numeral (up to L / D / MMMCMXCIX) as an integer.

    Not covered: non-standard numerals. Probes: the sum of the letters ignoring subtraction.
    """
    n = _roman_n(rng, difficulty)
    r = to_roman(n)
    prompt = f"What integer is the Roman numeral {r}? {INT_FMT}"
    return Draft(prompt, answer=n, public={"numeral": r})


def _from_roman_exploits(task: Task) -> dict[str, str]:
    val = dict(I=1, V=5, X=10, L=50, C=100, D=500, M=1000)
    return drop_correct({"letter_sum": str(sum(val[c] for c in task.public["numeral"]))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.from_roman-v1", _from_roman, int_check, _from_roman_exploits,
                                 description=_from_roman.__doc__))


def _int_log(rng: random.Random, difficulty: int) -> Draft:
    """Floor(log_b n): the largest k with b^k <= n (b in 2..10).

    n up to 10^3 / 10^9 / 10^30. Not covered: real-valued logarithms. Probes: k + 1, the
    number of decimal digits of n.
    """
    b = rng.randint(2, 10)
    n = rng.randint(b + 1, 10 ** (3, 9, 30)[difficulty - 1])
    k = 0
    while b ** (k + 1) <= n:
        k += 1
    prompt = f"What is the largest integer k with {b}^k <= {n}? {INT_FMT}"
    return Draft(prompt, answer=k, public={"b": b, "n": n})


def _int_log_exploits(task: Task) -> dict[str, str]:
    k = int(task.hidden["answer"])
    return drop_correct({"plus_one": str(k + 1), "digits": str(len(str(task.public["n"])))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.int_log-v1", _int_log, int_check, _int_log_exploits,
                                 description=_int_log.__doc__))


DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _clock(rng: random.Random, difficulty: int) -> Draft:
    """24-hour clock arithmetic: a time plus (d3: minus) a number of minutes.

    d1 adds < 3 h, d2 adds up to 3 days (answer HH:MM), d3 adds or subtracts up to 10 days
    from a weekday and asks for ``Weekday HH:MM``. Exact match; no partial credit (a
    guessed weekday would otherwise pay). Not covered: time zones, DST, 12-hour format.
    Probes: the start time unchanged, minutes added as hours-and-minutes with no carry.
    """
    start = rng.randint(0, 24 * 60 - 1)
    delta = rng.randint(5, (180, 3 * 1440, 10 * 1440)[difficulty - 1])
    sign = -1 if difficulty == 3 and rng.random() < 0.5 else 1
    day = rng.randrange(7)
    end = day * 1440 + start + sign * delta
    hhmm = lambda m: f"{m % 1440 // 60:02d}:{m % 60:02d}"  # noqa: E731
    if difficulty == 3:
        when = f"{DAYS[day]} {hhmm(start)}"
        ans = f"{DAYS[(end // 1440) % 7]} {hhmm(end)}"
        fmt = "Reply with only the weekday and the time as 'Weekday HH:MM' (24-hour)."
    else:
        when, ans, fmt = hhmm(start), hhmm(end), "Reply with only the time as HH:MM (24-hour)."
    verb = "after" if sign > 0 else "before"
    prompt = f"What is the time {delta} minutes {verb} {when}? {fmt}"
    return Draft(prompt, answer=ans, public={"start": when})


def _clock_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    return check(task.domain, t is not None and " ".join(t.split()).lower() == task.hidden["answer"].lower())


def _clock_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"unchanged": task.public["start"]}, hidden_answer(task))


register_domain(SingleTurnDomain("math.clock-v1", _clock, _clock_check, _clock_exploits,
                                 description=_clock.__doc__))


def _divmod(rng: random.Random, difficulty: int) -> Draft:
    """Integer division with remainder: ``q, r`` with n = q*d + r, 0 <= r < d.

    Per-field partial credit (quotient, remainder: 0.5 each); exactly two integers required.
    Dividends up to 10^3 / 10^6 / 10^12. Not covered: negative operands. Probes: "0, n",
    the remainder and quotient swapped.
    """
    d = rng.randint(3, (20, 999, 99_999)[difficulty - 1])
    n = rng.randint(d * 2, (1000, 10 ** 6, 10 ** 12)[difficulty - 1])
    if n % d == 0:
        n += 1
    q, r = divmod(n, d)
    prompt = (f"Divide {n} by {d}. Reply with only the quotient and the remainder as 'q, r' "
              f"(two integers, 0 <= r < {d}).")
    return Draft(prompt, answer=f"{q}, {r}", public={"n": n, "d": d},
                 hidden={"q": q, "r": r})


def _divmod_check(task: Task, answer: str) -> Score:
    got = parse_items(answer_text(answer), 2, parse_int)
    return per_item(task.domain, got, [task.hidden["q"], task.hidden["r"]], label="field")


def _divmod_exploits(task: Task) -> dict[str, str]:
    q, r, n = task.hidden["q"], task.hidden["r"], task.public["n"]
    return drop_correct({"zero_n": f"0, {n}", "swapped": f"{r}, {q}"}, hidden_answer(task))


register_domain(SingleTurnDomain("math.divmod-v1", _divmod, _divmod_check, _divmod_exploits,
                                 description=_divmod.__doc__))
