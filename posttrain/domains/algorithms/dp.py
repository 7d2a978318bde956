"""Dynamic-programming domains: LIS, edit distance, LCS, knapsack, coin change (fewest coins
and number of ways), matrix-chain order, lattice paths with obstacles, non-adjacent sums.

Reference answers come from textbook DP tables; probes are the tempting wrong heuristics
(greedy coins, left-to-right multiplication, ignoring obstacles...).

Not covered: reconstruction of DP witnesses except where the answer is verified (LIS, knapsack).
"""

from __future__ import annotations

import itertools
import math
import random

from posttrain.core.types import Score, Task
from posttrain.domains.algorithms._kit import answer_check, answer_probes, list_text
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import parse_int_list


def lis_length(a: list[int]) -> tuple[int, list[int]]:
    best = [[x] for x in a]
    for i in range(len(a)):
        for j in range(i):
            if a[j] < a[i] and len(best[j]) + 1 > len(best[i]):
                best[i] = best[j] + [a[i]]
    seq = max(best, key=len)
    return len(seq), seq


def is_subsequence(sub: list[int], a: list[int]) -> bool:
    it = iter(a)
    return all(any(x == y for y in it) for x in sub)


def _lis(rng: random.Random, difficulty: int) -> Draft:
    """Give a longest strictly increasing subsequence of an array (any optimal one counts).

    Verified: subsequence of the array and strictly increasing; optimal length scores 1, a
    shorter valid one 0.5 x (length/optimum)². Not covered: non-strict variants.
    Probes: the whole array, its sorted values (not a subsequence).
    """
    while True:
        a = [rng.randint(1, 50) for _ in range(2 + 4 * difficulty)]
        opt, seq = lis_length(a)
        if 2 <= opt < len(a) and sorted(set(a)) != seq:
            break
    prompt = (f"Array: {list_text(a)}.\nGive a longest strictly increasing subsequence (elements in their "
              "original order), as comma-separated values, nothing else.")
    return Draft(prompt, public={"array": a}, hidden={"optimum": opt, "seq": seq})


def _lis_reference(task: Task) -> str:
    return list_text(task.hidden["seq"])


def _lis_check(task: Task, answer: str) -> Score:
    got, a, opt = parse_int_list(answer), task.public["array"], task.hidden["optimum"]
    ok = bool(got) and all(x < y for x, y in zip(got, got[1:])) and is_subsequence(got, a)
    v = 0.0 if not ok else (1.0 if len(got) == opt else 0.5 * (len(got) / opt) ** 2)
    return Score(v, components={"lis": (v, 1.0)}, verifier_version=task.domain,
                 reason=f"valid, length {len(got)}/{opt}" if ok else "not an increasing subsequence")


def _lis_exploits(task: Task) -> dict[str, str]:
    a = task.public["array"]
    return {"whole_array": list_text(a), "sorted_values": list_text(sorted(set(a)))}


register_domain(SingleTurnDomain("algorithms.lis-v1", _lis, _lis_check, _lis_exploits,
                                 reference=_lis_reference, description=_lis.__doc__))


def edit_distance(s: str, t: str) -> int:
    prev = list(range(len(t) + 1))
    for i, c in enumerate(s, 1):
        cur = [i]
        for j, d in enumerate(t, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (c != d)))
        prev = cur
    return prev[-1]


def _edit_distance(rng: random.Random, difficulty: int) -> Draft:
    """Levenshtein distance (insert, delete, substitute; each costs 1) between two strings.

    Exact integer. Not covered: transpositions, weighted costs.
    Probes: the length difference, the longer length, off-by-one.
    """
    alpha = "abcd"[: 2 + difficulty]
    s = "".join(rng.choice(alpha) for _ in range(rng.randint(3, 3 + 3 * difficulty)))
    t = "".join(rng.choice(alpha) for _ in range(rng.randint(3, 3 + 3 * difficulty)))
    prompt = (f"What is the edit distance (minimum number of single-character insertions, deletions or "
              f"substitutions) turning \"{s}\" into \"{t}\"? Answer with one integer.")
    return Draft(prompt, answer=edit_distance(s, t), hidden={
        "probe_values": {"length_diff": abs(len(s) - len(t)), "longer": max(len(s), len(t))}})


register_domain(SingleTurnDomain("algorithms.edit_distance-v1", _edit_distance, answer_check, answer_probes,
                                 description=_edit_distance.__doc__))


def lcs_length(s: str, t: str) -> int:
    prev = [0] * (len(t) + 1)
    for c in s:
        cur = [0]
        for j, d in enumerate(t, 1):
            cur.append(prev[j - 1] + 1 if c == d else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def _lcs(rng: random.Random, difficulty: int) -> Draft:
    """Length of the longest common subsequence of two strings.

    Exact integer. Not covered: the subsequence itself. Probes: the shorter length, the
    number of shared distinct letters, off-by-one.
    """
    alpha = "abcdef"[: 3 + difficulty]
    s, t = ("".join(rng.choice(alpha) for _ in range(4 + 3 * difficulty)) for _ in range(2))
    prompt = (f"What is the length of the longest common subsequence of \"{s}\" and \"{t}\"? "
              "Answer with one integer.")
    return Draft(prompt, answer=lcs_length(s, t), hidden={
        "probe_values": {"shorter": min(len(s), len(t)), "shared_letters": len(set(s) & set(t))}})


register_domain(SingleTurnDomain("algorithms.lcs-v1", _lcs, answer_check, answer_probes,
                                 description=_lcs.__doc__))


def _knapsack(rng: random.Random, difficulty: int) -> Draft:
    """0/1 knapsack: choose items maximising value within a weight capacity.

    Verified: distinct valid item numbers within capacity; the optimum value scores 1, a
    feasible lower value 0.5 x (value/optimum)²; over capacity 0. Not covered: fractional or
    unbounded variants. Probes: every item (over capacity), the optimum with an item repeated.
    """
    n = 2 + 2 * difficulty
    items = [[rng.randint(1, 9), rng.randint(1, 20)] for _ in range(n)]
    cap = max(max(w for w, _ in items), sum(w for w, _ in items) // 2)
    best, pick = -1, ()
    for r in range(n + 1):
        for comb in itertools.combinations(range(n), r):
            if sum(items[i][0] for i in comb) <= cap and sum(items[i][1] for i in comb) > best:
                best, pick = sum(items[i][1] for i in comb), comb
    lines = "\n".join(f"item {i + 1}: weight {w}, value {v}" for i, (w, v) in enumerate(items))
    prompt = (f"Knapsack capacity {cap}.\n{lines}\nChoose items (each at most once) with total weight at most "
              f"{cap} and the largest total value. Answer with the item numbers, comma-separated, nothing else.")
    return Draft(prompt, public={"items": items, "cap": cap},
                 hidden={"optimum": best, "pick": [i + 1 for i in pick]})


def _knapsack_reference(task: Task) -> str:
    return list_text(task.hidden["pick"])


def _knapsack_check(task: Task, answer: str) -> Score:
    got, items, cap = parse_int_list(answer), task.public["items"], task.public["cap"]
    ok = got is not None and len(set(got)) == len(got) and all(1 <= i <= len(items) for i in got)
    w = sum(items[i - 1][0] for i in got) if ok else 0
    val = sum(items[i - 1][1] for i in got) if ok else 0
    opt = task.hidden["optimum"]
    v = 0.0 if not ok or w > cap else (1.0 if val == opt else 0.5 * (val / opt) ** 2)
    return Score(v, components={"value": (v, 1.0)}, verifier_version=task.domain,
                 reason="invalid items" if not ok else f"weight {w}/{cap}, value {val}/{opt}")


def _knapsack_exploits(task: Task) -> dict[str, str]:
    n, p = len(task.public["items"]), task.hidden["pick"]
    return {"all_items": list_text(range(1, n + 1)), "repeated": list_text(p + p[:1] if p else [1, 1])}


register_domain(SingleTurnDomain("algorithms.knapsack-v1", _knapsack, _knapsack_check, _knapsack_exploits,
                                 reference=_knapsack_reference, description=_knapsack.__doc__))


def min_coins(coins: list[int], amount: int) -> int:
    best = [0] + [math.inf] * amount
    for a in range(1, amount + 1):
        best[a] = min((best[a - c] + 1 for c in coins if c <= a), default=math.inf)
    return -1 if best[amount] == math.inf else int(best[amount])


def greedy_coins(coins: list[int], amount: int) -> int:
    n = 0
    for c in sorted(coins, reverse=True):
        n, amount = n + amount // c, amount % c
    return n if amount == 0 else -1


def _coin_change(rng: random.Random, difficulty: int) -> Draft:
    """Fewest coins summing to an amount (unlimited coins of each value), or -1 if impossible.

    Coin systems are chosen where greedy is often wrong. Exact integer.
    Not covered: listing the coins. Probes: the greedy count, off-by-one.
    """
    coins = sorted(rng.sample(range(2, 8 + 4 * difficulty), 2 + difficulty // 2) + [rng.choice([1, 3, 4])])
    coins = sorted(set(coins))
    amount = rng.randint(8, 15 + 15 * difficulty)
    ans = min_coins(coins, amount)
    prompt = (f"Coin values: {list_text(coins)} (unlimited supply of each). What is the fewest number of coins "
              f"that sum to exactly {amount}? Answer with one integer, or -1 if it is impossible.")
    return Draft(prompt, answer=ans, hidden={
        "probe_values": {"greedy": greedy_coins(coins, amount)}})


register_domain(SingleTurnDomain("algorithms.coin_change-v1", _coin_change, answer_check, answer_probes,
                                 description=_coin_change.__doc__))


def _coin_ways(rng: random.Random, difficulty: int) -> Draft:
    """Number of ways to make an amount from coin values (order of coins does not matter).

    Exact integer. Not covered: ordered compositions. Probes: the ordered count (a common
    confusion), off-by-one.
    """
    coins = sorted(rng.sample(range(1, 6 + 3 * difficulty), 2 + difficulty // 2))
    amount = rng.randint(5, 8 + 8 * difficulty)
    ways = [1] + [0] * amount
    for c in coins:
        for a in range(c, amount + 1):
            ways[a] += ways[a - c]
    ordered = [1] + [0] * amount
    for a in range(1, amount + 1):
        ordered[a] = sum(ordered[a - c] for c in coins if c <= a)
    prompt = (f"Coin values: {list_text(coins)} (unlimited supply). In how many different ways can you make "
              f"{amount} (combinations: order does not matter)? Answer with one integer.")
    return Draft(prompt, answer=ways[amount],
                 hidden={"probe_values": {"ordered": ordered[amount]}})


register_domain(SingleTurnDomain("algorithms.coin_ways-v1", _coin_ways, answer_check, answer_probes,
                                 description=_coin_ways.__doc__))


def _matrix_chain(rng: random.Random, difficulty: int) -> Draft:
    """Minimum number of scalar multiplications to multiply a chain of matrices.

    Exact integer. Not covered: the parenthesisation itself. Probes: the left-to-right cost
    when it differs, off-by-one.
    """
    dims = [rng.randint(2, 30) for _ in range(3 + difficulty)]
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = min(cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                             for k in range(i, j))
    left = sum(dims[0] * dims[k] * dims[k + 1] for k in range(1, n))
    shapes = ", ".join(f"M{i + 1} is {dims[i]}x{dims[i + 1]}" for i in range(n))
    prompt = (f"{shapes}. What is the minimum number of scalar multiplications needed to compute "
              f"M1{'·'.join([''] + [f'M{i + 1}' for i in range(1, n)])}? Answer with one integer.")
    return Draft(prompt, answer=cost[0][n - 1],
                 hidden={"probe_values": {"left_to_right": left}})


register_domain(SingleTurnDomain("algorithms.matrix_chain-v1", _matrix_chain, answer_check, answer_probes,
                                 description=_matrix_chain.__doc__))


def _grid_paths(rng: random.Random, difficulty: int) -> Draft:
    """Count monotone (right/down) paths through a grid with blocked cells.

    Exact integer (at least one path exists). Not covered: paths with other moves.
    Probes: the obstacle-free binomial count, off-by-one.
    """
    r, c = 2 + difficulty, 3 + difficulty
    while True:
        g = [["#" if rng.random() < 0.2 and (i, j) not in ((0, 0), (r - 1, c - 1)) else "."
              for j in range(c)] for i in range(r)]
        ways = [[0] * c for _ in range(r)]
        for i in range(r):
            for j in range(c):
                if g[i][j] == "#":
                    continue
                ways[i][j] = 1 if i == j == 0 else (ways[i - 1][j] if i else 0) + (ways[i][j - 1] if j else 0)
        if ways[-1][-1] > 0 and any("#" in row for row in g):
            break
    prompt = ("Grid (# blocked, . open):\n" + "\n".join("".join(row) for row in g) + "\nHow many paths "
              "go from the top-left to the bottom-right cell moving only right or down through open cells? "
              "Answer with one integer.")
    return Draft(prompt, answer=ways[-1][-1],
                 hidden={"probe_values": {"no_obstacles": math.comb(r + c - 2, r - 1)}})


register_domain(SingleTurnDomain("algorithms.grid_paths-v1", _grid_paths, answer_check, answer_probes,
                                 description=_grid_paths.__doc__))


def _house_robber(rng: random.Random, difficulty: int) -> Draft:
    """Maximum sum of array elements with no two chosen elements adjacent.

    Exact integer. Not covered: circular arrays. Probes: sum of even positions, sum of odd
    positions, total sum (when they differ from the optimum).
    """
    a = [rng.randint(1, 30) for _ in range(3 + 3 * difficulty)]
    take, skip = 0, 0
    for x in a:
        take, skip = skip + x, max(take, skip)
    prompt = (f"Values: {list_text(a)}.\nChoose elements with no two adjacent in the list to maximise their sum. "
              "What is the maximum sum? Answer with one integer.")
    return Draft(prompt, answer=max(take, skip), hidden={"probe_values": {
        "even_positions": sum(a[::2]), "odd_positions": sum(a[1::2]), "total": sum(a)}})


register_domain(SingleTurnDomain("algorithms.house_robber-v1", _house_robber, answer_check, answer_probes,
                                 description=_house_robber.__doc__))
