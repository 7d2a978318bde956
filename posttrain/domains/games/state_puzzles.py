"""State-space planning puzzles scored by simulation: Tower of Hanoi, sliding tiles, water jugs,
missionaries and cannibals.

Each answer is a move list that the verifier replays from the start state with the puzzle's
rules; the reward is the games kit's :func:`._kit.plan_score` (1 for a shortest plan, half
credit scaled by optimal / length for a longer one, 0 for an illegal move or a missed goal).
Shortest lengths come from breadth-first search over the state space.
"""

from __future__ import annotations

import random
import re
from typing import Iterable

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text
from ._kit import DIRS, bfs, plan_score, split_moves


ID_HANOI = "games.hanoi-v1"


def _hanoi_step(state: str, mv: tuple[str, str]) -> str | None:
    a, b = mv
    if a == b:
        return None
    tops = {p: min((i for i, q in enumerate(state) if q == p), default=None) for p in "ABC"}
    if tops[a] is None or (tops[b] is not None and tops[b] < tops[a]):
        return None
    i = tops[a]
    return state[:i] + b + state[i + 1:]


def _hanoi_moves(state: str) -> Iterable[tuple[str, str]]:
    for a in "ABC":
        for b in "ABC":
            nxt = _hanoi_step(state, (a, b))
            if nxt is not None:
                yield f"{a}->{b}", nxt


def _hanoi_draw(rng: random.Random, difficulty: int) -> Task:
    n = (3, rng.randint(4, 5), rng.randint(4, 6))[difficulty - 1]
    src, dst = rng.sample("ABC", 2)
    start = src * n if difficulty < 3 else "".join(rng.choice("ABC") for _ in range(n))
    if start == dst * n:
        return _hanoi_draw(rng, difficulty)
    pegs = {p: [i + 1 for i in range(n - 1, -1, -1) if start[i] == p] for p in "ABC"}
    desc = "; ".join(f"{p}: {pegs[p] if pegs[p] else 'empty'}" for p in "ABC")
    prompt = (f"Tower of Hanoi with {n} discs (1 = smallest), pegs A, B, C; each list is bottom to top: {desc}. "
              f"Move all discs to peg {dst}, one top disc at a time, never placing a larger disc on a smaller one. "
              f"Use as few moves as possible. Reply with only the moves like 'A->C, A->B, C->B'.")
    path = bfs(start, _hanoi_moves, lambda s: s == dst * len(s))
    if len(path) < 3:  # e.g. only the smallest disc off C: too trivial, and "A->C" would be right
        return _hanoi_draw(rng, difficulty)
    return make_task(ID_HANOI, difficulty, prompt, answer=", ".join(path), public={"start": start, "target": dst},
                     hidden={"optimal": len(path)})


def _hanoi_check(task: Task, answer: str) -> Score:
    ms = split_moves(answer_text(answer), r"([ABC])\s*->\s*([ABC])")
    moves = None if ms is None else [(m.group(1).upper(), m.group(2).upper()) for m in ms]
    start, dst = task.public["start"], task.public["target"]
    return plan_score(task.domain, moves, start, _hanoi_step, lambda s: s == dst * len(start),
                      task.hidden["optimal"])


def _hanoi_probes(task: Task) -> dict[str, str]:
    out = {"one_move": "A->C", "illegal": "C->A, C->A"}
    if (task.public["start"], task.public["target"]) != ("AAA", "C"):
        out["classic3"] = "A->C, A->B, C->B, A->C, B->A, B->C, A->C"
    return out


register_domain(SingleTurnDomain(
    ID_HANOI, _hanoi_draw, _hanoi_check, _hanoi_probes, description="""\
Solve Tower of Hanoi from a start configuration to a target peg.

Moves ``A->C`` comma-separated; replayed with the rule "never a larger disc on a smaller".
d1: 3 discs on one peg, d2: 4-5 discs on one peg, d3: 4-6 discs in a random legal arrangement
(shortest length by BFS). Not covered: four-peg variants. Probes: the classic 3-disc
solution when it is not right, a single move, an illegal first move.
"""))


def slide(state: str, w: int, d: str) -> str | None:
    i = state.index("0")
    r, c = divmod(i, w)
    nr, nc = r + DIRS[d][0], c + DIRS[d][1]
    if not (0 <= nr < len(state) // w and 0 <= nc < w):
        return None
    j = nr * w + nc
    s = list(state)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


ID_SLIDING = "games.sliding-v1"


def _sliding_draw(rng: random.Random, difficulty: int) -> Task:
    w, h, k = ((3, 2, 10), (3, 3, 10), (3, 3, 16))[difficulty - 1]
    goal = "".join(str(i) for i in range(1, w * h)) + "0"
    while True:
        s, last = goal, ""
        for _ in range(k):
            opts = [d for d in DIRS if slide(s, w, d) and d != {"U": "D", "D": "U", "L": "R", "R": "L"}.get(last)]
            last = rng.choice(opts)
            s = slide(s, w, last)
        path = bfs(s, lambda st: ((d, slide(st, w, d)) for d in DIRS if slide(st, w, d)), lambda st: st == goal)
        if path and len(path) >= 3:
            break
    grid = "\n".join(" ".join(s[r * w:(r + 1) * w]) for r in range(h))
    goal_grid = " / ".join(" ".join(goal[r * w:(r + 1) * w]) for r in range(h))
    prompt = (f"Sliding puzzle ({h} rows x {w} columns, 0 is the blank):\n{grid}\nReach the goal {goal_grid} in as "
              f"few moves as possible. A move slides the blank U, D, L or R (swapping it with that neighbour). "
              f"Reply with only the moves, comma-separated, e.g. 'L, U, R'.")
    return make_task(ID_SLIDING, difficulty, prompt, answer=", ".join(path), public={"start": s, "w": w},
                     hidden={"optimal": len(path)})


def _sliding_check(task: Task, answer: str) -> Score:
    w, start = task.public["w"], task.public["start"]
    ms = split_moves(answer_text(answer), r"[UDLR]")
    moves = None if ms is None else [m.group(0).upper() for m in ms]
    goal = "".join(str(i) for i in range(1, len(start))) + "0"
    return plan_score(task.domain, moves, start, lambda s, d: slide(s, w, d), lambda s: s == goal,
                      task.hidden["optimal"])


def _sliding_probes(task: Task) -> dict[str, str]:
    ref = task.hidden["answer"].split(", ")
    flip = {"U": "D", "D": "U", "L": "R", "R": "L"}
    return {"reversed": ", ".join(flip[m] for m in ref[::-1]), "one": ref[0],
            "off_board": ", ".join(["U"] * 4)}


register_domain(SingleTurnDomain(
    ID_SLIDING, _sliding_draw, _sliding_check, _sliding_probes, description="""\
Solve a sliding-tile puzzle (2x3 / 3x3 / 3x3 deeper scramble).

Moves name the direction the blank (0) moves: U, D, L, R, comma-separated; replayed; the
goal is 1 2 3 ... with the blank last. Shortest by BFS. Not covered: 4x4 (15-puzzle).
Probes: the reference reversed, one move, moves that push the blank off the board.
"""))


def jug_moves(state: tuple[int, ...], caps: list[int]) -> Iterable[tuple[str, tuple[int, ...]]]:
    names = "ABC"
    for i in range(len(caps)):
        yield f"fill {names[i]}", state[:i] + (caps[i],) + state[i + 1:]
        yield f"empty {names[i]}", state[:i] + (0,) + state[i + 1:]
        for j in range(len(caps)):
            if i != j:
                amt = min(state[i], caps[j] - state[j])
                s = list(state)
                s[i] -= amt
                s[j] += amt
                yield f"pour {names[i]} {names[j]}", tuple(s)


ID_WATER_JUG = "games.water_jug-v1"


def _water_jug_draw(rng: random.Random, difficulty: int) -> Task:
    k, hi = ((2, 9), (2, 15), (3, 13))[difficulty - 1]
    while True:
        caps = sorted(rng.sample(range(2, hi + 1), k))
        t = rng.randint(1, caps[-1] - 1)
        if t in caps:
            continue
        path = bfs(tuple([0] * k), lambda s: jug_moves(s, caps), lambda s: t in s)
        if path and len(path) >= 4:
            break
    names = ", ".join(f"{'ABC'[i]} holds {c} L" for i, c in enumerate(caps))
    prompt = (f"Jugs (all empty): {names}. Actions: 'fill X' (fill from the tap), 'empty X', 'pour X Y' (pour "
              f"from X into Y until X is empty or Y is full). Get exactly {t} L in one jug using as few actions as "
              f"possible. Reply with only the actions, comma-separated.")
    return make_task(ID_WATER_JUG, difficulty, prompt, answer=", ".join(path), public={"caps": caps, "target": t},
                     hidden={"optimal": len(path)})


def _water_jug_check(task: Task, answer: str) -> Score:
    caps, t = task.public["caps"], task.public["target"]
    jugs = "ABC"[:len(caps)]
    ms = split_moves(answer_text(answer), rf"(fill|empty)\s+([{jugs}])|pour\s+([{jugs}])\s+([{jugs}])")
    moves = None if ms is None else [f"{m.group(1).lower()} {m.group(2).upper()}" if m.group(1)
                                     else f"pour {m.group(3).upper()} {m.group(4).upper()}" for m in ms]

    def step(s: tuple[int, ...], mv: str) -> tuple[int, ...] | None:
        return dict(jug_moves(s, caps)).get(mv)

    return plan_score(task.domain, moves, tuple([0] * len(caps)), step, lambda s: t in s, task.hidden["optimal"])


def _water_jug_probes(task: Task) -> dict[str, str]:
    return {"fill_big": f"fill {'ABC'[len(task.public['caps']) - 1]}", "unknown_jug": "fill Z", "self_pour": "pour A A"}


register_domain(SingleTurnDomain(
    ID_WATER_JUG, _water_jug_draw, _water_jug_check, _water_jug_probes,
    description="""\
Measure exactly t litres in some jug with fill / empty / pour actions.

Actions ``fill A``, ``empty B``, ``pour A B`` (until A is empty or B is full),
comma-separated; replayed; shortest by BFS. Two jugs up to 9 L (d1), up to 15 L (d2),
three jugs (d3). A no-op action (filling a full jug) is legal but wastes a move. Not
covered: unbounded sources. Probes: filling the biggest jug only, an unknown jug, "pour A A".
"""))


def mc_safe(m: int, c: int, n: int) -> bool:
    return (m == 0 or m >= c) and (n - m == 0 or n - m >= n - c)


ID_MISSIONARIES = "games.missionaries-v1"


def _missionaries_step(s: tuple[int, int, int], load: str, n: int, b: int) -> tuple[int, int, int] | None:
    dm, dc = load.count("M"), load.count("C")
    if not 1 <= dm + dc <= b:
        return None
    sign = -1 if s[2] == 0 else 1
    m, c = s[0] + sign * dm, s[1] + sign * dc
    if not (0 <= m <= n and 0 <= c <= n) or not mc_safe(m, c, n):
        return None
    return (m, c, 1 - s[2])


def _missionaries_moves(s: tuple[int, int, int], n: int, b: int) -> Iterable[tuple[str, tuple[int, int, int]]]:
    for dm in range(b + 1):
        for dc in range(b + 1 - dm):
            load = "M" * dm + "C" * dc
            nxt = _missionaries_step(s, load, n, b) if load else None
            if nxt:
                yield load, nxt


def _missionaries_draw(rng: random.Random, difficulty: int) -> Task:
    n, b = rng.choice((((2, 2), (3, 2), (3, 3)), ((4, 3), (5, 3), (4, 4)), ((6, 4), (7, 4), (8, 5)))[difficulty - 1])
    path = bfs((n, n, 0), lambda s: _missionaries_moves(s, n, b), lambda s: s == (0, 0, 1))
    if not path:
        raise AssertionError(f"unsolvable missionaries instance {(n, b)}")
    prompt = (f"{n} missionaries (M) and {n} cannibals (C) are on the left bank with a boat that carries 1 to {b} "
              f"people. Cannibals must never outnumber missionaries on either bank where missionaries are present "
              f"(checked after each crossing). Get everyone to the right bank in as few crossings as possible. "
              f"Crossings alternate left->right, right->left, ... Reply with only the boat loads separated by ';', "
              f"e.g. 'CC; C; MM'.")
    return make_task(ID_MISSIONARIES, difficulty, prompt, answer="; ".join(path), public={"n": n, "b": b},
                     hidden={"optimal": len(path)})


def _missionaries_check(task: Task, answer: str) -> Score:
    n, b = task.public["n"], task.public["b"]
    text = answer_text(answer)
    loads = None if not text else [t.strip().upper() for t in text.split(";")]
    if loads is not None and not all(re.fullmatch(r"[MC]{1,8}", x) for x in loads):
        loads = None
    return plan_score(task.domain, loads, (n, n, 0), lambda s, x: _missionaries_step(s, x, n, b), lambda s: s == (0, 0, 1),
                      task.hidden["optimal"])


def _missionaries_probes(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return {"everyone": "M" * n + "C" * n, "unsafe": "MM"}


register_domain(SingleTurnDomain(
    ID_MISSIONARIES, _missionaries_draw, _missionaries_check, _missionaries_probes,
    description="""\
Ferry n missionaries and n cannibals across a river.

Boat capacity b (1..b people, someone must row); cannibals may never outnumber missionaries
on a bank that has missionaries (counting the boat's passengers as landed after each trip).
Trips alternate direction, written like ``MC; M; CC`` (letters = who is in the boat).
(n, b) in {(2,2), (3,2), (3,3)} / {(4,3), (5,3), (4,4)} / {(6,4), (7,4), (8,5)}. Replayed; shortest by BFS. Not covered: other
constraint sets (wolf-goat-cabbage). Probes: one trip with everyone, an unsafe first trip.
"""))
