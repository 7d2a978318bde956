"""Dynamic programming and recursion, function synthesis (hidden tests; :mod:`._synth_common`).

- ``code.synth_lis-v1``: ``lis(xs)`` — d1 longest strictly increasing subsequence length,
  d2 non-decreasing, d3 strictly increasing with a 20,000-element test under a time limit
  (the quadratic DP times out; patience sorting with bisect passes).
- ``code.synth_edit_distance-v1``: ``distance(a, b)`` — d1 Levenshtein, d2 with drawn
  insertion/deletion/substitution costs, d3 optimal string alignment (adjacent transpositions).
- ``code.synth_coins-v1``: ``coins(amount, denoms)`` — d1 fewest coins (-1 if impossible),
  d2 number of combinations, d3 number of ordered sequences modulo 1,000,000,007 with an
  amount of 20,000 in a hidden test (plain recursion explodes).
- ``code.synth_tree-v1``: binary trees as nested ``[value, left, right]`` lists (``null`` for
  none) — d1 depth, d2 root-to-leaf path sums left to right, d3 number of downward paths
  with a given sum.

Reward and probes: :class:`._synth_common.SynthDomain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._synth_common import Level, SynthDomain, lcg_ints, word

BIG = "Hidden tests include one large input (see the sizes above) run under a time limit of a few seconds."

_LIS = """from bisect import <<b>>


def lis(xs):
    tails = []
    for x in xs:
        i = <<b>>(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    return len(tails)
"""
_small = lambda r, c: [lcg_ints(r, r.randint(0, 11), 0, 9)]  # noqa: E731
register_domain(SynthDomain("code.synth_lis-v1", "lis", {
    1: Level("lis(xs) returns the length of the longest strictly increasing subsequence (not "
             "necessarily contiguous) of the integer list xs.", _LIS, _small,
             consts=lambda r: {"b": "bisect_left"}, bug=("tails[i] = x", "pass")),
    2: Level("lis(xs) returns the length of the longest non-decreasing subsequence (not "
             "necessarily contiguous; equal neighbours allowed) of the integer list xs.", _LIS, _small,
             consts=lambda r: {"b": "bisect_right"}, bug=("tails[i] = x", "pass")),
    3: Level("lis(xs) returns the length of the longest strictly increasing subsequence (not "
             "necessarily contiguous) of the integer list xs; lists have up to 20,000 elements.",
             _LIS, _small, consts=lambda r: {"b": "bisect_left"},
             big=lambda r, c: [lcg_ints(r, 20_000, 0, 10**6)], bug=("tails[i] = x", "pass")),
}, big_note=BIG,
    description="Write a longest-increasing-subsequence function (efficient at level 3).\n\n" + __doc__))

_EDIT = """def distance(a, b):
    ci, cd, cs = <<ci>>, <<cd>>, <<cs>>
    m, n = len(a), len(b)
    d = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        d[i][0] = i * cd
    for j in range(1, n + 1):
        d[0][j] = j * ci
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            sub = d[i - 1][j - 1] + (0 if a[i - 1] == b[j - 1] else cs)
            d[i][j] = min(d[i - 1][j] + cd, d[i][j - 1] + ci, sub)
            if <<t>> and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[m][n]
"""
_words = lambda r, c: [word(r, "abc", 0, 6), word(r, "abc", 0, 6)]  # noqa: E731
_unit = {"ci": 1, "cd": 1, "cs": 1}
register_domain(SynthDomain("code.synth_edit_distance-v1", "distance", {
    1: Level("distance(a, b) returns the Levenshtein distance between strings a and b: the fewest "
             "single-character insertions, deletions and substitutions turning a into b.", _EDIT,
             _words, consts=lambda r: dict(_unit, t=False), bug=("d[i][0] = i * cd", "d[i][0] = 0")),
    2: Level("distance(a, b) returns the cheapest way to turn string a into string b where "
             "inserting a character costs <<ci>>, deleting one costs <<cd>> and substituting one "
             "costs <<cs>>.", _EDIT, _words,
             consts=lambda r: {"ci": r.randint(1, 4), "cd": r.randint(1, 4), "cs": r.randint(1, 5), "t": False},
             bug=("d[i - 1][j] + cd", "d[i - 1][j] + ci")),
    3: Level("distance(a, b) returns the optimal string alignment distance between a and b: the "
             "fewest insertions, deletions, substitutions and swaps of two adjacent characters "
             "(each costing 1) turning a into b, where no substring is edited more than once.",
             _EDIT, _words, consts=lambda r: dict(_unit, t=True),
             bug=("d[i - 2][j - 2] + 1", "d[i - 2][j - 2] + 2")),
},
    description="Write an edit-distance function (Levenshtein, weighted, with transpositions).\n\n" + __doc__))

_COINS_MIN = """def coins(amount, denoms):
    best = [0] + [amount + 1] * amount
    for a in range(1, amount + 1):
        for c in denoms:
            if c <= a and best[a - c] + 1 < best[a]:
                best[a] = best[a - c] + 1
    return best[amount] if best[amount] <= amount else -1
"""
_COINS_WAYS = """def coins(amount, denoms):
    ways = [1] + [0] * amount
    for c in sorted(set(denoms)):
        for a in range(c, amount + 1):
            ways[a] += ways[a - c]
    return ways[amount]
"""
_COINS_SEQ = """def coins(amount, denoms):
    mod = 1_000_000_007
    ways = [1] + [0] * amount
    for a in range(1, amount + 1):
        ways[a] = sum(ways[a - c] for c in denoms if c <= a) % mod
    return ways[amount]
"""


def _coin_gen(top: int, small: tuple[int, int]):
    def gen(r: random.Random, c: dict) -> list:
        return [r.randint(0, top), sorted(r.sample(range(small[0], small[1] + 1), r.randint(1, 3)))]
    return gen


register_domain(SynthDomain("code.synth_coins-v1", "coins", {
    1: Level("coins(amount, denoms) returns the fewest coins (unlimited supply of each "
             "denomination in denoms) summing to amount, or -1 when impossible (0 for amount 0).",
             _COINS_MIN, _coin_gen(30, (2, 9)),
             bug=("return best[amount] if best[amount] <= amount else -1", "return best[amount]")),
    2: Level("coins(amount, denoms) returns the number of ways to make amount from coins of the "
             "given denominations (unlimited supply), where order does not matter (1 for amount 0).",
             _COINS_WAYS, _coin_gen(40, (1, 9)),
             bug=("ways[a] += ways[a - c]", "ways[a] += ways[a - c] if a < 25 else 0")),
    3: Level("coins(amount, denoms) returns the number of ORDERED sequences of coins from denoms "
             "(unlimited supply) summing to amount, modulo 1_000_000_007 (1 for amount 0); amounts "
             "go up to 20,000.", _COINS_SEQ, _coin_gen(60, (1, 12)),
             big=lambda r, c: [20_000, sorted(r.sample(range(1, 50), 8))], bug=("ways = [1] + [0] * amount", "ways = [1] + [0] * amount\n    denoms = denoms[1:] if len(denoms) > 2 else denoms")),
}, big_note=BIG,
    description="Write coin-change dynamic programs (fewest coins, combinations, sequences).\n\n" + __doc__))

_DEPTH = """def tree_stat(tree):
    if tree is None:
        return 0
    return 1 + max(tree_stat(tree[1]), tree_stat(tree[2]))
"""
_PATHS = """def tree_stat(tree):
    out = []

    def walk(node, acc):
        if node is None:
            return
        acc += node[0]
        if node[1] is None and node[2] is None:
            out.append(acc)
        walk(node[1], acc)
        walk(node[2], acc)

    walk(tree, 0)
    return out
"""
_TARGET = """def tree_stat(tree, target):
    counts = {0: 1}

    def walk(node, acc):
        if node is None:
            return 0
        acc += node[0]
        found = counts.get(acc - target, 0)
        counts[acc] = counts.get(acc, 0) + 1
        found += walk(node[1], acc) + walk(node[2], acc)
        counts[acc] -= 1
        return found

    return walk(tree, 0)
"""


def _tree(r: random.Random, depth: int, stop: float = 0.25) -> list | None:
    if depth == 0 or r.random() < stop:
        return None
    return [r.randint(-3, 6), _tree(r, depth - 1, stop + 0.1), _tree(r, depth - 1, stop + 0.1)]


register_domain(SynthDomain("code.synth_tree-v1", "tree_stat", {
    1: Level("A binary tree is null or [value, left, right]. tree_stat(tree) returns its depth: "
             "the number of nodes on the longest root-to-leaf path (0 for null).", _DEPTH,
             lambda r, c: [_tree(r, r.randint(1, 7), 0.15)], bug=("tree_stat(tree[2]))", "tree_stat(tree[2])) if tree[0] > -3 else 1")),
    2: Level("A binary tree is null or [value, left, right]. tree_stat(tree) returns the list of "
             "root-to-leaf path sums, leaves from left to right (a leaf has no children; [] for "
             "null).", _PATHS, lambda r, c: [_tree(r, 5)], bug=("is None and node[2]", "is None or node[2]")),
    3: Level("A binary tree is null or [value, left, right]. tree_stat(tree, target) returns how "
             "many downward paths (starting at any node, going only from parents to children, at "
             "least one node) have values summing to target.", _TARGET,
             lambda r, c: [_tree(r, 5), r.randint(-2, 8)], bug=("counts = {0: 1}", "counts = {}")),
},
    description="Write recursive functions over binary trees given as nested lists.\n\n" + __doc__))
