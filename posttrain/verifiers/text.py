"""Text and number normalisation, and the strict answer-matching verifiers built on them.

Guarantees: every function here is pure and total (never raises on any string) and returns a
value in [0, 1]. Matching is *strict* on purpose: an answer padded with extra candidates
("46 47 48") does not match "46" — partial credit for padding is a reward hack.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_WS = re.compile(r"\s+")


def extract_answer(text: str) -> str:
    """The final answer in a completion: the last ``<answer>...</answer>`` block, else the whole text, stripped."""
    tags = _ANSWER_TAG.findall(text or "")
    return (tags[-1] if tags else (text or "")).strip()


def normalize_text(text: str, *, case: bool = False) -> str:
    """Collapse whitespace; lower-case unless ``case``."""
    out = _WS.sub(" ", (text or "").strip())
    return out if case else out.lower()


def exact_match(answer: str, expected: str, *, case: bool = False) -> float:
    return 1.0 if normalize_text(extract_answer(answer), case=case) == normalize_text(expected, case=case) else 0.0


_NUM = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """A single number written plainly (thousands separators allowed); None for anything else."""
    t = (text or "").strip().replace(",", "").replace("_", "")
    if len(t) > 64 or not _NUM.match(t):
        return None
    try:
        v = float(Decimal(t))
    except (InvalidOperation, ValueError):
        return None
    return v if math.isfinite(v) else None


def numeric_match(answer: str, expected: float, *, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> float:
    """1.0 when the answer is one number within tolerance of ``expected``, else 0.0."""
    v = parse_number(extract_answer(answer))
    if v is None:
        return 0.0
    return 1.0 if math.isclose(v, float(expected), rel_tol=rel_tol, abs_tol=abs_tol) else 0.0
