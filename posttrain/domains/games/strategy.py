"""Strategy puzzles checked by rules: reversi (the move flipping the most discs), pure Nash
equilibria of bimatrix games, and Mastermind code deduction.
"""

from __future__ import annotations

import itertools
import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text, check, fail

DIRS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def flips(rows: list[str], r: int, c: int, me: str) -> int:
    n = len(rows)
    if rows[r][c] != ".":
        return 0
    other = "O" if me == "X" else "X"
    total = 0
    for dr, dc in DIRS:
        rr, cc, k = r + dr, c + dc, 0
        while 0 <= rr < n and 0 <= cc < n and rows[rr][cc] == other:
            rr, cc, k = rr + dr, cc + dc, k + 1
        if k and 0 <= rr < n and 0 <= cc < n and rows[rr][cc] == me:
            total += k
    return total


def play(rows: list[str], r: int, c: int, me: str) -> list[str]:
    g = [list(x) for x in rows]
    n = len(g)
    other = "O" if me == "X" else "X"
    for dr, dc in DIRS:
        rr, cc, path = r + dr, c + dc, []
        while 0 <= rr < n and 0 <= cc < n and g[rr][cc] == other:
            path.append((rr, cc))
            rr, cc = rr + dr, cc + dc
        if path and 0 <= rr < n and 0 <= cc < n and g[rr][cc] == me:
            for pr, pc in path:
                g[pr][pc] = me
    g[r][c] = me
    return ["".join(x) for x in g]


def square(r: int, c: int) -> str:
    return f"{'abcdefgh'[c]}{r + 1}"


ID_REVERSI = "games.reversi-v1"


def _reversi_draw(rng: random.Random, difficulty: int) -> Task:
    n = 6 if difficulty == 1 else 8
    lo, hi = ((4, 8), (8, 16), (16, 30))[difficulty - 1]
    while True:
        rows = ["." * n] * n
        h = n // 2
        rows = [("." * (h - 1) + ("OX" if r == h - 1 else "XO") + "." * (h - 1)) if r in (h - 1, h) else "." * n
                for r in range(n)]
        me = "X"
        for _ in range(rng.randint(lo, hi)):
            moves = [(r, c) for r in range(n) for c in range(n) if flips(rows, r, c, me)]
            if not moves:
                break
            rows = play(rows, *rng.choice(moves), me)
            me = "O" if me == "X" else "X"
        counts = {(r, c): flips(rows, r, c, me) for r in range(n) for c in range(n)}
        legal = {k: v for k, v in counts.items() if v}
        if len(set(legal.values())) > 1:
            break
    best = max(legal.values())
    header = "  " + " ".join("abcdefgh"[:n])
    grid = "\n".join(f"{r + 1} " + " ".join(rows[r]) for r in range(n))
    prompt = (f"Reversi (Othello) position, '.' empty:\n{header}\n{grid}\nIt is {me}'s turn. Give a legal move "
              f"that flips the largest possible number of opponent discs. Reply with only the square, e.g. c4.")
    worse = sorted(square(*k) for k, v in legal.items() if v < best)
    return make_task(ID_REVERSI, difficulty, prompt, public={"rows": rows, "me": me},
                     hidden={"best": best, "best_moves": sorted(square(*k) for k, v in legal.items() if v == best),
                             "worse": worse})


def _reversi_reference(task: Task) -> str:
    return task.hidden["best_moves"][0]


def _reversi_check(task: Task, answer: str) -> Score:
    t = (answer_text(answer) or "").lower()
    rows = task.public["rows"]
    n = len(rows)
    m = re.fullmatch(r"([a-h])([1-8])", t)
    if not m or "abcdefgh".index(m.group(1)) >= n or int(m.group(2)) > n:
        return fail(task.domain, "not a square on the board", name="legal")
    r, c = int(m.group(2)) - 1, "abcdefgh".index(m.group(1))
    k = flips(rows, r, c, task.public["me"])
    if k == 0:
        return fail(task.domain, "illegal move", name="legal")
    return check(task.domain, k == task.hidden["best"], name="max_flips", why=f"flips {k}, best {task.hidden['best']}")


def _reversi_probes(task: Task) -> dict[str, str]:
    rows = task.public["rows"]
    occ = next(square(r, c) for r in range(len(rows)) for c in range(len(rows)) if rows[r][c] != ".")
    return {"worse": task.hidden["worse"][0], "occupied": occ, "off_board": "z9"}


register_domain(SingleTurnDomain(
    ID_REVERSI, _reversi_draw, _reversi_check, _reversi_probes, reference=_reversi_reference, description="""\
In a Reversi/Othello position, give a legal move that flips the most discs.

Squares are written column letter + row number (``c4``; row 1 is the top). Any move
reaching the maximum flip count scores 1; a legal move with fewer flips or an illegal
square 0. Boards 6x6 (d1) or 8x8 (d2, d3) after 4-8 / 8-16 / 16-30 random moves.
Not covered: game-theoretic best moves. Probes: a legal move with fewer flips, an occupied
square, "z9".
"""))


def pure_nash(a: list[list[int]], b: list[list[int]]) -> list[str]:
    n, m = len(a), len(a[0])
    out = []
    for i in range(n):
        for j in range(m):
            if a[i][j] == max(a[k][j] for k in range(n)) and b[i][j] == max(b[i][k] for k in range(m)):
                out.append(f"R{i + 1}C{j + 1}")
    return out


ID_NASH = "games.nash-v1"


def _nash_draw(rng: random.Random, difficulty: int) -> Task:
    n = difficulty + 1
    a = [[rng.randint(0, 9) for _ in range(n)] for _ in range(n)]
    b = [[rng.randint(0, 9) for _ in range(n)] for _ in range(n)]
    ne = pure_nash(a, b)
    table = "\n".join(" | ".join(f"({a[i][j]},{b[i][j]})" for j in range(n)) for i in range(n))
    prompt = (f"Two-player game; the row player picks a row R1..R{n}, the column player a column C1..C{n}. Each cell "
              f"shows (row payoff, column payoff):\n{table}\nList all pure-strategy Nash equilibria as cells like "
              f"R1C2, comma-separated (any order), or 'none' if there are none. Reply with only that list.")
    return make_task(ID_NASH, difficulty, prompt, answer=", ".join(ne) if ne else "none",
                     public={"a": a, "b": b}, hidden={"ne": ne})


def _nash_check(task: Task, answer: str) -> Score:
    t = (answer_text(answer) or "").strip().upper()
    n = len(task.public["a"])
    if t == "NONE":
        got: list[str] = []
    else:
        got = [p.strip() for p in t.split(",")]
        if not all(re.fullmatch(rf"R[1-{n}]C[1-{n}]", p) for p in got) or len(set(got)) != len(got):
            return fail(task.domain, "not a list of distinct cells R<i>C<j> or 'none'")
    return check(task.domain, sorted(got) == sorted(task.hidden["ne"]), name="equilibria")


def _nash_probes(task: Task) -> dict[str, str]:
    n = len(task.public["a"])
    cells = [f"R{i + 1}C{j + 1}" for i in range(n) for j in range(n)]
    out = {"all_cells": ", ".join(cells)}
    if task.hidden["ne"]:
        out["none"] = "none"
    non = [c for c in cells if c not in task.hidden["ne"]]
    if non:
        out["non_equilibrium"] = non[0]
    return out


register_domain(SingleTurnDomain(
    ID_NASH, _nash_draw, _nash_check, _nash_probes, description="""\
List every pure-strategy Nash equilibrium of a two-player bimatrix game.

Cells are ``R<i>C<j>``, comma-separated, or ``none``. Exact set match only: listing every
cell (or none) is never rewarded, and partial sets get 0 because an incomplete equilibrium
list is a wrong analysis. 2x2 / 3x3 / 4x4 games with payoffs 0-9. Not covered: mixed
equilibria. Probes: all cells, "none" (when equilibria exist), a non-equilibrium cell.
"""))


def mm_feedback(code: str, guess: str) -> tuple[int, int]:
    exact = sum(a == b for a, b in zip(code, guess))
    common = sum(min(code.count(ch), guess.count(ch)) for ch in set(guess))
    return exact, common - exact


ID_MASTERMIND = "games.mastermind-v1"


def _mastermind_draw(rng: random.Random, difficulty: int) -> Task:
    pegs, ncol = ((3, 6), (4, 6), (4, 8))[difficulty - 1]
    colours = "ABCDEFGH"[:ncol]
    space = ["".join(p) for p in itertools.product(colours, repeat=pegs)]
    code = "".join(rng.choice(colours) for _ in range(pegs))
    clues: list[tuple[str, tuple[int, int]]] = []
    cands = space
    while len(cands) > 1:
        g = rng.choice([c for c in space if c != code])
        fb = mm_feedback(code, g)
        new = [c for c in cands if mm_feedback(c, g) == fb]
        if len(new) < len(cands):
            clues.append((g, fb))
            cands = new
    lines = "\n".join(f"{g}: {b} black, {w} white" for g, (b, w) in clues)
    prompt = (f"Mastermind: the secret code has {pegs} pegs, each a colour from {', '.join(colours)} (repeats "
              f"allowed). Feedback per guess: black = right colour in the right place, white = right colour in "
              f"the wrong place.\n{lines}\nWhat is the secret code? Reply with only the {pegs} letters.")
    return make_task(ID_MASTERMIND, difficulty, prompt, answer=code, public={"guesses": [g for g, _ in clues]})


def _mastermind_check(task: Task, answer: str) -> Score:
    t = (answer_text(answer) or "").upper().replace(" ", "")
    return check(task.domain, t == task.hidden["answer"])


def _mastermind_probes(task: Task) -> dict[str, str]:
    return {"last_guess": task.public["guesses"][-1], "all_a": "A" * len(task.hidden["answer"])} \
        if "A" * len(task.hidden["answer"]) != task.hidden["answer"] else {"last_guess": task.public["guesses"][-1]}


register_domain(SingleTurnDomain(
    ID_MASTERMIND, _mastermind_draw, _mastermind_check, _mastermind_probes,
    description="""\
Deduce the secret code from guesses and their feedback.

Feedback is (black = right colour right place, white = right colour wrong place). Guesses
are added until exactly one code is consistent. Codes of 3 pegs / 6 colours (d1),
4 / 6 (d2), 4 / 8 (d3). Exact match only. Not covered: choosing the next guess.
Probes: the last guess shown (never the code), "AAAA".
"""))
