"""The hardened wrapper around reasoning-gym scorers (see :mod:`.reasoning_gym`).

Pure functions: ``hardened_score`` never raises and returns a Score in {0, 1}. A lenient
scorer (substring search, "first number wins", graded partial credit, ``a or b`` evaluated
as Python) cannot be gamed by padding or by listing candidates: shape guards run before it,
only a full 1.0 counts, and an accepted answer is rejected again when one of its proper parts
(a run of as many tokens as the reference has, or a comma/line/"or"-separated piece) is
accepted on its own.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from posttrain.core.types import Score
from posttrain.verifiers.text import extract_answer

_TOKEN = re.compile(r"\S+")
_PART = re.compile(r"[,;\n]|\s(?:or|and)\s", re.I)
MAX_PARTS = 256


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
    return None


def sub_answers(text: str, oracle: str) -> list[str]:
    """Proper parts of ``text`` that could each be a whole answer: every run of as many
    whitespace-separated tokens as the oracle has, and every comma/semicolon/line/"or"/"and"
    separated piece. Empty when ``text`` has no more tokens than the oracle."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    k = max(1, len(_TOKEN.findall(oracle)))
    if len(spans) <= k:
        return []
    out: dict[str, None] = {}
    for i in range(len(spans) - k + 1):
        piece = text[spans[i][0]:spans[i + k - 1][1]]
        out[piece] = None
        out[piece.strip(",;.")] = None
    for piece in _PART.split(text):
        out[piece.strip()] = None
    out.pop(text.strip(), None)
    out.pop("", None)
    return list(out)[:MAX_PARTS]


def _full(scorer: Callable[[str, dict], Any], text: str, item: dict) -> bool:
    try:
        return float(scorer(text, item)) >= 1.0 - 1e-9
    except Exception:  # noqa: BLE001 - a part the scorer cannot read is not an answer
        return False


def same_text(a: str, b: str) -> bool:
    """Equal up to surrounding whitespace and trailing spaces on each line."""
    norm = lambda t: "\n".join(ln.rstrip() for ln in t.strip().splitlines())  # noqa: E731
    return norm(a) == norm(b)


def hardened_score(scorer: Callable[[str, dict], Any], item: dict, answer: str, oracle: str,
                   version: str) -> Score:
    """1.0 only when the strictly extracted answer passes the guards, scores a full 1.0, and
    no proper part of it would score 1.0 on its own (padding around a right answer)."""
    zero = lambda why: Score(0.0, components={"rg": (0.0, 1.0)}, reason=why,  # noqa: E731
                             verifier_version=version)
    text = extract_answer(answer or "")
    why = shape_guard(text, oracle)
    if why is not None:
        return zero(why)
    if not same_text(text, oracle):
        try:
            raw = float(scorer(text, item))
        except Exception as exc:  # a scorer choking on a malformed answer: that answer is wrong
            return zero(f"scorer rejected the answer ({type(exc).__name__})")
        if raw < 1.0 - 1e-9:
            return zero(f"incorrect (reasoning-gym score {raw:.3g})")
    for part in sub_answers(text, oracle):
        if same_text(part, oracle) or _full(scorer, part, item):
            return zero("a part of the answer is already the whole answer (padding)")
    return Score(1.0, components={"rg": (1.0, 1.0)}, reason="correct", verifier_version=version)


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
