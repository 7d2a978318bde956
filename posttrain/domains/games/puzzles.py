"""Constraint puzzles: Sudoku (4x4 and 9x9, unique solutions), N-queens with pre-placed queens,
Lights Out. Answers are complete boards or press lists, checked by the puzzle's rules.
"""

from __future__ import annotations

import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text, check, fail, parse_int, parse_items


def sudoku_count(grid: list[int], n: int, limit: int = 2) -> int:
    """Number of completions of ``grid`` (0 = blank), stopping at ``limit``; MRV backtracking."""
    b = int(n ** 0.5)
    full = (1 << (n + 1)) - 2
    rows, cols, boxes = [0] * n, [0] * n, [0] * n
    for i, v in enumerate(grid):
        if v:
            r, c = divmod(i, n)
            rows[r] |= 1 << v
            cols[c] |= 1 << v
            boxes[r // b * b + c // b] |= 1 << v
    blanks = [i for i, v in enumerate(grid) if not v]

    def rec() -> int:
        best, best_mask, best_n = -1, 0, 99
        for i in blanks:
            if grid[i]:
                continue
            r, c = divmod(i, n)
            mask = full & ~(rows[r] | cols[c] | boxes[r // b * b + c // b])
            k = bin(mask).count("1")
            if k < best_n:
                best, best_mask, best_n = i, mask, k
                if k <= 1:
                    break
        if best < 0:
            return 1
        total = 0
        r, c = divmod(best, n)
        bx = r // b * b + c // b
        for v in range(1, n + 1):
            if best_mask >> v & 1:
                grid[best] = v
                rows[r] |= 1 << v
                cols[c] |= 1 << v
                boxes[bx] |= 1 << v
                total += rec()
                grid[best] = 0
                rows[r] &= ~(1 << v)
                cols[c] &= ~(1 << v)
                boxes[bx] &= ~(1 << v)
                if total >= limit:
                    break
        return total

    return rec()


def sudoku_solution(rng: random.Random, n: int) -> list[int]:
    b = int(n ** 0.5)
    bands = rng.sample(range(b), b)
    rows = [g * b + r for g in bands for r in rng.sample(range(b), b)]
    stacks = rng.sample(range(b), b)
    cols = [g * b + c for g in stacks for c in rng.sample(range(b), b)]
    digits = rng.sample(range(1, n + 1), n)
    return [digits[(b * (r % b) + r // b + c) % n] for r in rows for c in cols]


ID_SUDOKU = "games.sudoku-v1"


def _sudoku_fmt(cells: list[int], n: int) -> str:
    return "\n".join(" ".join(map(str, cells[r * n:(r + 1) * n])) for r in range(n))


def _sudoku_draw(rng: random.Random, difficulty: int) -> Task:
    n = 4 if difficulty == 1 else 9
    target = (8, 35, 50)[difficulty - 1]
    sol = sudoku_solution(rng, n)
    puz = list(sol)
    for i in rng.sample(range(n * n), n * n):
        if sum(1 for v in puz if v == 0) >= target:
            break
        keep, puz[i] = puz[i], 0
        if sudoku_count(list(puz), n) != 1:
            puz[i] = keep
    text = "\n".join(" ".join(str(v) if v else "." for v in puz[r * n:(r + 1) * n]) for r in range(n))
    prompt = (f"Solve this {n}x{n} Sudoku ('.' = blank; each row, column and {int(n ** 0.5)}x{int(n ** 0.5)} box "
              f"holds 1-{n} once):\n{text}\nReply with only the completed grid: {n} lines of {n} digits.")
    return make_task(ID_SUDOKU, difficulty, prompt, answer=_sudoku_fmt(sol, n), public={"puzzle": puz, "n": n},
                     hidden={"solution": sol})


def _sudoku_check(task: Task, answer: str) -> Score:
    n, puz, sol = task.public["n"], task.public["puzzle"], task.hidden["solution"]
    lines = [ln.replace(" ", "") for ln in (answer_text(answer) or "").splitlines() if ln.strip()]
    if len(lines) != n or not all(re.fullmatch(rf"[1-{n}]{{{n}}}", ln) for ln in lines):
        return fail(task.domain, f"not {n} lines of {n} digits 1-{n}")
    got = [int(ch) for ln in lines for ch in ln]
    if any(p and g != p for p, g in zip(puz, got)):
        return fail(task.domain, "a given digit was changed", name="givens")
    blanks = [i for i, p in enumerate(puz) if not p]
    frac = sum(got[i] == sol[i] for i in blanks) / len(blanks)
    return Score(frac ** 3, components={"cells": (frac, 1.0)}, passed=sum(got[i] == sol[i] for i in blanks),
                 total=len(blanks), reason=f"{frac:.0%} of blanks right", verifier_version=task.domain)


def _sudoku_probes(task: Task) -> dict[str, str]:
    n, puz, sol = task.public["n"], task.public["puzzle"], task.hidden["solution"]
    given = next(i for i, p in enumerate(puz) if p)
    tampered = list(sol)
    tampered[given] = tampered[given] % n + 1
    return {"zeros": _sudoku_fmt(puz, n), "ones": _sudoku_fmt([p or 1 for p in puz], n),
            "tampered_given": _sudoku_fmt(tampered, n)}


register_domain(SingleTurnDomain(
    ID_SUDOKU, _sudoku_draw, _sudoku_check, _sudoku_probes, description="""\
Complete a Sudoku with a unique solution.

4x4 (d1), 9x9 with ~35 blanks (d2), 9x9 with as many blanks as uniqueness allows, up to 50 (d3).

Answer: the full grid, one row per line, digits only (spaces allowed). Zero unless the grid
is complete, in range and keeps every given; then (fraction of blanks right)^3, so a
constant fill earns ~0 and a nearly solved grid most of the reward. Not covered: variants
(killer, X). Probes: the puzzle with blanks as 0, the givens with every blank set to 1,
a solution with one given changed.
"""))


def queens_solution(rng: random.Random, n: int) -> list[int]:
    cols: list[int] = []

    def rec() -> bool:
        if len(cols) == n:
            return True
        r = len(cols)
        for c in rng.sample(range(n), n):
            if all(c != c2 and abs(c - c2) != r - r2 for r2, c2 in enumerate(cols)):
                cols.append(c)
                if rec():
                    return True
                cols.pop()
        return False

    rec()
    return [c + 1 for c in cols]


ID_NQUEENS = "games.nqueens-v1"


def _nqueens_draw(rng: random.Random, difficulty: int) -> Task:
    n = rng.randint(*((5, 6), (7, 8), (9, 10))[difficulty - 1])
    sol = queens_solution(rng, n)
    fixed = sorted(rng.sample(range(n), difficulty))
    fx = {str(r + 1): sol[r] for r in fixed}
    desc = ", ".join(f"row {r} column {c}" for r, c in fx.items())
    prompt = (f"Place {n} queens on a {n}x{n} board so that no two attack each other (same row, column or "
              f"diagonal). These queens are already placed and must stay: {desc}. Reply with only the column "
              f"(1-{n}) of the queen in each row from row 1 to row {n}, comma-separated.")
    return make_task(ID_NQUEENS, difficulty, prompt, answer=", ".join(map(str, sol)), public={"n": n, "fixed": fx})


def _nqueens_check(task: Task, answer: str) -> Score:
    n, fx = task.public["n"], task.public["fixed"]
    cols = parse_items(answer_text(answer), n, parse_int)
    if cols is None or not all(1 <= c <= n for c in cols):
        return fail(task.domain, f"not {n} columns in 1..{n}")
    if any(cols[int(r) - 1] != c for r, c in fx.items()):
        return fail(task.domain, "a fixed queen was moved", name="fixed")
    safe = sum(1 for r in range(n) if all(r == r2 or (cols[r] != cols[r2] and abs(cols[r] - cols[r2]) != abs(r - r2))
                                          for r2 in range(n)))
    frac = safe / n
    return Score(frac ** 2, components={"safe_queens": (frac, 1.0)}, passed=safe, total=n,
                 reason=f"{safe}/{n} queens unattacked", verifier_version=task.domain)


def _nqueens_probes(task: Task) -> dict[str, str]:
    n, fx = task.public["n"], task.public["fixed"]
    first = next(iter(fx.values()))
    return {"identity": ", ".join(str(i + 1) for i in range(n)), "column_one": ", ".join(["1"] * n),
            "fixed_repeated": ", ".join([str(first)] * n)}


register_domain(SingleTurnDomain(
    ID_NQUEENS, _nqueens_draw, _nqueens_check, _nqueens_probes, description="""\
Complete an N-queens placement that already has k queens fixed.

Answer: the column (1..n) of the queen in each row 1..n, comma-separated. Zero unless it is
n columns in range keeping the fixed queens; then (fraction of queens attacked by no
other)^2. n = 5-6 / 7-8 / 9-10 with 1 / 2 / 3 fixed queens (so memorised textbook
solutions rarely fit). Not covered: counting solutions. Probes: the identity placement
(one diagonal), every queen in column 1, the fixed queens' columns repeated.
"""))


def lights_press(grid: list[int], n: int, r: int, c: int) -> None:
    for dr, dc in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < n and 0 <= cc < n:
            grid[rr * n + cc] ^= 1


ID_LIGHTS_OUT = "games.lights_out-v1"


def _lights_out_solves(grid: list[int], n: int, cells: list[tuple[int, int]]) -> bool:
    g = list(grid)
    for r, c in cells:
        lights_press(g, n, r, c)
    return not any(g)


def _lights_out_draw(rng: random.Random, difficulty: int) -> Task:
    n = difficulty + 2
    while True:
        presses = sorted(rng.sample(range(n * n), rng.randint(2, n + 2)))
        grid = [0] * (n * n)
        for p in presses:
            lights_press(grid, n, *divmod(p, n))
        if sum(grid) and not _lights_out_solves(grid, n, [divmod(i, n) for i, v in enumerate(grid) if v]) \
                and not _lights_out_solves(grid, n, [(0, 0)]):
            break
    text = "\n".join("".join("1" if grid[r * n + c] else "0" for c in range(n)) + f"   row {r + 1}" for r in range(n))
    prompt = (f"Lights Out on a {n}x{n} grid (1 = on; columns a-{'abcde'[n - 1]} left to right, rows 1-{n} top to "
              f"bottom):\n{text}\nPressing a cell toggles it and its up/down/left/right neighbours. Which cells "
              f"should be pressed to turn every light off? Reply with only the cells, comma-separated, e.g. 'a1, c2'.")
    ans = ", ".join(f"{'abcde'[p % n]}{p // n + 1}" for p in presses)
    return make_task(ID_LIGHTS_OUT, difficulty, prompt, answer=ans, public={"grid": grid, "n": n})


def _lights_out_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    text = answer_text(answer) or ""
    toks = [t.strip().lower() for t in text.split(",")] if text.strip() else []
    if not toks or len(toks) > 4 * n * n or not all(re.fullmatch(rf"[a-{'abcde'[n - 1]}][1-{n}]", t) for t in toks):
        return fail(task.domain, "not a list of cells")
    cells = [(int(t[1]) - 1, "abcde".index(t[0])) for t in toks]
    return check(task.domain, _lights_out_solves(task.public["grid"], n, cells), name="all_off")


def _lights_out_probes(task: Task) -> dict[str, str]:
    n, g = task.public["n"], task.public["grid"]
    lit = ", ".join(f"{'abcde'[i % n]}{i // n + 1}" for i, v in enumerate(g) if v)
    return {"press_lit": lit, "a1": "a1"}


register_domain(SingleTurnDomain(
    ID_LIGHTS_OUT, _lights_out_draw, _lights_out_check, _lights_out_probes,
    description="""\
List the cells to press so every light goes out.

Pressing a cell toggles it and its orthogonal neighbours. Cells as ``a1`` (column letter,
row number), comma-separated. Scored by simulation: 1 when all lights are off, else 0
(a count of lights off would pay for doing nothing). Boards 3x3 / 4x4 / 5x5 (5x5 patterns
are generated by presses, so always solvable). Not covered: minimal press counts.
Probes: pressing every lit cell (when that does not solve it), a1 alone.
"""))
