"""Number and cellular games: the 24 game (expressions checked by a tiny exact parser, never
``eval``) and Conway's Game of Life (predict the board after k generations).
"""

from __future__ import annotations

import itertools
import random
import re
from fractions import Fraction

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text, check, fail

_TOK = re.compile(r"\s*(\d+|[()+\-*/×÷])")


def parse_expr(text: str) -> tuple[Fraction, list[int]] | None:
    """Value and the literal numbers of an expression over + - * / ( ) with exact fractions.

    None for anything else (unknown characters, unary minus, division by zero, trailing junk,
    over 200 characters)."""
    if len(text) > 200:
        return None
    toks, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOK.match(text, pos)
        if not m:
            return None
        toks.append(m.group(1).replace("×", "*").replace("÷", "/"))
        pos = m.end()
    nums: list[int] = []
    i = 0

    def atom() -> Fraction | None:
        nonlocal i
        if i >= len(toks):
            return None
        t = toks[i]
        i += 1
        if t == "(":
            v = add()
            if v is None or i >= len(toks) or toks[i] != ")":
                return None
            i += 1
            return v
        if t.isdigit():
            nums.append(int(t))
            return Fraction(int(t))
        return None

    def mul() -> Fraction | None:
        nonlocal i
        v = atom()
        while v is not None and i < len(toks) and toks[i] in "*/":
            op = toks[i]
            i += 1
            w = atom()
            if w is None or (op == "/" and w == 0):
                return None
            v = v * w if op == "*" else v / w
        return v

    def add() -> Fraction | None:
        nonlocal i
        v = mul()
        while v is not None and i < len(toks) and toks[i] in "+-":
            op = toks[i]
            i += 1
            w = mul()
            if w is None:
                return None
            v = v + w if op == "+" else v - w
        return v

    val = add()
    if val is None or i != len(toks):
        return None
    return val, nums


def solve_target(nums: list[int], target: int) -> str | None:
    """An expression using every number once that equals ``target`` (exhaustive, exact)."""
    def rec(items: list[tuple[Fraction, str]]) -> str | None:
        if len(items) == 1:
            return items[0][1] if items[0][0] == target else None
        for i, j in itertools.permutations(range(len(items)), 2):
            (a, ea), (b, eb) = items[i], items[j]
            rest = [items[k] for k in range(len(items)) if k not in (i, j)]
            cands = [(a + b, f"({ea} + {eb})"), (a - b, f"({ea} - {eb})"), (a * b, f"({ea} * {eb})")]
            if b != 0:
                cands.append((a / b, f"({ea} / {eb})"))
            for v, e in cands:
                found = rec(rest + [(v, e)])
                if found:
                    return found
        return None

    out = rec([(Fraction(n), str(n)) for n in nums])
    return out[1:-1] if out and out.startswith("(") and out.endswith(")") else out


ID_GAME24 = "games.game24-v1"


def _game24_draw(rng: random.Random, difficulty: int) -> Task:
    hi = 9 if difficulty == 1 else 13
    while True:
        nums = sorted(rng.randint(1, hi) for _ in range(4))
        target = 24 if difficulty < 3 else rng.randint(10, 60)
        if sum(nums) == target:
            continue
        expr = solve_target(nums, target)
        if expr:
            break
    prompt = (f"Use the numbers {', '.join(map(str, nums))} each exactly once with +, -, *, / and parentheses to "
              f"make {target}. Reply with only the expression, e.g. (1 + 2) * (3 + 5).")
    return make_task(ID_GAME24, difficulty, prompt, answer=expr, public={"numbers": nums, "target": target})


def _game24_check(task: Task, answer: str) -> Score:
    parsed = parse_expr(answer_text(answer) or "")
    if parsed is None:
        return fail(task.domain, "not an arithmetic expression over the given numbers")
    val, used = parsed
    if sorted(used) != sorted(task.public["numbers"]):
        return fail(task.domain, "must use each given number exactly once", name="numbers")
    return check(task.domain, val == task.public["target"], name="value", why=f"value {val}")


def _game24_probes(task: Task) -> dict[str, str]:
    nums = task.public["numbers"]
    return {"target_alone": str(task.public["target"]), "sum": " + ".join(map(str, nums)),
            "reused": " * ".join(map(str, [nums[0]] * 4))}


register_domain(SingleTurnDomain(
    ID_GAME24, _game24_draw, _game24_check, _game24_probes, description="""\
Combine four numbers with + - * / and parentheses to reach a target.

Each given number used exactly once; checked by an exact rational parser (no eval). d1:
numbers 1-9, target 24; d2: numbers 1-13, target 24; d3: numbers 1-13, target 10-60.
Only solvable sets are drawn. Not covered: exponents, concatenation, unary minus.
Probes: the target written alone, the plain sum of the numbers, a number used twice.
"""))


def life_step(cells: set[tuple[int, int]], n: int) -> set[tuple[int, int]]:
    out = set()
    for r in range(n):
        for c in range(n):
            k = sum((r + dr, c + dc) in cells for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc)
            if k == 3 or (k == 2 and (r, c) in cells):
                out.add((r, c))
    return out


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


ID_LIFE = "games.life-v1"


def _life_fmt(cells: set[tuple[int, int]], n: int) -> str:
    return "\n".join("".join("#" if (r, c) in cells else "." for c in range(n)) for r in range(n))


def _life_draw(rng: random.Random, difficulty: int) -> Task:
    n, k = ((6, 1), (8, 2), (10, 3))[difficulty - 1]
    full = {(r, c) for r in range(n) for c in range(n)}
    while True:
        start = {p for p in full if rng.random() < 0.35}
        end = set(start)
        for _ in range(k):
            end = life_step(end, n)
        if end and jaccard(start, end) < 0.45 and jaccard(full, end) < 0.45:
            break
    prompt = (f"Conway's Game of Life on a {n}x{n} board ('#' alive, '.' dead; cells beyond the edge are always "
              f"dead). A live cell with 2 or 3 live neighbours survives; a dead cell with exactly 3 becomes alive; "
              f"all others die or stay dead.\n{_life_fmt(start, n)}\nGive the board after {k} generation(s). "
              f"Reply with only the {n} lines of the board.")
    return make_task(ID_LIFE, difficulty, prompt, answer=_life_fmt(end, n),
                     public={"start": _life_fmt(start, n), "n": n, "steps": k})


def _life_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    lines = [ln.strip().replace(" ", "") for ln in (answer_text(answer) or "").splitlines() if ln.strip()]
    if len(lines) != n or not all(re.fullmatch(rf"[#.]{{{n}}}", ln) for ln in lines):
        return fail(task.domain, f"not {n} lines of {n} '#'/'.' characters")
    got = {(r, c) for r, ln in enumerate(lines) for c, ch in enumerate(ln) if ch == "#"}
    want = {(r, c) for r, ln in enumerate(task.hidden["answer"].splitlines()) for c, ch in enumerate(ln) if ch == "#"}
    j = jaccard(got, want)
    value = 1.0 if got == want else max(0.0, (j - 0.5) / 0.5)
    return Score(value, components={"live_cells_jaccard": (j, 1.0)}, reason=f"Jaccard {j:.2f}",
                 verifier_version=task.domain)


def _life_probes(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return {"unchanged": task.public["start"], "all_alive": "\n".join(["#" * n] * n),
            "all_dead": "\n".join(["." * n] * n)}


register_domain(SingleTurnDomain(
    ID_LIFE, _life_draw, _life_check, _life_probes, description="""\
Conway's Game of Life: the board after k generations (cells outside are dead).

Answer: n lines of n characters, '#' alive and '.' dead. Reward from the Jaccard overlap J
of the live cells: max(0, (J - 0.5) / 0.5), exact = 1. Boards are drawn so that the start
board and the all-alive board both have J < 0.5 (so copying or filling earns 0). 6x6 one
step / 8x8 two steps / 10x10 three steps. Not covered: wrapping (toroidal) boards.
Probes: the start board unchanged, all alive, all dead.
"""))
