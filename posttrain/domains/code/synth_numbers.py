"""Numbers, bits, dates and matrices, function synthesis (hidden tests; :mod:`._synth_common`).

- ``code.synth_primes-v1``: ``primes_stat(n)`` — d1 the primes up to n, d2 the prime
  factorisation ``[[p, e], ...]``, d3 the count of primes up to n with n = 2,000,000 in a timed
  hidden test (a sieve passes, trial division times out).
- ``code.synth_roman-v1``: ``roman(x)`` — d1 integer → numeral up to 100, d2 up to 3999 with
  ``ValueError`` outside, d3 numeral → integer rejecting non-canonical numerals ("IIII", "IC").
- ``code.synth_bits-v1``: ``bits(...)`` — d1 population count, d2 reversing the low w bits,
  d3 the next larger integer with the same number of one bits (the timed hidden test makes a
  counting loop run ~2^30 steps).
- ``code.synth_dates-v1``: ``date_calc(...)`` without libraries (``datetime`` is not an allowed
  import) — d1 day of the year, d2 days between two dates, d3 a date plus n days (|n| up to
  a million).
- ``code.synth_matrix-v1``: ``mat(...)`` — d1 transpose, d2 product with ``ValueError`` on bad
  shapes, d3 ``A^k mod m`` with k up to 10^12 (fast exponentiation; the timed test has a huge k).

Reward and probes: :class:`._synth_common.SynthDomain`.
"""

from __future__ import annotations

import datetime
import random

from posttrain.domains.base import register_domain

from ._synth_common import Level, SynthDomain, raises_driver

BIG = "Hidden tests include one large input (see the sizes above) run under a time limit of a few seconds."

_PRIMES_LIST = """def primes_stat(n):
    return [p for p in range(2, n + 1) if all(p % q for q in range(2, int(p ** 0.5) + 1))]
"""
_FACTOR = """def primes_stat(n):
    out, p = [], 2
    while p * p <= n:
        e = 0
        while n % p == 0:
            n //= p
            e += 1
        if e:
            out.append([p, e])
        p += 1
    if n > 1:
        out.append([n, 1])
    return out
"""
_SIEVE = """def primes_stat(n):
    if n < 2:
        return 0
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    for p in range(2, int(n ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p::p] = bytes(len(range(p * p, n + 1, p)))
    return sum(sieve)
"""
register_domain(SynthDomain("code.synth_primes-v1", "primes_stat", {
    1: Level("primes_stat(n) returns the list of primes p <= n in increasing order ([] when "
             "n < 2).", _PRIMES_LIST, lambda r, c: [r.randint(-2, 60)],
             bug=("int(p ** 0.5) + 1", "int(p ** 0.5)")),
    2: Level("primes_stat(n) returns the prime factorisation of the integer n >= 2 as a list "
             "[[p, e], ...] of primes p with exponents e, p increasing.", _FACTOR,
             lambda r, c: [r.randint(2, 10**6) if r.random() < 0.6 else r.choice([2, 3, 5, 7]) ** r.randint(1, 9) * r.randint(1, 30)],
             bug=("    if n > 1:\n        out.append([n, 1])\n", "")),
    3: Level("primes_stat(n) returns how many primes are <= n; n goes up to 2,000,000.", _SIEVE,
             lambda r, c: [r.randint(-1, 300)], big=lambda r, c: [r.randint(1_900_000, 2_000_000)],
             bug=("int(n ** 0.5) + 1", "int(n ** 0.5)")),
}, big_note=BIG,
    description="Write prime functions: listing, factorising, counting with a sieve.\n\n" + __doc__))

_TO_ROMAN = """def roman(x):
    if not 1 <= x <= 3999:
        raise ValueError("out of range")
    out = ""
    for value, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                       (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while x >= value:
            out += sym
            x -= value
    return out
"""
_FROM_ROMAN = """VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
PAIRS = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
         (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def roman(s):
    if not s or any(ch not in VALUES for ch in s):
        raise ValueError("not a numeral")
    total = 0
    for i, ch in enumerate(s):
        v = VALUES[ch]
        total += -v if i + 1 < len(s) and VALUES[s[i + 1]] > v else v
    x, canon = total, ""
    for value, sym in PAIRS:
        while x >= value:
            canon += sym
            x -= value
    if canon != s:
        raise ValueError("not canonical")
    return total
"""


def _canon(x: int) -> str:
    ns: dict = {}
    exec(_TO_ROMAN, ns)  # our own reference, to draw valid numerals
    return ns["roman"](x)


def _roman_in(r: random.Random, c: dict) -> list:
    if r.random() < 0.6:
        return [_canon(r.randint(1, 3999))]
    return [r.choice(["IIII", "VX", "IC", "MMMM", "", "XM", "IIV", "VV", "ab", "LL", "CCCC", "DM",
                      _canon(r.randint(1, 300)) + "M", "I" + _canon(r.randint(5, 300))])]


register_domain(SynthDomain("code.synth_roman-v1", "roman", {
    1: Level("roman(x) returns the Roman numeral of the integer 1 <= x <= 100 (subtractive "
             "forms: IV, IX, XL, XC).", _TO_ROMAN, lambda r, c: [r.randint(1, 100)],
             bug=("(9, \"IX\"), ", "")),
    2: Level("roman(x) returns the Roman numeral of x for 1 <= x <= 3999 (subtractive forms IV, "
             "IX, XL, XC, CD, CM) and raises ValueError for any other integer.", _TO_ROMAN,
             lambda r, c: [r.randint(1, 3999) if r.random() < 0.8 else r.choice([0, -5, 4000, 10**6])],
             bug=("if not 1 <= x <= 3999:", "if x > 3999:")),
    3: Level("roman(s) returns the integer value of the Roman numeral s and raises ValueError "
             "unless s is exactly the canonical numeral of a number in 1..3999 (so \"IIII\", "
             "\"VX\", \"IC\", \"MMMM\" and \"\" are rejected).", _FROM_ROMAN, _roman_in,
             bug=("    if canon != s:\n        raise ValueError(\"not canonical\")\n", "")),
}, driver=raises_driver("roman"),
    description="Write Roman numeral conversion both ways, rejecting bad input.\n\n" + __doc__))

_POP = """def bits(n):
    return bin(n).count("1")
"""
_REV = """def bits(n, w):
    out = 0
    for _ in range(w):
        out = (out << 1) | (n & 1)
        n >>= 1
    return out
"""
_NEXT = """def bits(n):
    low = n & -n
    ripple = n + low
    return (((ripple ^ n) >> 2) // low) | ripple
"""


def _rev_in(r: random.Random, c: dict) -> list:
    w = r.randint(1, 16)
    return [r.randrange(1 << w), w]


register_domain(SynthDomain("code.synth_bits-v1", "bits", {
    1: Level("bits(n) returns the number of 1 bits in the binary form of the non-negative "
             "integer n (n < 2**64).", _POP, lambda r, c: [r.getrandbits(r.randint(0, 64))],
             bug=("bin(n).count(\"1\")", "bin(n & 0xFFFFFFFF).count(\"1\")")),
    2: Level("bits(n, w) returns the integer whose lowest w bits are the lowest w bits of n in "
             "reverse order (0 <= n < 2**w; bit 0 swaps with bit w-1).", _REV, _rev_in,
             bug=("for _ in range(w):", "for _ in range(min(w, 12)):")),
    3: Level("bits(n) returns the smallest integer greater than n with the same number of 1 bits "
             "(1 <= n < 2**62).", _NEXT,
             lambda r, c: [r.getrandbits(r.randint(1, 20)) | 1 if r.random() < 0.5 else r.randint(1, 5000)],
             big=lambda r, c: [((1 << r.randint(15, 25)) - 1) << r.randint(30, 33)],
             bug=("    return (((ripple", "    if n % 4 == 0:\n        return ripple\n    return (((ripple")),
}, big_note=BIG,
    description="Write bit-manipulation functions (popcount, bit reversal, next same-popcount).\n\n" + __doc__))

_CIVIL = """def days_from_civil(y, m, d):
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy


def parse(s):
    y, m, d = (int(p) for p in s.split("-"))
    return days_from_civil(y, m, d)
"""
_INVERSE = """

def civil(z):
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return f"{yoe + era * 400 + (m <= 2):04d}-{m:02d}-{d:02d}"
"""


def _date(r: random.Random) -> str:
    lo, hi = datetime.date(1600, 1, 1).toordinal(), datetime.date(2400, 12, 31).toordinal()
    if r.random() < 0.3:  # the edges where day counting goes wrong
        y = r.choice([1600, 1700, 1900, 2000, 2024, 2100, 2023, 2400])
        return r.choice([f"{y}-02-28", f"{y}-12-31", f"{y}-03-01", f"{y}-01-01"] +
                        ([f"{y}-02-29"] if y % 4 == 0 and (y % 100 or y % 400 == 0) else []))
    return datetime.date.fromordinal(r.randint(lo, hi)).isoformat()


register_domain(SynthDomain("code.synth_dates-v1", "date_calc", {
    1: Level("date_calc(s) returns the day of the year (1..366) of the Gregorian date "
             "\"YYYY-MM-DD\" (leap years: divisible by 4, except centuries not divisible by 400).",
             _CIVIL + "\n\ndef date_calc(s):\n    return parse(s) - parse(s[:4] + \"-01-01\") + 1\n",
             lambda r, c: [_date(r)], bug=("yoe // 4 - yoe // 100", "yoe // 4")),
    2: Level("date_calc(a, b) returns the number of days from Gregorian date a to date b "
             "(\"YYYY-MM-DD\"; negative when b is earlier).",
             _CIVIL + "\n\ndef date_calc(a, b):\n    return parse(b) - parse(a)\n",
             lambda r, c: [_date(r), _date(r)], bug=("- yoe // 100 + doy", "+ doy")),
    3: Level("date_calc(s, n) returns the Gregorian date \"YYYY-MM-DD\" that is n days after s "
             "(n may be negative, |n| <= 1,000,000; results stay within years 1..9999). Do not "
             "import datetime (it is not allowed).",
             _CIVIL + _INVERSE + "\n\ndef date_calc(s, n):\n    return civil(parse(s) + n)\n",
             lambda r, c: [_date(r), r.choice([1, -1, 59, 366, -365]) if r.random() < 0.3 else r.randint(-10**6, 10**6)],
             bug=("m = mp + 3 if mp < 10 else mp - 9", "m = mp + 3 if mp < 9 else mp - 9")),
},
    description="Write calendar arithmetic without date libraries.\n\n" + __doc__))

_T = """def mat(m):
    return [list(row) for row in zip(*m)]
"""
_MUL = """def mat(a, b):
    if not a or not b or not a[0] or not b[0]:
        raise ValueError("empty matrix")
    if any(len(r) != len(a[0]) for r in a) or any(len(r) != len(b[0]) for r in b):
        raise ValueError("ragged matrix")
    if len(a[0]) != len(b):
        raise ValueError("shapes do not match")
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]
"""
_POW = """def mat(a, k, m):
    n = len(a)

    def mul(x, y):
        return [[sum(x[i][t] * y[t][j] for t in range(n)) % m for j in range(n)] for i in range(n)]

    result = [[int(i == j) % m for j in range(n)] for i in range(n)]
    base = [[v % m for v in row] for row in a]
    while k:
        if k & 1:
            result = mul(result, base)
        base = mul(base, base)
        k >>= 1
    return result
"""


def _m(r: random.Random, rows: int, cols: int, lo: int = -3, hi: int = 5) -> list:
    return [[r.randint(lo, hi) for _ in range(cols)] for _ in range(rows)]


def _mul_in(r: random.Random, c: dict) -> list:
    p, q, s = r.randint(1, 3), r.randint(1, 3), r.randint(1, 3)
    a, b = _m(r, p, q), _m(r, q if r.random() < 0.75 else q + 1, s)
    if r.random() < 0.1:
        a = a + [[1] * (q + 1)]
    return [a, b]


register_domain(SynthDomain("code.synth_matrix-v1", "mat", {
    1: Level("mat(m) returns the transpose of the rectangular matrix m given as a list of rows "
             "([] stays []).", _T, lambda r, c: [_m(r, r.randint(1, 4), r.randint(1, 4))],
             bug=("zip(*m)]", "zip(*m)][:2]")),
    2: Level("mat(a, b) returns the matrix product a·b (lists of rows); it raises ValueError when "
             "a or b is empty or ragged, or the column count of a differs from the row count of b.",
             _MUL, _mul_in, bug=("    if len(a[0]) != len(b):\n        raise ValueError(\"shapes do not match\")\n", "")),
    3: Level("mat(a, k, m) returns the square matrix a raised to the power k (k >= 0; k = 0 gives "
             "the identity) with every entry reduced modulo m (m >= 1); k goes up to 10**12.",
             _POW, lambda r, c: (lambda n: [_m(r, n, n, 0, 9), r.randint(0, 40), r.randint(2, 97)])(r.randint(1, 3)),
             big=lambda r, c: [_m(r, 3, 3, 0, 9), r.randint(10**11, 10**12), 1_000_007],
             bug=("if k & 1:", "if k & 1 and k > 1:")),
}, driver=raises_driver("mat"), big_note=BIG,
    description="Write matrix functions: transpose, product, fast modular power.\n\n" + __doc__))
