"""Strict parsing and comparison of structured answers: lists, assignments, JSON, CSV, XML.

What it is: the pure scoring helpers the logic, algorithms and text_data domains share.

Guarantees:
- every ``parse_*`` returns ``None`` (never raises) on text that is not exactly the asked
  format; an answer padded with extra candidates or prose therefore fails to parse;
- every ``*_score`` returns a float in [0, 1] and is 0 when the item count differs from the
  expected one, so listing many candidates never earns partial credit;
- JSON comparison treats ``1`` and ``1.0`` as equal but ``1`` and ``"1"`` as different, and
  ``True`` never equals ``1``.

Not covered: fuzzy text similarity (on purpose: it rewards padding), XML namespaces,
CSV dialects other than the default comma/double-quote one.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any, Iterable, Mapping

from posttrain.verifiers.text import extract_answer

MAX_ANSWER_CHARS = 20_000
# At most 1000 digits: int() refuses more than 4300 (ValueError), and no answer needs them.
_INT = re.compile(r"^[+-]?\d{1,1000}$")
_FENCE = re.compile(r"^```[a-zA-Z]*\n?(.*?)\n?```$", re.S)


def answer_text(answer: str) -> str | None:
    """The final answer (``<answer>`` block or whole text), stripped; None when absurdly long."""
    text = extract_answer(answer or "")
    if len(text) > MAX_ANSWER_CHARS:
        return None
    m = _FENCE.match(text)
    return m.group(1).strip() if m else text


def split_items(text: str | None, sep: str | None = ",") -> list[str] | None:
    """Items of a list written ``a, b, c`` (optionally in ``[...]``); ``sep=None`` splits on spaces."""
    if text is None:
        return None
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1].strip()
    if not t:
        return []
    parts = t.split() if sep is None else [p.strip() for p in t.split(sep)]
    return None if any(p == "" for p in parts) else parts


def parse_int_list(answer: str, sep: str | None = ",") -> list[int] | None:
    """Integers separated by ``sep`` (commas by default), optionally bracketed; else None."""
    items = split_items(answer_text(answer), sep)
    if items is None or any(not _INT.match(p) for p in items):
        return None
    return [int(p) for p in items]


def parse_int(answer: str) -> int | None:
    """A single integer and nothing else."""
    t = answer_text(answer)
    return int(t) if t is not None and _INT.match(t) else None


def parse_word_list(answer: str, sep: str | None = ",", *, lower: bool = True) -> list[str] | None:
    """Words separated by ``sep``; every item must be a single token of ``[A-Za-z0-9_-]``."""
    items = split_items(answer_text(answer), sep)
    if items is None or any(not re.fullmatch(r"[A-Za-z0-9_\-]+", p) for p in items):
        return None
    return [p.lower() for p in items] if lower else items


def parse_assignment(answer: str, names: Iterable[str], values: Iterable[str] | None = None,
                     *, lower: bool = True) -> dict[str, str] | None:
    """``name=value`` pairs (comma, semicolon or space separated), each name exactly once.

    Returns None when a name is missing, repeated or unknown, or a value is not in ``values``.
    """
    t = answer_text(answer)
    if t is None:
        return None
    want = [n.lower() if lower else n for n in names]
    allowed = None if values is None else {v.lower() if lower else v for v in values}
    out: dict[str, str] = {}
    for part in re.split(r"[,;\s]+", t.strip()):
        if not part:
            continue
        if part.count("=") != 1:
            return None
        k, v = (s.strip() for s in part.split("="))
        if lower:
            k, v = k.lower(), v.lower()
        if k not in want or k in out or (allowed is not None and v not in allowed) or not v:
            return None
        out[k] = v
    return out if len(out) == len(want) else None


def sequence_score(got: list[Any] | None, expected: list[Any]) -> float:
    """Fraction of positions equal; 0 when ``got`` is None or has a different length."""
    if got is None or len(got) != len(expected):
        return 0.0
    if not expected:
        return 1.0
    return sum(g == e for g, e in zip(got, expected)) / len(expected)


def agreement_score(got: list[Any] | None, expected: list[Any]) -> float:
    """Chance-corrected accuracy for binary items: ``max(0, 2*acc - 1)``.

    A coin flip (or answering the same value everywhere on a balanced list) earns about 0.
    """
    return max(0.0, 2.0 * sequence_score(got, expected) - 1.0) if got is not None else 0.0


def baseline_corrected_score(got: list[Any] | None, expected: list[Any]) -> float:
    """Accuracy above the majority-label baseline, rescaled to [0, 1] (a Cohen-kappa-like score).

    Answering the most common label everywhere, or a coin flip, earns about 0; a perfect
    answer earns 1. When every expected label is the same, only a perfect answer earns credit.
    """
    acc = sequence_score(got, expected)
    if acc == 1.0 or not expected:
        return acc
    base = max(expected.count(x) for x in set(expected)) / len(expected)
    return max(0.0, (acc - base) / (1.0 - base)) if base < 1.0 else 0.0


# JSON -------------------------------------------------------------------------------------

def parse_json(answer: str) -> tuple[bool, Any]:
    """``(True, value)`` when the answer is exactly one JSON document, else ``(False, None)``."""
    t = answer_text(answer)
    if t is None:
        return False, None
    try:
        return True, json.loads(t)
    except (ValueError, RecursionError):
        return False, None


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality; numbers compare by value (1 == 1.0), bools never equal numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{prefix}.{k}"))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def json_field_score(got: Any, expected: Any) -> float:
    """Leaf-level agreement: matched leaves / max(expected leaves, answered leaves).

    Extra keys or elements lower the score (they enlarge the denominator), so padding an
    object with guesses never helps.
    """
    g, e = _leaves(got), _leaves(expected)
    if not e:
        return 1.0 if json_equal(got, expected) else 0.0
    hit = sum(1 for k, v in e.items() if k in g and json_equal(g[k], v))
    return hit / max(len(e), len(g))


def records_score(got: Any, expected: list[Mapping[str, Any]]) -> float:
    """Mean field score over a list of records; 0 when not a list of the same length."""
    if not isinstance(got, list) or len(got) != len(expected):
        return 0.0
    if not expected:
        return 1.0
    return sum(json_field_score(g, e) for g, e in zip(got, expected)) / len(expected)


# CSV --------------------------------------------------------------------------------------

def parse_csv(answer: str) -> list[list[str]] | None:
    """Rows of a comma-separated table (surrounding whitespace of cells ignored); None if empty."""
    t = answer_text(answer)
    if not t:
        return None
    try:
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO(t)) if r]
    except csv.Error:
        return None
    return rows or None


def csv_cell_score(got: list[list[str]] | None, expected: list[list[str]]) -> float:
    """Fraction of cells equal; 0 unless the shape (rows x columns) is exactly the expected one."""
    if got is None or len(got) != len(expected):
        return 0.0
    if any(len(g) != len(e) for g, e in zip(got, expected)):
        return 0.0
    cells = [(g, e) for gr, er in zip(got, expected) for g, e in zip(gr, er)]
    return sum(g == e for g, e in cells) / len(cells) if cells else 1.0


# XML --------------------------------------------------------------------------------------

def parse_xml(answer: str) -> ET.Element | None:
    """One well-formed XML element (no DTDs or entities beyond the built-in five), else None."""
    t = answer_text(answer)
    if not t or "<!DOCTYPE" in t.upper() or "<!ENTITY" in t.upper():
        return None
    try:
        return ET.fromstring(t)
    except (ET.ParseError, UnicodeEncodeError):  # lone surrogates (undecodable model output)
        return None


def _canon(el: ET.Element) -> tuple[Any, ...]:
    return (el.tag, tuple(sorted(el.attrib.items())), (el.text or "").strip(),
            tuple(_canon(c) for c in el))


def xml_equal(a: ET.Element | None, b: ET.Element | None) -> bool:
    """Same tags, attributes (any order), stripped text and children in order."""
    return a is not None and b is not None and _canon(a) == _canon(b)


def xml_child_score(got: ET.Element | None, expected: ET.Element) -> float:
    """Fraction of the expected root's children reproduced exactly, in order; 0 if the root
    tag/attributes differ or the child count differs."""
    if got is None or got.tag != expected.tag or got.attrib != expected.attrib:
        return 0.0
    g, e = list(got), list(expected)
    if len(g) != len(e):
        return 0.0
    if not e:
        return 1.0 if xml_equal(got, expected) else 0.0
    return sum(_canon(x) == _canon(y) for x, y in zip(g, e)) / len(e)
