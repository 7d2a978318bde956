"""Game domains: reference 1.0, exploits at the floor, rule-based scoring and partial credit."""

from __future__ import annotations

import pytest

import posttrain.domains.games  # noqa: F401  (registers the domains)
from posttrain.domains.base import DOMAINS, sample_task
from posttrain.domains.games.numbers import parse_expr
from posttrain.domains.math_ext._selfcheck import check_domain_quick

IDS = sorted(i for i in DOMAINS.ids() if i.startswith("games."))


def test_family_size():
    assert len(IDS) >= 15


@pytest.mark.parametrize("dom_id", IDS)
def test_self_check(dom_id):
    assert check_domain_quick(DOMAINS.get(dom_id), range(3)) == []


def task(dom_id, seed=0, d=1):
    dom = DOMAINS.get(dom_id)
    return dom, sample_task(dom, seed, d)


def test_longer_plans_get_half_scaled_credit():
    dom, t = task("games.hanoi-v1", 1, 1)
    ref = dom.solve(t)
    a, b = ref.split(", ")[0].split("->")
    detour = f"{a}->{b}, {b}->{a}, " + ref  # a wasted round trip first
    opt = t.hidden["optimal"]
    assert dom.score(t, detour).value == pytest.approx(0.5 * opt / (opt + 2))
    dom, t = task("games.maze-v1", 2, 2)
    ref = dom.solve(t).split(", ")
    assert dom.score(t, ", ".join(ref[:-1])).value == 0.0


def test_illegal_moves_score_zero():
    dom, t = task("games.sliding-v1", 0, 2)
    assert dom.score(t, "U, U, U, U").value == 0.0
    dom, t = task("games.water_jug-v1", 0, 1)
    assert dom.score(t, "fill A, pour A A").value == 0.0


def test_any_optimal_move_accepted():
    dom, t = task("games.tictactoe-v1", 3, 2)
    for mv in t.hidden["optimal"]:
        assert dom.score(t, str(mv)).value == 1.0
    for mv in t.hidden["suboptimal"]:
        assert dom.score(t, str(mv)).value == 0.0
    dom, t = task("games.nim-v1", 1, 3)
    assert dom.score(t, dom.solve(t)).value == 1.0


def test_sudoku_partial_credit_is_cubic():
    dom, t = task("games.sudoku-v1", 0, 2)
    sol, puz = list(t.hidden["solution"]), t.public["puzzle"]
    blanks = [i for i, p in enumerate(puz) if not p]
    sol[blanks[0]], sol[blanks[1]] = sol[blanks[0]] % 9 + 1, sol[blanks[1]] % 9 + 1
    text = "\n".join("".join(map(str, sol[r * 9:(r + 1) * 9])) for r in range(9))
    frac = (len(blanks) - 2) / len(blanks)
    assert dom.score(t, text).value == pytest.approx(frac ** 3)


def test_nqueens_and_knights_partial():
    dom, t = task("games.nqueens-v1", 0, 2)
    cols = [int(c) for c in dom.solve(t).split(", ")]
    free = [r for r in range(len(cols)) if str(r + 1) not in t.public["fixed"]]
    i, j = free[0], free[1]
    cols[i], cols[j] = cols[j], cols[i]
    s = dom.score(t, ", ".join(map(str, cols))).value
    assert 0.0 <= s < 1.0
    dom, t = task("games.knights_tour-v1", 0, 1)
    half = dom.solve(t).split(", ")[:12]
    assert dom.score(t, ", ".join(half)).value == pytest.approx(0.5 * (12 / 25) ** 2)


def test_life_partial_and_game24_parser():
    dom, t = task("games.life-v1", 0, 1)
    rows = [list(r) for r in dom.solve(t).splitlines()]
    live = [(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "#"]
    r, c = live[0]
    rows[r][c] = "."
    assert 0 < dom.score(t, "\n".join("".join(x) for x in rows)).value < 1
    assert parse_expr("(8 - 2) * (3 + 1)")[0] == 24
    assert parse_expr("8 / (3 - 8 / 3)")[0] == 24
    for bad in ["__import__('os')", "2 ** 3", "1 / 0", "-3 + 4", "(1 + 2", "1 + 2)"]:
        assert parse_expr(bad) is None
