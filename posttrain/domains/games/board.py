"""Board and strategic games with a checkable best move: tic-tac-toe, connect four, nim,
reversi (most flips) and pure Nash equilibria of bimatrix games.

Every answer is one move (or one set of cells) checked by the game's rules, not against one
stored move: any move of optimal value scores 1. Positions are drawn so that some legal
moves are *not* optimal (a random legal move is not a free reward).
"""

from __future__ import annotations

import functools
import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain

from ..math_ext._kit import answer_text, check, fail, parse_int

LINES3 = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def ttt_winner(b: str) -> str | None:
    for a, c, d in LINES3:
        if b[a] != "." and b[a] == b[c] == b[d]:
            return b[a]
    return None


@functools.lru_cache(maxsize=None)
def ttt_value(b: str, player: str) -> int:
    """Minimax value for ``player`` to move: +1 win, 0 draw, -1 loss."""
    w = ttt_winner(b)
    if w:
        return 1 if w == player else -1
    if "." not in b:
        return 0
    other = "O" if player == "X" else "X"
    return max(-ttt_value(b[:i] + player + b[i + 1:], other) for i in range(9) if b[i] == ".")


def ttt_move_values(b: str, player: str) -> dict[int, int]:
    other = "O" if player == "X" else "X"
    return {i + 1: -ttt_value(b[:i] + player + b[i + 1:], other) for i in range(9) if b[i] == "."}


ID_TICTACTOE = "games.tictactoe-v1"


def _tictactoe_draw(rng: random.Random, difficulty: int) -> Task:
    lo, hi = ((5, 6), (3, 4), (1, 2))[difficulty - 1]
    while True:
        b, player = ["."] * 9, "X"
        for _ in range(rng.randint(lo, hi)):
            b[rng.choice([i for i in range(9) if b[i] == "."])] = player
            player = "O" if player == "X" else "X"
        s = "".join(b)
        if ttt_winner(s):
            continue
        vals = ttt_move_values(s, player)
        if len(set(vals.values())) > 1:
            break
    best = max(vals.values())
    grid = "\n".join(" ".join(s[r * 3:r * 3 + 3]) for r in range(3))
    prompt = (f"Tic-tac-toe. '.' is empty. Cells are numbered 1-9 row by row from the top left.\n{grid}\n"
              f"It is {player}'s turn. Give a move with the best possible outcome for {player} under perfect "
              f"play by both sides. Reply with only the cell number.")
    optimal = sorted(k for k, v in vals.items() if v == best)
    return make_task(ID_TICTACTOE, difficulty, prompt, public={"board": s, "player": player},
                     hidden={"optimal": optimal, "suboptimal": sorted(k for k in vals if k not in optimal)})


def _tictactoe_reference(task: Task) -> str:
    return str(task.hidden["optimal"][0])


def _tictactoe_check(task: Task, answer: str) -> Score:
    mv = parse_int(answer_text(answer))
    if mv is None or not 1 <= mv <= 9 or task.public["board"][mv - 1] != ".":
        return fail(task.domain, "not an empty cell number 1-9", name="legal")
    return check(task.domain, mv in task.hidden["optimal"], name="optimal")


def _tictactoe_probes(task: Task) -> dict[str, str]:
    b = task.public["board"]
    occ = [i + 1 for i in range(9) if b[i] != "."]
    return {"occupied": str(occ[0]), "suboptimal": str(task.hidden["suboptimal"][0]), "zero": "0", "ten": "10"}


register_domain(SingleTurnDomain(
    ID_TICTACTOE, _tictactoe_draw, _tictactoe_check, _tictactoe_probes,
    reference=_tictactoe_reference, description="""\
Pick an optimal move (minimax) in a tic-tac-toe position.

Cells are numbered 1-9 row by row; any move with the best minimax value scores 1, any other
legal or illegal move 0. d1: 5-6 stones placed (often a win or block), d2: 3-4, d3: 1-2
(deeper look-ahead). Not covered: misère rules, larger boards. Probes: an occupied cell, a
legal but suboptimal move, "0", "10".
"""))


ROWS, COLS = 6, 7


def c4_drop(board: list[list[str]], col: int, piece: str) -> int | None:
    for r in range(ROWS - 1, -1, -1):
        if board[r][col] == ".":
            board[r][col] = piece
            return r
    return None


def c4_wins_at(board: list[list[str]], r: int, c: int) -> bool:
    p = board[r][c]
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            rr, cc = r + s * dr, c + s * dc
            while 0 <= rr < ROWS and 0 <= cc < COLS and board[rr][cc] == p:
                n, rr, cc = n + 1, rr + s * dr, cc + s * dc
        if n >= 4:
            return True
    return False


def c4_winning_cols(rows: list[str], piece: str) -> list[int]:
    out = []
    for c in range(COLS):
        b = [list(r) for r in rows]
        r = c4_drop(b, c, piece)
        if r is not None and c4_wins_at(b, r, c):
            out.append(c + 1)
    return out


ID_CONNECT4 = "games.connect4-v1"


def _connect4_draw(rng: random.Random, difficulty: int) -> Task:
    lo, hi = ((8, 14), (14, 22), (22, 32))[difficulty - 1]
    while True:
        b = [["."] * COLS for _ in range(ROWS)]
        piece, ok, n = "X", True, rng.randint(lo, hi)
        for _ in range(n):
            cols = [c for c in range(COLS) if b[0][c] == "."]
            c = rng.choice(cols)
            r = c4_drop(b, c, piece)
            if c4_wins_at(b, r, c):
                ok = False
                break
            piece = "O" if piece == "X" else "X"
        rows = ["".join(r) for r in b]
        if not ok:
            continue
        wins = c4_winning_cols(rows, piece)
        legal = [c + 1 for c in range(COLS) if rows[0][c] == "."]
        if wins and len(wins) < len(legal):
            break
    grid = "\n".join(" ".join(r) for r in rows)
    prompt = (f"Connect Four (6 rows x 7 columns, pieces fall to the lowest empty cell; '.' is empty; columns "
              f"numbered 1-7 left to right):\n{grid}\nIt is {piece}'s turn. Give a column where {piece} wins "
              f"immediately (four in a row). Reply with only the column number.")
    return make_task(ID_CONNECT4, difficulty, prompt, public={"rows": rows, "piece": piece},
                     hidden={"wins": wins, "non_winning": [c for c in legal if c not in wins]})


def _connect4_reference(task: Task) -> str:
    return str(task.hidden["wins"][0])


def _connect4_check(task: Task, answer: str) -> Score:
    c = parse_int(answer_text(answer))
    rows = task.public["rows"]
    if c is None or not 1 <= c <= COLS or rows[0][c - 1] != ".":
        return fail(task.domain, "not a playable column 1-7", name="legal")
    return check(task.domain, c in c4_winning_cols(rows, task.public["piece"]), name="wins")


def _connect4_probes(task: Task) -> dict[str, str]:
    return {"non_winning": str(task.hidden["non_winning"][0]), "zero": "0", "eight": "8"}


register_domain(SingleTurnDomain(
    ID_CONNECT4, _connect4_draw, _connect4_check, _connect4_probes, reference=_connect4_reference, description="""\
Find a column that wins immediately in a Connect Four position.

Pieces fall to the lowest empty row; the answer is a column 1-7; scored by dropping the
piece and checking four in a row. Positions come from random play with 8-14 / 14-22 /
22-32 pieces (more clutter = harder to see). Not covered: multi-move threats. Probes: a
legal non-winning column, "0", "8".
"""))


ID_NIM = "games.nim-v1"


def _nim_outcome(heaps: list[int], mv: list[int] | None) -> bool | None:
    if mv is None or not 1 <= mv[0] <= len(heaps) or not 1 <= mv[1] <= heaps[mv[0] - 1]:
        return None
    after = list(heaps)
    after[mv[0] - 1] -= mv[1]
    x = 0
    for h in after:
        x ^= h
    return x == 0


def _nim_draw(rng: random.Random, difficulty: int) -> Task:
    k, hi = ((3, 7), (4, 15), (5, 31))[difficulty - 1]
    while True:
        heaps = [rng.randint(0 if difficulty > 1 else 1, hi) for _ in range(k)]
        x = 0
        for h in heaps:
            x ^= h
        if x and sum(heaps) > 2:
            break
    prompt = (f"Nim with heaps {heaps} (heap 1 is the first). Players alternately remove one or more objects from "
              f"a single heap; whoever takes the last object wins. Give a move after which you can force a win. "
              f"Reply with only 'heap count' (two integers: the heap number and how many objects to remove).")
    return make_task(ID_NIM, difficulty, prompt, public={"heaps": heaps})


def _nim_reference(task: Task) -> str:
    heaps = task.public["heaps"]
    for i, h in enumerate(heaps):
        for take in range(1, h + 1):
            if _nim_outcome(heaps, [i + 1, take]):
                return f"{i + 1} {take}"
    raise AssertionError("generated a losing position")


def _nim_check(task: Task, answer: str) -> Score:
    parts = (answer_text(answer) or "").split()
    got = [parse_int(p) for p in parts] if len(parts) == 2 else None
    got = None if got is None or None in got else got
    res = _nim_outcome(task.public["heaps"], got)
    if res is None:
        return fail(task.domain, "not a legal 'heap count' move", name="legal")
    return check(task.domain, res, name="winning")


def _nim_probes(task: Task) -> dict[str, str]:
    heaps = task.public["heaps"]
    out = {"take_zero": "1 0"}
    for i, h in enumerate(heaps):
        for take in range(1, h + 1):
            if _nim_outcome(heaps, [i + 1, take]) is False:
                out["losing"] = f"{i + 1} {take}"
                break
        if "losing" in out:
            break
    empty = [i + 1 for i, h in enumerate(heaps) if h == 0]
    if empty:
        out["empty_heap"] = f"{empty[0]} 1"
    return out


register_domain(SingleTurnDomain(
    ID_NIM, _nim_draw, _nim_check, _nim_probes, reference=_nim_reference, description="""\
Normal-play Nim: give a winning move ``heap count`` (remove count from heap).

Scored by the rules: legal and leaving nim-sum 0. 3 heaps up to 7 / 4 heaps up to 15 /
5 heaps up to 31; the position is always winning. Not covered: misère Nim, other
impartial games. Probes: a legal losing move, taking from an empty heap, "1 0".
"""))
