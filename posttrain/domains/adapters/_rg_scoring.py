"""The hardened wrapper around reasoning-gym scorers (see :mod:`.reasoning_gym`).

Pure functions: ``hardened_score`` never raises and returns a Score in {0, 1}; the shape
guards run before reasoning-gym's scorer sees the text, so a lenient scorer (substring search,
"first number wins", graded partial credit) cannot be gamed by padding or listing candidates.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from posttrain.core.types import Score
from posttrain.verifiers.text import extract_answer

_SPLIT = re.compile(r"[\s,;]+")


def _tokens(text: str) -> int:
    return len([t for t in _SPLIT.split(text.strip()) if t])


def _lines(text: str) -> int:
    return len([ln for ln in text.strip().splitlines() if ln.strip()])


def shape_guard(text: str, oracle: str) -> str | None:
    """Why ``text`` cannot be one clean answer shaped like ``oracle`` (None when it can)."""
    if not text:
        return "empty answer"
    if len(text) > 3 * len(oracle) + 64:
        return "answer too long for this task"
    if _lines(text) > max(1, _lines(oracle)):
        return "more lines than the answer has"
    n = _tokens(oracle)
    if _tokens(text) > (1 if n <= 1 else 2 * n + 1):
        return "more items than the answer has (padding or several candidates)"
    return None


def same_text(a: str, b: str) -> bool:
    """Equal up to surrounding whitespace and trailing spaces on each line."""
    norm = lambda t: "\n".join(ln.rstrip() for ln in t.strip().splitlines())  # noqa: E731
    return norm(a) == norm(b)


def hardened_score(scorer: Callable[[str, dict], Any], item: dict, answer: str, oracle: str,
                   version: str) -> Score:
    """1.0 only when the strictly extracted answer passes the guards and scores a full 1.0."""
    text = extract_answer(answer or "")
    why = shape_guard(text, oracle)
    if why is not None:
        return Score(0.0, components={"rg": (0.0, 1.0)}, reason=why, verifier_version=version)
    if same_text(text, oracle):  # the reference itself (reasoning-gym compares raw strings)
        return Score(1.0, components={"rg": (1.0, 1.0)}, reason="correct", verifier_version=version)
    try:
        raw = float(scorer(text, item))
    except Exception as exc:  # a scorer choking on a malformed answer: that answer is wrong
        return Score(0.0, components={"rg": (0.0, 1.0)},
                     reason=f"scorer rejected the answer ({type(exc).__name__})",
                     verifier_version=version)
    v = 1.0 if raw >= 1.0 - 1e-9 else 0.0
    return Score(v, components={"rg": (v, 1.0)},
                 reason="correct" if v else f"incorrect (reasoning-gym score {raw:.3g})",
                 verifier_version=version)


def padding_probes(oracle: str, other: str) -> dict[str, str]:
    """Answers that hold the right one among others; each must score 0.

    ``other`` is another task's answer. It is only ever used next to the oracle, never alone:
    on generators with many valid answers (colourings, move sequences) it may be right too.
    """
    out = {"oracle_twice": f"{oracle} {oracle}", "oracle_and_not": f"{oracle}, not {oracle}"}
    if other.strip() and not same_text(other, oracle):
        out.update({"oracle_or_other": f"{oracle} or {other}",
                    "other_then_oracle": f"{other}\n{oracle}"})
    return out
