"""Constraint grids: Futoshiki, magic squares, nonograms, binary (Takuzu) puzzles.

Every verifier checks the answered grid against the puzzle's rules and givens by itself, so
any valid completion scores 1 (the stored solution only proves one exists).

Not covered: puzzles larger than 6x6, uniqueness of the solution (not needed when verified).
"""

from __future__ import annotations

import itertools
import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain
from posttrain.verifiers.structured import answer_text


def parse_grid(answer: str, n: int, alphabet: str, sep: bool = True) -> list[list[str]] | None:
    """``n`` non-empty lines of ``n`` symbols from ``alphabet`` (space-separated when ``sep``)."""
    lines = [ln.strip() for ln in (answer_text(answer) or "").splitlines() if ln.strip()]
    rows = [ln.split() if sep else list(ln.replace(" ", "")) for ln in lines]
    if len(rows) != n or any(len(r) != n or any(c not in alphabet for c in r) for r in rows):
        return None
    return rows


def show(grid: list[list], sep: str = " ") -> str:
    return "\n".join(sep.join(str(c) for c in row) for row in grid)


def latin_square(rng: random.Random, n: int) -> list[list[int]]:
    rows, cols, syms = rng.sample(range(n), n), rng.sample(range(n), n), rng.sample(range(1, n + 1), n)
    return [[syms[(rows[i] + cols[j]) % n] for j in range(n)] for i in range(n)]


def grid_score(domain_id: str, checks: dict[str, bool]) -> Score:
    v = 1.0 if checks and all(checks.values()) else 0.0
    failed = [k for k, ok in checks.items() if not ok]
    return Score(v, components={"valid": (v, 1.0)}, verifier_version=domain_id,
                 reason="valid" if v else ("bad format" if not checks else f"violates {', '.join(failed[:3])}"))


ID_FUTOSHIKI = "logic.futoshiki-v1"


def _futoshiki_checks(task: Task, g: list[list[int]]) -> dict[str, bool]:
    n = task.public["n"]
    return {"rows": all(sorted(r) == list(range(1, n + 1)) for r in g),
            "cols": all(sorted(c) == list(range(1, n + 1)) for c in zip(*g)),
            "givens": all(g[i][j] == v for i, j, v in task.public["givens"]),
            "inequalities": all(g[a][b] < g[c][d] for a, b, c, d in task.public["ineqs"])}


def _futoshiki_draw(rng: random.Random, difficulty: int) -> Task:
    n = 2 + difficulty
    sol = latin_square(rng, n)
    cells = [(i, j) for i in range(n) for j in range(n)]
    givens = [[i, j, sol[i][j]] for i, j in rng.sample(cells, n - 1)]
    ineqs = []
    for i, j in rng.sample(cells, 2 * n):
        di, dj = rng.choice([(0, 1), (1, 0)])
        if i + di < n and j + dj < n:
            a, b = sol[i][j], sol[i + di][j + dj]
            ineqs.append([i, j, i + di, j + dj] if a < b else [i + di, j + dj, i, j])
    text = [f"cell (row {a + 1}, col {b + 1}) < cell (row {c + 1}, col {d + 1})" for a, b, c, d in ineqs]
    prompt = (f"Fill a {n}x{n} grid with digits 1-{n} so that every row and column contains each digit "
              "once.\nGiven: " + "; ".join(f"row {i + 1}, col {j + 1} = {v}" for i, j, v in givens)
              + ".\nConstraints: " + "; ".join(text) + f".\nAnswer with {n} lines of {n} "
              "space-separated digits, nothing else.")
    return make_task(ID_FUTOSHIKI, difficulty, prompt, public={"n": n, "givens": givens, "ineqs": ineqs},
                     hidden={"solution": sol})


def _futoshiki_reference(task: Task) -> str:
    return show(task.hidden["solution"])


def _futoshiki_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    g = parse_grid(answer, n, [str(d) for d in range(1, n + 1)])
    return grid_score(task.domain, {} if g is None else _futoshiki_checks(task, [[int(c) for c in r] for r in g]))


def _futoshiki_probes(task: Task) -> dict[str, str]:
    n = task.public["n"]
    ones = [[1] * n for _ in range(n)]
    for i, j, v in task.public["givens"]:
        ones[i][j] = v
    out = {"ones": show(ones)}
    swapped = [list(r) for r in task.hidden["solution"]]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    if not all(_futoshiki_checks(task, swapped).values()):
        out["rows_swapped"] = show(swapped)
    return out


register_domain(SingleTurnDomain(
    ID_FUTOSHIKI, _futoshiki_draw, _futoshiki_check, _futoshiki_probes,
    reference=_futoshiki_reference, description="""\
Fill an n x n Latin square obeying inequality signs between neighbours and given digits.

Verified by rule checking; any valid grid scores 1. Not covered: killer/cage variants.
Probes: givens kept and every blank set to 1, the grid with two rows swapped when that breaks a rule.
"""))


LO_SHU = [[2, 7, 6], [9, 5, 1], [4, 3, 8]]
DURER = [[16, 3, 2, 13], [5, 10, 11, 8], [9, 6, 7, 12], [4, 15, 14, 1]]


def _symmetry(rng: random.Random, sq: list[list[int]]) -> list[list[int]]:
    for _ in range(rng.randrange(4)):
        sq = [list(r) for r in zip(*sq[::-1])]
    if rng.random() < 0.5:
        sq = [r[::-1] for r in sq]
    if rng.random() < 0.5:
        m = len(sq) ** 2 + 1
        sq = [[m - x for x in r] for r in sq]
    return sq


def magic_lines(g: list[list[int]]) -> list[int]:
    n = len(g)
    return ([sum(r) for r in g] + [sum(c) for c in zip(*g)]
            + [sum(g[i][i] for i in range(n)), sum(g[i][n - 1 - i] for i in range(n))])


ID_MAGIC_SQUARE = "logic.magic_square-v1"


def _magic_square_draw(rng: random.Random, difficulty: int) -> Task:
    base = DURER if difficulty == 3 else LO_SHU
    sol = _symmetry(rng, base)
    n = len(sol)
    blanks = {1: 4, 2: 6, 3: 9}[difficulty]
    hide = rng.sample([(i, j) for i in range(n) for j in range(n)], blanks)
    puzzle = [[0 if (i, j) in hide else sol[i][j] for j in range(n)] for i in range(n)]
    magic = n * (n * n + 1) // 2
    prompt = (f"Complete this {n}x{n} magic square using each number 1..{n * n} exactly once so every "
              f"row, column and both diagonals sum to {magic} (0 marks a blank):\n{show(puzzle)}\n"
              f"Answer with {n} lines of {n} space-separated numbers, nothing else.")
    return make_task(ID_MAGIC_SQUARE, difficulty, prompt, public={"puzzle": puzzle}, hidden={"solution": sol})


def _magic_square_reference(task: Task) -> str:
    return show(task.hidden["solution"])


def _magic_square_check(task: Task, answer: str) -> Score:
    p = task.public["puzzle"]
    n = len(p)
    g = parse_grid(answer, n, [str(d) for d in range(1, n * n + 1)])
    if g is None:
        return Score(0.0, components={"lines": (0.0, 1.0)}, reason="bad format", verifier_version=task.domain)
    g = [[int(c) for c in r] for r in g]
    perm = sorted(x for r in g for x in r) == list(range(1, n * n + 1))
    kept = all(p[i][j] in (0, g[i][j]) for i in range(n) for j in range(n))
    lines = magic_lines(g)
    frac = sum(s == n * (n * n + 1) // 2 for s in lines) / len(lines)
    v = 0.0 if not (perm and kept) else (1.0 if frac == 1 else 0.5 * frac)
    return Score(v, components={"lines": (v, 1.0)}, verifier_version=task.domain,
                 reason=f"permutation={perm} givens={kept} lines={frac:.2f}")


def _magic_square_probes(task: Task) -> dict[str, str]:
    p = task.public["puzzle"]
    n = len(p)
    same = [[x or n * n for x in r] for r in p]
    over = [list(r) for r in task.hidden["solution"]]
    i, j = next((i, j) for i in range(n) for j in range(n) if p[i][j])
    k, m = next((k, m) for k in range(n) for m in range(n) if not p[k][m])
    over[i][j], over[k][m] = over[k][m], over[i][j]
    return {"same_number": show(same), "given_overwritten": show(over)}


register_domain(SingleTurnDomain(
    ID_MAGIC_SQUARE, _magic_square_draw, _magic_square_check, _magic_square_probes,
    reference=_magic_square_reference, description="""\
Complete a magic square (numbers 1..n², all rows, columns and diagonals equal).

Verified; partial credit 0.5 x fraction of lines with the magic sum, but only for a grid
that uses each number once and keeps the givens. Not covered: n > 4.
Probes: every blank filled with the same number, a given overwritten.
"""))


def runs(line: list[int]) -> list[int]:
    return [len(list(g)) for k, g in itertools.groupby(line) if k] or [0]


ID_NONOGRAM = "logic.nonogram-v1"


def _nonogram_draw(rng: random.Random, difficulty: int) -> Task:
    n = 3 + difficulty
    while True:
        g = [[int(rng.random() < 0.55) for _ in range(n)] for _ in range(n)]
        lines = g + [list(c) for c in zip(*g)]
        if all(0 < sum(ln) < n for ln in lines):
            break
    rc, cc = [runs(r) for r in g], [runs(list(c)) for c in zip(*g)]
    prompt = (f"Solve this {n}x{n} nonogram. Each clue lists the lengths of the runs of painted cells "
              "in order.\nRows (top to bottom): " + " | ".join(" ".join(map(str, c)) for c in rc)
              + "\nColumns (left to right): " + " | ".join(" ".join(map(str, c)) for c in cc)
              + f"\nAnswer with {n} lines of {n} characters, # for painted and . for blank, nothing else.")
    return make_task(ID_NONOGRAM, difficulty, prompt, public={"rows": rc, "cols": cc},
                     hidden={"solution": ["".join("#" if x else "." for x in r) for r in g]})


def _nonogram_reference(task: Task) -> str:
    return "\n".join(task.hidden["solution"])


def _nonogram_check(task: Task, answer: str) -> Score:
    rc, cc = task.public["rows"], task.public["cols"]
    g = parse_grid(answer, len(rc), "#.", sep=False)
    if g is None:
        return Score(0.0, components={"lines": (0.0, 1.0)}, reason="bad format", verifier_version=task.domain)
    b = [[int(c == "#") for c in r] for r in g]
    ok = [runs(r) == c for r, c in zip(b, rc)] + [runs(list(col)) == c for col, c in zip(zip(*b), cc)]
    frac = sum(ok) / len(ok)
    v = 1.0 if frac == 1 else 0.5 * frac
    return Score(v, components={"lines": (v, 1.0)}, passed=sum(ok), total=len(ok),
                 reason=f"{sum(ok)}/{len(ok)} lines", verifier_version=task.domain)


def _nonogram_probes(task: Task) -> dict[str, str]:
    n = len(task.public["rows"])
    return {"blank": "\n".join("." * n for _ in range(n)), "full": "\n".join("#" * n for _ in range(n))}


register_domain(SingleTurnDomain(
    ID_NONOGRAM, _nonogram_draw, _nonogram_check, _nonogram_probes, reference=_nonogram_reference, description="""\
Paint a grid so every row and column matches its run-length clue.

Verified against the clues (any matching grid counts); partial credit 0.5 x fraction of
matching lines. Not covered: colour nonograms. Probes: all blank, all painted (the
generator avoids empty and full lines, so both match no line).
"""))


def _takuzu_ok(g: list[list[int]], partial: bool = False, n: int = 0) -> bool:
    n = n or len(g[0])
    for line in g + ([list(c) for c in zip(*g)] if not partial else []):
        if any(line[k] == line[k + 1] == line[k + 2] for k in range(len(line) - 2)):
            return False
        if (partial and max(line.count(0), line.count(1)) > n // 2) or (not partial and line.count(1) * 2 != n):
            return False
    return partial or (len({tuple(r) for r in g}) == n and len(set(zip(*g))) == n)


def _takuzu_solution(rng: random.Random, n: int) -> list[list[int]]:
    """Random full grid by row-wise backtracking over the valid rows."""
    rows = [list(r) for r in itertools.product([0, 1], repeat=n) if _takuzu_ok([list(r)], True)]
    def extend(g: list[list[int]]) -> list[list[int]] | None:
        if len(g) == n:
            return g if _takuzu_ok(g) else None
        for r in rng.sample(rows, len(rows)):
            cols = [list(c) for c in zip(*(g + [r]))]
            if r not in g and all(_takuzu_ok([c], True, n) for c in cols):
                out = extend(g + [r])
                if out:
                    return out
        return None
    return extend([]) or []


ID_BINARY_PUZZLE = "logic.binary_puzzle-v1"


def _binary_puzzle_draw(rng: random.Random, difficulty: int) -> Task:
    n = 4 if difficulty == 1 else 6
    sol = _takuzu_solution(rng, n)
    keep = {1: 8, 2: 20, 3: 14}[difficulty]
    shown = set(rng.sample(range(n * n), keep))
    puzzle = [["01"[sol[i][j]] if i * n + j in shown else "." for j in range(n)] for i in range(n)]
    prompt = (f"Fill the {n}x{n} grid (. = blank) with 0 and 1 so that each row and column has as many "
              "0s as 1s, no three equal digits are adjacent in a row or column, and all rows are "
              f"different and all columns are different.\n{show(puzzle, '')}\n"
              f"Answer with {n} lines of {n} digits (no spaces), nothing else.")
    return make_task(ID_BINARY_PUZZLE, difficulty, prompt, public={"puzzle": ["".join(r) for r in puzzle]},
                     hidden={"solution": ["".join("01"[x] for x in r) for r in sol]})


def _binary_puzzle_reference(task: Task) -> str:
    return "\n".join(task.hidden["solution"])


def _binary_puzzle_check(task: Task, answer: str) -> Score:
    p = task.public["puzzle"]
    g = parse_grid(answer, len(p), "01", sep=False)
    if g is None:
        return grid_score(task.domain, {})
    b = [[int(c) for c in r] for r in g]
    return grid_score(task.domain, {"rules": _takuzu_ok(b), "givens": all(
        pc in (".", gc) for pr, gr in zip(p, g) for pc, gc in zip(pr, gr))})


def _binary_puzzle_probes(task: Task) -> dict[str, str]:
    p = task.public["puzzle"]
    alt = ["".join(c if c != "." else "01"[j % 2] for j, c in enumerate(r)) for r in p]
    return {"alternating": "\n".join(alt), "zeros": "\n".join("0" * len(r) for r in p)}


register_domain(SingleTurnDomain(
    ID_BINARY_PUZZLE, _binary_puzzle_draw, _binary_puzzle_check, _binary_puzzle_probes,
    reference=_binary_puzzle_reference, description="""\
Solve a binary puzzle (Takuzu): fill a 0/1 grid under the balance, no-triple and distinct-line rules.

Rows and columns are balanced, have no three equal digits in a line and are all distinct.

Verified by rule checking against the givens. Not covered: sizes above 6.
Probes: blanks filled with an alternating 0101 pattern per row (repeats rows), all zeros.
"""))
