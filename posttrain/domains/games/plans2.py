"""More planning puzzles scored by simulation: sliding tiles, water jugs, missionaries and
cannibals, knight's tours. Reward rules as in :mod:`posttrain.domains.games.plans`
(``plan_score``), except the knight's tour (see its docstring).
"""

from __future__ import annotations

import random
import re
from typing import Iterable

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ..math_ext._kit import answer_text, fail
from .plans import DIRS, bfs, plan_score, split_moves


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


@register_domain
class SlidingPuzzle:
    """games.sliding-v1 — solve a sliding-tile puzzle (2x3 / 3x3 / 3x3 deeper scramble).

    Moves name the direction the blank (0) moves: U, D, L, R, comma-separated; replayed; the
    goal is 1 2 3 ... with the blank last. Shortest by BFS. Not covered: 4x4 (15-puzzle).
    Probes: the reference reversed, one move, moves that push the blank off the board.
    """

    id = "games.sliding-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=", ".join(path), public={"start": s, "w": w},
                         hidden={"optimal": len(path)})

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        w, start = task.public["w"], task.public["start"]
        ms = split_moves(answer_text(answer), r"[UDLR]")
        moves = None if ms is None else [m.group(0).upper() for m in ms]
        goal = "".join(str(i) for i in range(1, len(start))) + "0"
        return plan_score(self.id, moves, start, lambda s, d: slide(s, w, d), lambda s: s == goal,
                          task.hidden["optimal"])

    def probes(self, task: Task) -> dict[str, str]:
        ref = task.hidden["answer"].split(", ")
        flip = {"U": "D", "D": "U", "L": "R", "R": "L"}
        return {"reversed": ", ".join(flip[m] for m in ref[::-1]), "one": ref[0],
                "off_board": ", ".join(["U"] * 4)}


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


@register_domain
class WaterJug:
    """games.water_jug-v1 — measure exactly t litres in some jug with fill / empty / pour actions.

    Actions ``fill A``, ``empty B``, ``pour A B`` (until A is empty or B is full),
    comma-separated; replayed; shortest by BFS. Two jugs up to 9 L (d1), up to 15 L (d2),
    three jugs (d3). A no-op action (filling a full jug) is legal but wastes a move. Not
    covered: unbounded sources. Probes: filling the biggest jug only, an unknown jug, "pour A A".
    """

    id = "games.water_jug-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=", ".join(path), public={"caps": caps, "target": t},
                         hidden={"optimal": len(path)})

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        caps, t = task.public["caps"], task.public["target"]
        jugs = "ABC"[:len(caps)]
        ms = split_moves(answer_text(answer), rf"(fill|empty)\s+([{jugs}])|pour\s+([{jugs}])\s+([{jugs}])")
        moves = None if ms is None else [f"{m.group(1).lower()} {m.group(2).upper()}" if m.group(1)
                                         else f"pour {m.group(3).upper()} {m.group(4).upper()}" for m in ms]

        def step(s: tuple[int, ...], mv: str) -> tuple[int, ...] | None:
            return dict(jug_moves(s, caps)).get(mv)

        return plan_score(self.id, moves, tuple([0] * len(caps)), step, lambda s: t in s, task.hidden["optimal"])

    def probes(self, task: Task) -> dict[str, str]:
        return {"fill_big": f"fill {'ABC'[len(task.public['caps']) - 1]}", "unknown_jug": "fill Z", "self_pour": "pour A A"}


def mc_safe(m: int, c: int, n: int) -> bool:
    return (m == 0 or m >= c) and (n - m == 0 or n - m >= n - c)


@register_domain
class Missionaries:
    """games.missionaries-v1 — ferry n missionaries and n cannibals across a river.

    Boat capacity b (1..b people, someone must row); cannibals may never outnumber missionaries
    on a bank that has missionaries (counting the boat's passengers as landed after each trip).
    Trips alternate direction, written like ``MC; M; CC`` (letters = who is in the boat).
    (n, b) in {(2,2), (3,2), (3,3)} / {(4,3), (5,3), (4,4)} / {(6,4), (7,4), (8,5)}. Replayed; shortest by BFS. Not covered: other
    constraint sets (wolf-goat-cabbage). Probes: one trip with everyone, an unsafe first trip.
    """

    id = "games.missionaries-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n, b = rng.choice((((2, 2), (3, 2), (3, 3)), ((4, 3), (5, 3), (4, 4)), ((6, 4), (7, 4), (8, 5)))[difficulty - 1])
        path = bfs((n, n, 0), lambda s: self._moves(s, n, b), lambda s: s == (0, 0, 1))
        if not path:
            raise AssertionError(f"unsolvable missionaries instance {(n, b)}")
        prompt = (f"{n} missionaries (M) and {n} cannibals (C) are on the left bank with a boat that carries 1 to {b} "
                  f"people. Cannibals must never outnumber missionaries on either bank where missionaries are present "
                  f"(checked after each crossing). Get everyone to the right bank in as few crossings as possible. "
                  f"Crossings alternate left->right, right->left, ... Reply with only the boat loads separated by ';', "
                  f"e.g. 'CC; C; MM'.")
        return make_task(self.id, difficulty, prompt, answer="; ".join(path), public={"n": n, "b": b},
                         hidden={"optimal": len(path)})

    @staticmethod
    def _step(s: tuple[int, int, int], load: str, n: int, b: int) -> tuple[int, int, int] | None:
        dm, dc = load.count("M"), load.count("C")
        if not 1 <= dm + dc <= b:
            return None
        sign = -1 if s[2] == 0 else 1
        m, c = s[0] + sign * dm, s[1] + sign * dc
        if not (0 <= m <= n and 0 <= c <= n) or not mc_safe(m, c, n):
            return None
        return (m, c, 1 - s[2])

    def _moves(self, s: tuple[int, int, int], n: int, b: int) -> Iterable[tuple[str, tuple[int, int, int]]]:
        for dm in range(b + 1):
            for dc in range(b + 1 - dm):
                load = "M" * dm + "C" * dc
                nxt = self._step(s, load, n, b) if load else None
                if nxt:
                    yield load, nxt

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        n, b = task.public["n"], task.public["b"]
        text = answer_text(answer)
        loads = None if not text else [t.strip().upper() for t in text.split(";")]
        if loads is not None and not all(re.fullmatch(r"[MC]{1,8}", x) for x in loads):
            loads = None
        return plan_score(self.id, loads, (n, n, 0), lambda s, x: self._step(s, x, n, b), lambda s: s == (0, 0, 1),
                          task.hidden["optimal"])

    def probes(self, task: Task) -> dict[str, str]:
        n = task.public["n"]
        return {"everyone": "M" * n + "C" * n, "unsafe": "MM"}


KNIGHT = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]


def knights_tour(n: int, start: tuple[int, int], rng: random.Random) -> list[tuple[int, int]] | None:
    """A tour by Warnsdorff's rule (fewest onward moves first), random tie-breaks, with restarts."""
    for _ in range(200):
        path, seen = [start], {start}
        while len(path) < n * n:
            r, c = path[-1]
            nxt = [(r + a, c + b) for a, b in KNIGHT if 0 <= r + a < n and 0 <= c + b < n and (r + a, c + b) not in seen]
            if not nxt:
                break
            deg = {p: sum(1 for a, b in KNIGHT if 0 <= p[0] + a < n and 0 <= p[1] + b < n and (p[0] + a, p[1] + b)
                          not in seen) for p in nxt}
            low = min(deg.values())
            p = rng.choice([q for q in nxt if deg[q] == low])
            path.append(p)
            seen.add(p)
        if len(path) == n * n:
            return path
    return None


def sq(p: tuple[int, int]) -> str:
    return f"{'abcdefgh'[p[1]]}{p[0] + 1}"


@register_domain
class KnightsTour:
    """games.knights_tour-v1 — an open knight's tour visiting every square once from a start square.

    Squares as ``a1`` (column letter, row number), comma-separated, starting with the start
    square. Checked move by move. Reward: 1 for a full tour; a legal, repeat-free but
    incomplete tour earns 0.5 * (visited / squares)^2 (so a few moves earn almost nothing);
    any illegal move or repeat 0. Boards 5x5 from a corner (d1), 6x6 (d2), 7x7 from any square
    with a tour (d3). Not covered: closed tours. Probes: the start square alone, a king's path.
    """

    id = "games.knights_tour-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = (5, 6, 7)[difficulty - 1]
        while True:
            start = (0, 0) if difficulty == 1 else (rng.randrange(n), rng.randrange(n))
            tour = knights_tour(n, start, rng)
            if tour:
                break
        prompt = (f"On a {n}x{n} board (columns a-{'abcdefgh'[n - 1]}, rows 1-{n}) give a knight's tour starting at "
                  f"{sq(start)} that visits every square exactly once. Reply with only the {n * n} squares in order, "
                  f"comma-separated, starting with {sq(start)}.")
        return make_task(self.id, difficulty, prompt, answer=", ".join(sq(p) for p in tour),
                         public={"n": n, "start": sq(start)})

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        n = task.public["n"]
        ms = split_moves(answer_text(answer), rf"([a-{'abcdefgh'[n - 1]}])([1-{n}])")
        if ms is None or len(ms) > n * n:
            return fail(self.id, "not a list of board squares")
        path = [(int(m.group(2)) - 1, "abcdefgh".index(m.group(1).lower())) for m in ms]
        if sq(path[0]) != task.public["start"] or len(set(path)) != len(path):
            return fail(self.id, "wrong start square or a repeated square", name="legal")
        for a, b in zip(path, path[1:]):
            if (b[0] - a[0], b[1] - a[1]) not in KNIGHT:
                return fail(self.id, f"{sq(a)} -> {sq(b)} is not a knight move", name="legal")
        frac = len(path) / (n * n)
        value = 1.0 if frac == 1 else 0.5 * frac ** 2
        return Score(value, components={"coverage": (frac, 1.0)}, reason=f"{len(path)}/{n * n} squares",
                     verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        n, s = task.public["n"], task.public["start"]
        return {"start_only": s, "king_walk": ", ".join([s] + [f"{'abcdefgh'[c]}{r + 1}" for r in range(n) for c in range(n)
                                                               if f"{'abcdefgh'[c]}{r + 1}" != s][:5])}
