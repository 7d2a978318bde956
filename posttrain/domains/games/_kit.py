"""The games kit: replaying a move list and finding shortest plans, shared by the planning domains.

What it is: :func:`plan_score` (replay a move list with a step function; the shared reward),
:func:`bfs` (a shortest move list by breadth-first search), :func:`split_moves` (parse a
comma-separated move list) and ``DIRS`` (grid moves U/D/L/R).

The shared reward: 0 for an unparseable list or an illegal move; 0 when the goal is not
reached; 1 for a shortest plan; ``0.5 * optimal / length`` for a longer valid plan (reaching
the goal is what matters; optimality is the rest). Guarantees: a replay stops at the first
illegal move and never runs more than ``MAX_MOVES`` moves; :func:`bfs` explores at most
``limit`` states (None beyond).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Callable, Hashable, Iterable

from posttrain.core.types import Score

from ..math_ext._kit import fail

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


DIRS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
