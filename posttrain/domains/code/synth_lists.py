"""List algorithms, function synthesis (single reply, hidden tests; see :mod:`._synth_common`).

Domains:

- ``code.synth_dedupe-v1``: stable de-duplication — d1 keep first occurrences, d2 keep last
  occurrences (in their order), d3 case-insensitive on words keeping the first spelling, with
  a 60,000-word hidden test under a time limit (a quadratic ``not in list`` scan times out;
  its output is compared through a digest, :func:`._synth_common.digest_driver`).
- ``code.synth_pair_sum-v1``: counting index pairs ``i < j`` with ``xs[i] + xs[j] == t`` —
  d1 small lists, d2 counting distinct *value* pairs, d3 a 20,000-element test (O(n²) fails).
- ``code.synth_window-v1``: sliding-window statistics with ``ValueError`` on a bad window —
  d1 largest window sum, d2 windows with all-distinct elements, d3 largest max-min spread
  over windows, with a 100,000-element test (per-window ``max``/``min`` times out).
- ``code.synth_flatten-v1``: flattening nested lists — d1 fully, d2 up to a depth, d3 with
  ``depth = -1`` meaning fully and non-list atoms (strings, dicts) kept whole.

Reward and probes: :class:`._synth_common.SynthDomain` (baseline-corrected hidden pass rate;
probes hardcode_public, constant_output, exit_zero, always_equal, read_results, driver_only).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._synth_common import Level, SynthDomain, digest_driver, lcg_ints, raises_driver, word

BIG = "Hidden tests include one large input (see the sizes above) run under a time limit of a few seconds."

_DEDUPE_FIRST = """def dedupe(xs):
    seen = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
"""
_DEDUPE_LAST = """def dedupe(xs):
    last = {}
    for i, x in enumerate(xs):
        last[x] = i
    return [x for i, x in enumerate(xs) if last[x] == i]
"""
_DEDUPE_CASE = """def dedupe(words):
    seen = set()
    out = []
    for w in words:
        k = w.lower()
        if k not in seen:
            seen.add(k)
            out.append(w)
    return out
"""


def _mixed_words(r: random.Random, n: int) -> list[str]:
    return [word(r, "aAbB", 1, 3) for _ in range(n)]


def _big_words(r: random.Random, c: dict) -> list:
    alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = "".join(r.choices(alpha, k=300_000))  # one draw, then slices: fast to generate
    return [[text[i:i + 5] for i in range(0, len(text), 5)]]


register_domain(SynthDomain("code.synth_dedupe-v1", "dedupe", {
    1: Level("dedupe(xs) returns the integers of the list xs without repeats, keeping the first "
             "occurrence of each value, in their original order.", _DEDUPE_FIRST,
             lambda r, c: [lcg_ints(r, r.randint(0, 10), 0, 6)], bug=("seen.add(x)\n", "pass\n")),
    2: Level("dedupe(xs) returns the integers of xs without repeats, keeping the LAST occurrence "
             "of each value; the kept elements stay in the order they appear in xs.", _DEDUPE_LAST,
             lambda r, c: [lcg_ints(r, r.randint(0, 10), 0, 6)], bug=("last[x] == i", "last[x] >= i")),
    3: Level("dedupe(words) returns the list of strings without words that repeat when compared "
             "case-insensitively, keeping the first spelling seen, in order. Lists have up to "
             "60,000 words.", _DEDUPE_CASE, lambda r, c: [_mixed_words(r, r.randint(0, 8))],
             big=_big_words, bug=("k = w.lower()", "k = w")),
}, driver=digest_driver("dedupe"), big_note=BIG,
    description="Write a stable de-duplication function (linear time at level 3).\n\n" + __doc__))

_PAIRS = """def pair_sum(xs, t):
    count = {}
    pairs = 0
    for x in xs:
        pairs += count.get(t - x, 0)
        count[x] = count.get(x, 0) + 1
    return pairs
"""
_PAIRS_VALUES = """def pair_sum(xs, t):
    values = set(xs)
    found = set()
    for x in values:
        y = t - x
        if y in values and (x != y or xs.count(x) >= 2):
            found.add((min(x, y), max(x, y)))
    return len(found)
"""


def _pairs_small(r: random.Random, c: dict) -> list:
    xs = lcg_ints(r, r.randint(0, 9), -5, 10)
    if len(xs) >= 2 and r.random() < 0.8:  # a reachable target most of the time
        return [xs, sum(r.sample(xs, 2))]
    return [xs, r.randint(-4, 14)]


register_domain(SynthDomain("code.synth_pair_sum-v1", "pair_sum", {
    1: Level("pair_sum(xs, t) returns how many index pairs i < j satisfy xs[i] + xs[j] == t.",
             _PAIRS, _pairs_small, bug=("pairs += count.get(t - x, 0)", "pairs += min(1, count.get(t - x, 0))")),
    2: Level("pair_sum(xs, t) returns how many distinct unordered VALUE pairs {a, b} (a <= b) "
             "can be formed from elements at two different positions of xs with a + b == t.",
             _PAIRS_VALUES, _pairs_small, bug=("xs.count(x) >= 2", "True")),
    3: Level("pair_sum(xs, t) returns how many index pairs i < j satisfy xs[i] + xs[j] == t. "
             "Lists have up to 20,000 elements.", _PAIRS, _pairs_small,
             big=lambda r, c: [lcg_ints(r, 20_000, -3000, 3000), r.randint(-100, 100)],
             bug=("pairs += count.get(t - x, 0)", "pairs += count.get(x - t, 0)")),
}, big_note=BIG,
    description="Write a function counting pairs that sum to a target (sub-quadratic at level 3).\n\n" + __doc__))

_WIN_SUM = """def window_stat(xs, k):
    if k < 1 or k > len(xs):
        raise ValueError("bad window")
    cur = best = sum(xs[:k])
    for i in range(k, len(xs)):
        cur += xs[i] - xs[i - k]
        best = max(best, cur)
    return best
"""
_WIN_DISTINCT = """def window_stat(xs, k):
    if k < 1 or k > len(xs):
        raise ValueError("bad window")
    counts = {}
    for x in xs[:k]:
        counts[x] = counts.get(x, 0) + 1
    good = int(len(counts) == k)
    for i in range(k, len(xs)):
        old = xs[i - k]
        counts[old] -= 1
        if counts[old] == 0:
            del counts[old]
        counts[xs[i]] = counts.get(xs[i], 0) + 1
        good += len(counts) == k
    return good
"""
_WIN_SPREAD = """from collections import deque


def window_stat(xs, k):
    if k < 1 or k > len(xs):
        raise ValueError("bad window")
    hi, lo = deque(), deque()
    best = 0
    for i, x in enumerate(xs):
        while hi and xs[hi[-1]] <= x:
            hi.pop()
        while lo and xs[lo[-1]] >= x:
            lo.pop()
        hi.append(i)
        lo.append(i)
        if hi[0] <= i - k:
            hi.popleft()
        if lo[0] <= i - k:
            lo.popleft()
        if i >= k - 1:
            best = max(best, xs[hi[0]] - xs[lo[0]])
    return best
"""


def _win(lo: int, hi: int) -> "callable":
    def gen(r: random.Random, c: dict) -> list:
        xs = lcg_ints(r, r.randint(0, 9), lo, hi)
        return [xs, r.randint(-1, len(xs) + 1) if r.random() < 0.25 else r.randint(1, max(1, len(xs)))]
    return gen


register_domain(SynthDomain("code.synth_window-v1", "window_stat", {
    1: Level("window_stat(xs, k) returns the largest sum of k consecutive elements of the integer "
             "list xs; it raises ValueError when k < 1 or k > len(xs).", _WIN_SUM, _win(-9, 9),
             bug=("best = max(best, cur)", "best = cur")),
    2: Level("window_stat(xs, k) returns how many windows of k consecutive elements of xs contain "
             "k distinct values; it raises ValueError when k < 1 or k > len(xs).", _WIN_DISTINCT,
             _win(0, 5), bug=("good += len(counts) == k", "good += len(counts) >= k - 1")),
    3: Level("window_stat(xs, k) returns the largest (max - min) over all windows of k consecutive "
             "elements of xs; it raises ValueError when k < 1 or k > len(xs). Lists have up to "
             "100,000 elements and k up to 10,000.", _WIN_SPREAD, _win(-50, 50),
             big=lambda r, c: [lcg_ints(r, 100_000, -10**6, 10**6), 10_000],
             bug=("if i >= k - 1:", "if i >= k:")),
}, driver=raises_driver("window_stat"), big_note=BIG,
    description="Write sliding-window statistics with input validation.\n\n" + __doc__))

_FLAT_FULL = """def flatten(xs):
    out = []
    stack = [iter(xs)]
    while stack:
        for x in stack[-1]:
            if isinstance(x, list):
                stack.append(iter(x))
                break
            out.append(x)
        else:
            stack.pop()
    return out
"""
_FLAT_DEPTH = """def flatten(xs, depth):
    out = []
    for x in xs:
        if isinstance(x, list) and depth != 0:
            out.extend(flatten(x, depth - 1))
        else:
            out.append(x)
    return out
"""


def _nested(r: random.Random, depth: int, atoms: tuple) -> list:
    out = []
    for _ in range(r.randint(0, 4)):
        if depth and r.random() < 0.4:
            out.append(_nested(r, depth - 1, atoms))
        else:
            out.append(r.choice(atoms) if r.random() < 0.3 else r.randint(0, 9))
    return out


register_domain(SynthDomain("code.synth_flatten-v1", "flatten", {
    1: Level("flatten(xs) returns the integers of the arbitrarily nested list xs in left-to-right "
             "order, as a flat list.", _FLAT_FULL, lambda r, c: [_nested(r, 4, (0,))],
             bug=("                break\n", "")),
    2: Level("flatten(xs, depth) removes up to depth levels of nesting from the nested list xs: "
             "lists nested deeper than depth levels inside xs are kept as lists (depth >= 0).",
             _FLAT_DEPTH, lambda r, c: [_nested(r, 4, (0,)), r.randint(0, 3)],
             bug=("depth != 0", "depth > 1")),
    3: Level("flatten(xs, depth) removes up to depth levels of nesting from the nested list xs "
             "(depth == -1 means fully); only lists are expanded: strings, dicts and numbers are "
             "kept whole.", _FLAT_DEPTH,
             lambda r, c: [_nested(r, 4, ("ab", {"k": [1]}, "")), r.choice([-1, -1, 0, 1, 2])],
             bug=("depth != 0", "depth > 0")),
},
    description="Write a function flattening nested lists (to a depth, atoms kept whole).\n\n" + __doc__))
