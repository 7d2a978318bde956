"""Path-finding on grids scored by simulation: maze walks and knight's tours.

The maze is replayed step by step with the games kit's :func:`._kit.plan_score`; the knight's
tour is checked move by move with its own reward (see its description).
"""

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text, fail
from ._kit import DIRS, bfs, plan_score, split_moves


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


ID_MAZE = "games.maze-v1"


def _maze_draw(rng: random.Random, difficulty: int) -> Task:
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
    return make_task(ID_MAZE, difficulty, prompt, answer=", ".join(path), public={"rows": rows},
                     hidden={"optimal": len(path)})


def _maze_check(task: Task, answer: str) -> Score:
    rows = task.public["rows"]
    ms = split_moves(answer_text(answer), r"[UDLR]")
    moves = None if ms is None else [m.group(0).upper() for m in ms]

    def step(s: tuple[int, int], d: str) -> tuple[int, int] | None:
        r, c = s[0] + DIRS[d][0], s[1] + DIRS[d][1]
        return (r, c) if rows[r][c] != "#" else None

    goal = (len(rows) - 2, len(rows[0]) - 2)
    return plan_score(task.domain, moves, (1, 1), step, lambda s: s == goal, task.hidden["optimal"])


def _maze_probes(task: Task) -> dict[str, str]:
    ref = task.hidden["answer"].split(", ")
    flip = {"U": "D", "D": "U", "L": "R", "R": "L"}
    n = (len(task.public["rows"]) - 1) // 2
    return {"reversed": ", ".join(flip[m] for m in ref[::-1]),
            "straight": ", ".join(["R"] * (2 * n - 2) + ["D"] * (2 * n - 2)),
            "truncated": ", ".join(ref[:-1])}


register_domain(SingleTurnDomain(
    ID_MAZE, _maze_draw, _maze_check, _maze_probes, description="""\
Walk a grid maze from S to G with moves U/D/L/R (comma-separated).

Replayed step by step: hitting a wall is illegal (0); shortest path scores 1, a longer path
reaching G 0.5 * optimal / length. Mazes of 3x3 / 5x5 / 7x7 cells; d2 and d3 have loops
(several routes, one shortest length). Not covered: weighted or hidden mazes. Probes: the
reference reversed, all R then all D, the path without its last move.
"""))


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


ID_KNIGHTS_TOUR = "games.knights_tour-v1"


def _knights_tour_draw(rng: random.Random, difficulty: int) -> Task:
    n = (5, 6, 7)[difficulty - 1]
    while True:
        start = (0, 0) if difficulty == 1 else (rng.randrange(n), rng.randrange(n))
        tour = knights_tour(n, start, rng)
        if tour:
            break
    prompt = (f"On a {n}x{n} board (columns a-{'abcdefgh'[n - 1]}, rows 1-{n}) give a knight's tour starting at "
              f"{sq(start)} that visits every square exactly once. Reply with only the {n * n} squares in order, "
              f"comma-separated, starting with {sq(start)}.")
    return make_task(ID_KNIGHTS_TOUR, difficulty, prompt, answer=", ".join(sq(p) for p in tour),
                     public={"n": n, "start": sq(start)})


def _knights_tour_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    ms = split_moves(answer_text(answer), rf"([a-{'abcdefgh'[n - 1]}])([1-{n}])")
    if ms is None or len(ms) > n * n:
        return fail(task.domain, "not a list of board squares")
    path = [(int(m.group(2)) - 1, "abcdefgh".index(m.group(1).lower())) for m in ms]
    if sq(path[0]) != task.public["start"] or len(set(path)) != len(path):
        return fail(task.domain, "wrong start square or a repeated square", name="legal")
    for a, b in zip(path, path[1:]):
        if (b[0] - a[0], b[1] - a[1]) not in KNIGHT:
            return fail(task.domain, f"{sq(a)} -> {sq(b)} is not a knight move", name="legal")
    frac = len(path) / (n * n)
    value = 1.0 if frac == 1 else 0.5 * frac ** 2
    return Score(value, components={"coverage": (frac, 1.0)}, reason=f"{len(path)}/{n * n} squares",
                 verifier_version=task.domain)


def _knights_tour_probes(task: Task) -> dict[str, str]:
    n, s = task.public["n"], task.public["start"]
    return {"start_only": s, "king_walk": ", ".join([s] + [f"{'abcdefgh'[c]}{r + 1}" for r in range(n) for c in range(n)
                                                           if f"{'abcdefgh'[c]}{r + 1}" != s][:5])}


register_domain(SingleTurnDomain(
    ID_KNIGHTS_TOUR, _knights_tour_draw, _knights_tour_check, _knights_tour_probes,
    description="""\
An open knight's tour visiting every square once from a start square.

Squares as ``a1`` (column letter, row number), comma-separated, starting with the start
square. Checked move by move. Reward: 1 for a full tour; a legal, repeat-free but
incomplete tour earns 0.5 * (visited / squares)^2 (so a few moves earn almost nothing);
any illegal move or repeat 0. Boards 5x5 from a corner (d1), 6x6 (d2), 7x7 from any square
with a tour (d3). Not covered: closed tours. Probes: the start square alone, a king's path.
"""))
