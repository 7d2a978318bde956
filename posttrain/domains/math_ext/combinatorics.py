"""Counting, probability and descriptive statistics.

Counts are exact integers; probabilities are exact reduced fractions (any exactly equal
fraction or terminating decimal is accepted); ``math.stats-v1`` scores per statistic.
Each count is computed by a method independent of the closed form the prompt invites
(enumeration or dynamic programming), so a wrong formula cannot hide in the reference.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections import Counter
from fractions import Fraction

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, hidden_answer

from ._kit import (answer_text, drop_correct, fmt_frac, frac_check, int_check, parse_frac, parse_items,
                   per_item)

INT_FMT = "Reply with only the integer."
FRAC_FMT = "Reply with only the probability as a fraction p/q in lowest terms."


def _ncr(rng: random.Random, difficulty: int) -> Draft:
    """Committees: C(n, k), n up to 10 / 30 / 60, as a word problem.

    Not covered: ordered selections (see multiset_perm). Probes: n!/(n-k)! (order counted),
    n*k.
    """
    n = rng.randint(4, (10, 30, 60)[difficulty - 1])
    k = rng.randint(2, n - 2)
    prompt = f"In how many ways can a committee of {k} people be chosen from {n} people? {INT_FMT}"
    return Draft(prompt, answer=math.comb(n, k), public={"n": n, "k": k})


def _ncr_exploits(task: Task) -> dict[str, str]:
    n, k = task.public["n"], task.public["k"]
    return drop_correct({"ordered": str(math.perm(n, k)), "nk": str(n * k)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.ncr-v1", _ncr, int_check, _ncr_exploits, description=_ncr.__doc__))


def _multiset_perm(rng: random.Random, difficulty: int) -> Draft:
    """Distinct arrangements of the letters of a word with repeats.

    n!/prod(m_i!) for words of 4-5 / 6-8 / 9-12 letters drawn from a small alphabet.
    Not covered: circular arrangements. Probes: n! (repeats ignored), the distinct-letter count.
    """
    n = rng.randint(*((4, 5), (6, 8), (9, 12))[difficulty - 1])
    while True:
        word = "".join(rng.choice("ABCDE"[: 2 + difficulty]) for _ in range(n))
        if len(set(word)) < n and len(set(word)) > 1:
            break
    counts = Counter(word)
    ans = math.factorial(n) // math.prod(math.factorial(c) for c in counts.values())
    prompt = f"How many distinct strings can be made by rearranging all the letters of {word}? {INT_FMT}"
    return Draft(prompt, answer=ans, public={"word": word})


def _multiset_perm_exploits(task: Task) -> dict[str, str]:
    w = task.public["word"]
    return drop_correct({"n_factorial": str(math.factorial(len(w))), "distinct": str(len(set(w)))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.multiset_perm-v1", _multiset_perm, int_check, _multiset_perm_exploits,
                                 description=_multiset_perm.__doc__))


def derangements(n: int) -> int:
    a, b = 1, 0  # D(0), D(1)
    for k in range(2, n + 1):
        a, b = b, (k - 1) * (a + b)
    return b if n >= 1 else a


def _derangements(rng: random.Random, difficulty: int) -> Draft:
    """Counting derangements (permutations with no or exactly j fixed points).

    Hat-check: permutations of n items with no fixed point (d3: exactly
    j fixed points, C(n, j) * D(n - j)). n up to 6 / 10 / 14. Not covered: ménage problems.
    Probes: n! - 1, (n-1)!.
    """
    n = rng.randint(3, (6, 10, 14)[difficulty - 1])
    j = rng.randint(1, n - 2) if difficulty == 3 else 0
    ans = math.comb(n, j) * derangements(n - j)
    what = "no guest gets their own hat back" if j == 0 else f"exactly {j} guests get their own hat back"
    prompt = (f"{n} guests check their hats; the hats are handed back in some order. In how many of the {n}! "
              f"orders does {what}? {INT_FMT}")
    return Draft(prompt, answer=ans, public={"n": n, "j": j})


def _derangements_exploits(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return drop_correct({"all_but_one": str(math.factorial(n) - 1), "cyclic": str(math.factorial(n - 1))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.derangements-v1", _derangements, int_check, _derangements_exploits,
                                 description=_derangements.__doc__))


def _dice_prob(rng: random.Random, difficulty: int) -> Draft:
    """P(sum of k fair s-sided dice = t) (d3: >= t), by exact convolution.

    k = 2 / 2-3 / 3-4 six- or eight-sided dice. Not covered: loaded dice, conditional
    probability. Probes: 1/s^k-naive "1/(number of sums)", 1/2.
    """
    k = (2, rng.randint(2, 3), rng.randint(3, 4))[difficulty - 1]
    s = 6 if difficulty < 3 else rng.choice([6, 8])
    dist = Counter({0: 1})
    for _ in range(k):
        nxt: Counter = Counter()
        for tot, c in dist.items():
            for f in range(1, s + 1):
                nxt[tot + f] += c
        dist = nxt
    t = rng.randint(k + 1, k * s - 1)
    at_least = difficulty == 3
    hits = sum(c for v, c in dist.items() if (v >= t if at_least else v == t))
    p = Fraction(hits, s ** k)
    rel = "at least" if at_least else "exactly"
    prompt = f"{k} fair {s}-sided dice (faces 1..{s}) are rolled. What is the probability that the sum is {rel} {t}? {FRAC_FMT}"
    return Draft(prompt, answer=fmt_frac(p), public={"k": k, "s": s, "t": t})


def _dice_prob_exploits(task: Task) -> dict[str, str]:
    k, s = task.public["k"], task.public["s"]
    return drop_correct({"uniform_sums": f"1/{k * s - k + 1}", "half": "1/2"}, hidden_answer(task))


register_domain(SingleTurnDomain("math.dice_prob-v1", _dice_prob, frac_check, _dice_prob_exploits,
                                 description=_dice_prob.__doc__))


SUITS = ["hearts", "diamonds", "clubs", "spades"]
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
DECK = [(r, s) for s in SUITS for r in RANKS]
EVENTS = {
    "both are hearts": lambda h: all(c[1] == "hearts" for c in h),
    "at least one is an ace": lambda h: any(c[0] == "A" for c in h),
    "they are the same rank": lambda h: len({c[0] for c in h}) == 1,
    "they are all different suits": lambda h: len({c[1] for c in h}) == len(h),
    "at least one is a face card (J, Q or K)": lambda h: any(c[0] in "JQK" for c in h),
    "exactly one is red": lambda h: sum(c[1] in ("hearts", "diamonds") for c in h) == 1,
}


@functools.lru_cache(maxsize=None)
def _card_counts(event: str, k: int) -> tuple[int, int, int]:
    """(favourable hands, all hands, favourable ordered draws with replacement when k = 2)."""
    test = EVENTS[event]
    hits = total = 0
    for hand in itertools.combinations(DECK, k):
        total += 1
        hits += test(hand)
    repl = sum(test(h) for h in itertools.product(DECK, repeat=k)) if k == 2 else 0
    return hits, total, repl


def _card_prob(rng: random.Random, difficulty: int) -> Draft:
    """Probability of card-hand events drawn without replacement from a 52-card deck.

    Probability of an event when drawing 2 (d1, d2) or 3 (d3) cards from a
    standard 52-card deck without replacement, computed by enumerating all hands.

    Not covered: with-replacement draws, poker hand ranking. Probes: the with-replacement
    probability (when it differs), 1/52.
    """
    k = 3 if difficulty == 3 else 2
    names = sorted(EVENTS)
    if k == 3:
        names = [e for e in names if "both" not in e and "same rank" not in e]
    event = rng.choice(names[:3] if difficulty == 1 else names)
    if k == 3:
        event = event.replace("they are", "the three cards are")
    hits, total, repl = _card_counts(event.replace("the three cards are", "they are"), k)
    p = Fraction(hits, total)
    prompt = (f"{k} cards are drawn at random without replacement from a standard 52-card deck. "
              f"What is the probability that {event}? {FRAC_FMT}")
    hidden = {"with_replacement": fmt_frac(Fraction(repl, 52 ** k)) if k == 2 else "1/52"}
    return Draft(prompt, answer=fmt_frac(p), hidden=hidden)


def _card_prob_exploits(task: Task) -> dict[str, str]:
    return drop_correct({"with_replacement": task.hidden["with_replacement"], "one_card": "1/52"},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.card_prob-v1", _card_prob, frac_check, _card_prob_exploits,
                                 description=_card_prob.__doc__))


def _stars_bars(rng: random.Random, difficulty: int) -> Draft:
    """Counting integer solutions of x1 + ... + xk = n (stars and bars, with bounds).

    Integer solutions of x1 + ... + xk = n with xi >= 0 (d1), xi >= 1
    (d2), or xi >= 0 and xi <= c (d3, by DP). Not covered: distinct parts / partitions.
    Probes: C(n, k), n^k capped.
    """
    k = rng.randint(2, (4, 5, 5)[difficulty - 1])
    n = rng.randint(k + 1, (12, 25, 20)[difficulty - 1])
    lo, cap = (0, n) if difficulty == 1 else (1, n) if difficulty == 2 else (0, rng.randint(max(2, n // k), n - 1))
    ways = [1] + [0] * n
    for _ in range(k):
        ways = [sum(ways[t - x] for x in range(lo, min(cap, t) + 1)) for t in range(n + 1)]
    cond = {0: "non-negative integers", 1: "positive integers"}[lo] if difficulty < 3 else \
        f"integers with 0 <= xi <= {cap}"
    names = " + ".join(f"x{i + 1}" for i in range(k))
    prompt = f"How many solutions does {names} = {n} have in {cond}? {INT_FMT}"
    return Draft(prompt, answer=ways[n], public={"n": n, "k": k})


def _stars_bars_exploits(task: Task) -> dict[str, str]:
    n, k = task.public["n"], task.public["k"]
    return drop_correct({"comb_nk": str(math.comb(n, k)), "power": str(min(n ** k, 10 ** 12))},
                        hidden_answer(task))


register_domain(SingleTurnDomain("math.stars_bars-v1", _stars_bars, int_check, _stars_bars_exploits,
                                 description=_stars_bars.__doc__))


def _lattice_paths(rng: random.Random, difficulty: int) -> Draft:
    """Counting monotone grid paths that avoid blocked points.

    Monotone (right/up) grid paths from (0,0) to (w,h), avoiding
    0 (d1), 1 (d2) or 2-3 (d3) blocked points; counted by DP. Not covered: paths with
    diagonal steps. Probes: C(w+h, w) (blocks ignored), w*h.
    """
    w, h = rng.randint(2, 3 + 2 * difficulty), rng.randint(2, 3 + 2 * difficulty)
    cells = [(x, y) for x in range(w + 1) for y in range(h + 1) if (x, y) not in ((0, 0), (w, h))]
    blocked = sorted(rng.sample(cells, (0, 1, rng.randint(2, 3))[difficulty - 1]))
    grid = [[0] * (h + 1) for _ in range(w + 1)]
    for x in range(w + 1):
        for y in range(h + 1):
            if (x, y) in blocked:
                continue
            grid[x][y] = 1 if (x, y) == (0, 0) else (grid[x - 1][y] if x else 0) + (grid[x][y - 1] if y else 0)
    blk = "" if not blocked else " that never pass through " + ", ".join(f"({x},{y})" for x, y in blocked)
    prompt = (f"How many shortest lattice paths go from (0,0) to ({w},{h}) using unit steps right (+x) and "
              f"up (+y){blk}? {INT_FMT}")
    return Draft(prompt, answer=grid[w][h], public={"w": w, "h": h,
                                                                              "blocked": [list(b) for b in blocked]})


def _lattice_paths_exploits(task: Task) -> dict[str, str]:
    w, h = task.public["w"], task.public["h"]
    return drop_correct({"no_blocks": str(math.comb(w + h, w)), "area": str(w * h)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.lattice_paths-v1", _lattice_paths, int_check, _lattice_paths_exploits,
                                 description=_lattice_paths.__doc__))


def _stats(rng: random.Random, difficulty: int) -> Draft:
    """Mean, median and mode of a list of integers, answered ``mean, median, mode``.

    Per-statistic partial credit (1/3 each); exactly three values (exact fractions or
    terminating decimals). The data always has a unique mode. Lists of 5 / 8 / 13 values.
    Not covered: variance, quartiles. Probes: the three values in the wrong order when they
    differ, the first data value three times.
    """
    n = (5, 8, 13)[difficulty - 1]
    while True:
        xs = [rng.randint(1, (20, 50, 99)[difficulty - 1]) for _ in range(n)]
        top = Counter(xs).most_common(2)
        if top[0][1] > 1 and (len(top) == 1 or top[0][1] > top[1][1]):
            break
    s = sorted(xs)
    med = Fraction(s[n // 2]) if n % 2 else Fraction(s[n // 2 - 1] + s[n // 2], 2)
    vals = [Fraction(sum(xs), n), med, Fraction(top[0][0])]
    prompt = (f"For the data {', '.join(map(str, xs))}, give the mean, the median and the mode. Reply with only "
              f"'mean, median, mode' (exact values: integers, fractions p/q or decimals).")
    return Draft(prompt, answer=", ".join(fmt_frac(v) for v in vals),
                 public={"data": xs}, hidden={"vals": [fmt_frac(v) for v in vals]})


def _stats_check(task: Task, answer: str) -> Score:
    want = [Fraction(v) for v in task.hidden["vals"]]
    return per_item(task.domain, parse_items(answer_text(answer), 3, parse_frac), want, label="stat")


def _stats_exploits(task: Task) -> dict[str, str]:
    v = task.hidden["vals"]
    out = {"first_value": ", ".join([str(task.public["data"][0])] * 3)}
    if len({v[0], v[1], v[2]}) == 3:
        out["rotated"] = f"{v[1]}, {v[2]}, {v[0]}"
    return {k: p for k, p in out.items() if all(a != b for a, b in zip(p.split(", "), v))}


register_domain(SingleTurnDomain("math.stats-v1", _stats, _stats_check, _stats_exploits,
                                 description=_stats.__doc__))


def _incl_excl(rng: random.Random, difficulty: int) -> Draft:
    """Inclusion-exclusion: counting numbers up to N divisible by at least one of a few numbers.

    How many of 1..N are divisible by at least one of 2 (d1, d2) or 3 (d3)
    given numbers (counted by brute force). Not covered: "exactly one of". Probes: the
    sum of N // a (double counting), N.
    """
    k = 3 if difficulty == 3 else 2
    big = (100, 1000, 10_000)[difficulty - 1]
    n = rng.randint(big // 2, big)
    divs = sorted(rng.sample(range(2, 16), k))
    ans = sum(1 for i in range(1, n + 1) if any(i % d == 0 for d in divs))
    prompt = (f"How many integers from 1 to {n} are divisible by at least one of {', '.join(map(str, divs))}? "
              f"{INT_FMT}")
    return Draft(prompt, answer=ans, public={"n": n, "divs": divs})


def _incl_excl_exploits(task: Task) -> dict[str, str]:
    n, divs = task.public["n"], task.public["divs"]
    return drop_correct({"double_count": str(sum(n // d for d in divs)), "n": str(n)}, hidden_answer(task))


register_domain(SingleTurnDomain("math.incl_excl-v1", _incl_excl, int_check, _incl_excl_exploits,
                                 description=_incl_excl.__doc__))
