"""Planning puzzles scored by simulation: Tower of Hanoi, grid mazes, sliding tiles, water jugs,
missionaries and cannibals.

Each answer is a move list that the verifier replays from the start state. Shared reward
(:func:`plan_score`): 0 for an unparseable list or an illegal move; 0 when the goal is not
reached; 1 for a shortest plan; ``0.5 * optimal / length`` for a longer valid plan (reaching
the goal is what matters; optimality is the rest). Shortest lengths come from breadth-first
search over the state space (or the closed form for Hanoi).
"""

from __future__ import annotations

import random
import re
from collections import deque
from typing import Any, Callable, Hashable, Iterable

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ..math_ext._kit import answer_text, fail

MAX_MOVES = 2000


def plan_score(version: str, moves: list[Any] | None, start: Any, step: Callable[[Any, Any], Any],
               is_goal: Callable[[Any], bool], optimal: int) -> Score:
    """Replay ``moves`` with ``step`` (returns the next state or None when illegal)."""
    if moves is None or len(moves) > MAX_MOVES:
        return fail(version, "not a move list in the asked format")
    state = start
    for i, mv in enumerate(moves):
        state = step(state, mv)
        if state is None:
            return fail(version, f"move {i + 1} is illegal", name="legal")
    if not is_goal(state):
        return fail(version, "the goal is not reached", name="goal")
    eff = 1.0 if len(moves) <= optimal else optimal / len(moves)
    comps = {"goal": (1.0, 1.0), "optimal": (1.0 if eff == 1.0 else 0.0, 1.0)}
    value = 1.0 if eff == 1.0 else 0.5 * eff
    return Score(value, components=comps, reason=f"goal in {len(moves)} moves (optimal {optimal})",
                 verifier_version=version)


def bfs(start: Hashable, moves: Callable[[Any], Iterable[tuple[Any, Hashable]]],
        is_goal: Callable[[Any], bool], limit: int = 400_000) -> list[Any] | None:
    """A shortest move list from ``start`` to a goal, or None."""
    prev: dict[Hashable, tuple[Hashable, Any] | None] = {start: None}
    q = deque([start])
    while q and len(prev) < limit:
        s = q.popleft()
        if is_goal(s):
            path = []
            while prev[s] is not None:
                s, mv = prev[s][0], prev[s][1]
                path.append(mv)
            return path[::-1]
        for mv, nxt in moves(s):
            if nxt not in prev:
                prev[nxt] = (s, mv)
                q.append(nxt)
    return None


def split_moves(text: str | None, pattern: str) -> list[re.Match] | None:
    """Comma-separated moves each fully matching ``pattern``; None if any token does not."""
    if not text:
        return None
    toks = [t.strip() for t in text.split(",")]
    ms = [re.fullmatch(pattern, t, re.I) for t in toks]
    return None if any(m is None for m in ms) else ms


@register_domain
class Hanoi:
    """games.hanoi-v1 — solve Tower of Hanoi from a start configuration to a target peg.

    Moves ``A->C`` comma-separated; replayed with the rule "never a larger disc on a smaller".
    d1: 3 discs on one peg, d2: 4-5 discs on one peg, d3: 4-6 discs in a random legal arrangement
    (shortest length by BFS). Not covered: four-peg variants. Probes: the classic 3-disc
    solution when it is not right, a single move, an illegal first move.
    """

    id = "games.hanoi-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = (3, rng.randint(4, 5), rng.randint(4, 6))[difficulty - 1]
        src, dst = rng.sample("ABC", 2)
        start = src * n if difficulty < 3 else "".join(rng.choice("ABC") for _ in range(n))
        if start == dst * n:
            return self.generate(rng, difficulty)
        pegs = {p: [i + 1 for i in range(n - 1, -1, -1) if start[i] == p] for p in "ABC"}
        desc = "; ".join(f"{p}: {pegs[p] if pegs[p] else 'empty'}" for p in "ABC")
        prompt = (f"Tower of Hanoi with {n} discs (1 = smallest), pegs A, B, C; each list is bottom to top: {desc}. "
                  f"Move all discs to peg {dst}, one top disc at a time, never placing a larger disc on a smaller one. "
                  f"Use as few moves as possible. Reply with only the moves like 'A->C, A->B, C->B'.")
        path = bfs(start, self._moves, lambda s: s == dst * len(s))
        if len(path) < 3:  # e.g. only the smallest disc off C: too trivial, and "A->C" would be right
            return self.generate(rng, difficulty)
        return make_task(self.id, difficulty, prompt, answer=", ".join(path), public={"start": start, "target": dst},
                         hidden={"optimal": len(path)})

    @staticmethod
    def _step(state: str, mv: tuple[str, str]) -> str | None:
        a, b = mv
        if a == b:
            return None
        tops = {p: min((i for i, q in enumerate(state) if q == p), default=None) for p in "ABC"}
        if tops[a] is None or (tops[b] is not None and tops[b] < tops[a]):
            return None
        i = tops[a]
        return state[:i] + b + state[i + 1:]

    def _moves(self, state: str) -> Iterable[tuple[str, str]]:
        for a in "ABC":
            for b in "ABC":
                nxt = self._step(state, (a, b))
                if nxt is not None:
                    yield f"{a}->{b}", nxt

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        ms = split_moves(answer_text(answer), r"([ABC])\s*->\s*([ABC])")
        moves = None if ms is None else [(m.group(1).upper(), m.group(2).upper()) for m in ms]
        start, dst = task.public["start"], task.public["target"]
        return plan_score(self.id, moves, start, self._step, lambda s: s == dst * len(start),
                          task.hidden["optimal"])

    def probes(self, task: Task) -> dict[str, str]:
        out = {"one_move": "A->C", "illegal": "C->A, C->A"}
        if (task.public["start"], task.public["target"]) != ("AAA", "C"):
            out["classic3"] = "A->C, A->B, C->B, A->C, B->A, B->C, A->C"
        return out


DIRS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def make_maze(rng: random.Random, h: int, w: int, extra: int) -> list[str]:
    """A perfect maze by randomized DFS on (h x w) cells, plus ``extra`` removed walls (loops)."""
    H, W = 2 * h + 1, 2 * w + 1
    g = [["#"] * W for _ in range(H)]
    stack, seen = [(0, 0)], {(0, 0)}
    g[1][1] = "."
    while stack:
        r, c = stack[-1]
        nb = [(r + dr, c + dc) for dr, dc in DIRS.values() if 0 <= r + dr < h and 0 <= c + dc < w and (r + dr, c + dc) not in seen]
        if not nb:
            stack.pop()
            continue
        nr, nc = rng.choice(nb)
        g[2 * nr + 1][2 * nc + 1] = "."
        g[r + nr + 1][c + nc + 1] = "."
        seen.add((nr, nc))
        stack.append((nr, nc))
    walls = [(r, c) for r in range(1, H - 1) for c in range(1, W - 1) if g[r][c] == "#" and (r % 2) != (c % 2)]
    for r, c in rng.sample(walls, min(extra, len(walls))):
        g[r][c] = "."
    g[1][1], g[H - 2][W - 2] = "S", "G"
    return ["".join(row) for row in g]


@register_domain
class Maze:
    """games.maze-v1 — walk a grid maze from S to G with moves U/D/L/R (comma-separated).

    Replayed step by step: hitting a wall is illegal (0); shortest path scores 1, a longer path
    reaching G 0.5 * optimal / length. Mazes of 3x3 / 5x5 / 7x7 cells; d2 and d3 have loops
    (several routes, one shortest length). Not covered: weighted or hidden mazes. Probes: the
    reference reversed, all R then all D, the path without its last move.
    """

    id = "games.maze-v1"
    family = "games"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        k = (3, 5, 7)[difficulty - 1]
        while True:  # the obvious "along the top, down the right side" route must be blocked
            rows = make_maze(rng, k, k, (0, 3, 8)[difficulty - 1])
            if "#" in rows[1][1:-1] or any(r[-2] == "#" for r in rows[1:-1]):
                break
        start, goal = (1, 1), (len(rows) - 2, len(rows[0]) - 2)
        path = bfs(start, lambda s: ((d, (s[0] + dr, s[1] + dc)) for d, (dr, dc) in DIRS.items()
                                     if rows[s[0] + dr][s[1] + dc] != "#"), lambda s: s == goal)
        prompt = ("Maze ('#' wall, '.' open, S start, G goal):\n" + "\n".join(rows) +
                  "\nGive a shortest path from S to G as moves U (up), D (down), L (left), R (right), one cell per "
                  "move. Reply with only the moves, comma-separated, e.g. 'R, R, D'.")
        return make_task(self.id, difficulty, prompt, answer=", ".join(path), public={"rows": rows},
                         hidden={"optimal": len(path)})

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        rows = task.public["rows"]
        ms = split_moves(answer_text(answer), r"[UDLR]")
        moves = None if ms is None else [m.group(0).upper() for m in ms]

        def step(s: tuple[int, int], d: str) -> tuple[int, int] | None:
            r, c = s[0] + DIRS[d][0], s[1] + DIRS[d][1]
            return (r, c) if rows[r][c] != "#" else None

        goal = (len(rows) - 2, len(rows[0]) - 2)
        return plan_score(self.id, moves, (1, 1), step, lambda s: s == goal, task.hidden["optimal"])

    def probes(self, task: Task) -> dict[str, str]:
        ref = task.hidden["answer"].split(", ")
        flip = {"U": "D", "D": "U", "L": "R", "R": "L"}
        n = (len(task.public["rows"]) - 1) // 2
        return {"reversed": ", ".join(flip[m] for m in ref[::-1]),
                "straight": ", ".join(["R"] * (2 * n - 2) + ["D"] * (2 * n - 2)),
                "truncated": ", ".join(ref[:-1])}
