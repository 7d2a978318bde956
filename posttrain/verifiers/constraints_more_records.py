"""Records in structured answers (CSV, markdown table, JSON Lines, XML, YAML) and the
constraint kinds over them (``rec_*``, ``yaml_*``), for :mod:`posttrain.verifiers.constraints_more`.

What it is: :func:`records` reads a structured answer as a list of flat dicts. CSV and
markdown tables are read by their header (values are strings); JSON Lines are typed; XML
records are the root's children (attributes plus the text of their sub-elements; DTDs,
entities and comments are refused, so nothing expands); YAML records are the list under a
named top-level key (typed; anchors, aliases and tags are refused, so an alias bomb cannot
expand). Parsing is strict: a stray line makes the answer unreadable (None).

:func:`check_records` decides: ``rec_count`` (exact), ``rec_keys`` (exact field set, in order
for tables), ``rec_filled`` (no empty value, no duplicate record), ``rec_attrs`` / ``rec_tag``
(XML), ``rec_int_range``, ``rec_unique``, ``rec_sorted``, ``rec_enum``, ``rec_seq`` (1..n),
``rec_pattern``, ``rec_sum``, ``rec_type`` (typed formats), ``yaml_top``, ``yaml_meta``.
Guarantees: total on any string (None / False, never an exception for bad input); parsing
bounded by :data:`MAX_CHARS` and cached per (text, format). Not covered: nested records,
CSV dialects, XML namespaces.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping

from posttrain.verifiers.constraints import MAX_CHARS


def lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()]


def _csv_records(t: str) -> list[dict[str, Any]] | None:
    try:
        rows = [[x.strip() for x in r] for r in csv.reader(io.StringIO(t)) if r]
    except csv.Error:
        return None
    if len(rows) < 2 or any(len(r) != len(rows[0]) for r in rows) or len(set(rows[0])) != len(rows[0]):
        return None
    return [dict(zip(rows[0], r)) | {"__keys__": rows[0]} for r in rows[1:]]


def _md_records(t: str) -> list[dict[str, Any]] | None:
    ls = lines(t)
    if len(ls) < 3 or not all(ln.startswith("|") and ln.endswith("|") for ln in ls):
        return None
    cells = [[x.strip() for x in ln[1:-1].split("|")] for ln in ls]
    if not all(re.fullmatch(r":?-{3,}:?", x) for x in cells[1]) or any(len(r) != len(cells[0]) for r in cells):
        return None
    head = cells[0]
    return [dict(zip(head, r)) | {"__keys__": head} for r in cells[2:]]


def _jsonl_records(t: str) -> list[dict[str, Any]] | None:
    out = []
    for ln in lines(t):
        try:
            obj = json.loads(ln)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        out.append(obj | {"__keys__": list(obj)})
    return out or None


def _xml_records(t: str, root: str) -> list[dict[str, Any]] | None:
    if "<!" in t:  # no DTDs, entities or comments: nothing to expand
        return None
    try:
        el = ET.fromstring(t)
    except ET.ParseError:
        return None
    if el.tag != root:
        return None
    out = []
    for ch in el:
        rec: dict[str, Any] = {"__tag__": ch.tag, "__attrs__": sorted(ch.attrib), **ch.attrib}
        for sub in ch:
            rec[sub.tag] = (sub.text or "").strip()
        rec["__keys__"] = [k for k in rec if not k.startswith("__")]
        out.append(rec)
    return out


# The tasks' documents are a few KB. PyYAML's pure-Python loader takes ~13 s a MB; its libyaml
# loader is faster but overflows the C stack (a segfault) on 50,000 nested brackets.
MAX_YAML_CHARS = 64_000


def _yaml_doc(t: str) -> Any:
    """The parsed document, or None: too long, anchors/aliases/tags, not YAML, or nested past
    the recursion limit (a hostile answer must cost milliseconds, not the verifier's time)."""
    if len(t) > MAX_YAML_CHARS or re.search(r"(^|[\s:\[{,-])[&*!]", t):  # anchors, aliases, tags
        return None
    import yaml

    try:
        return yaml.safe_load(t)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


@functools.lru_cache(maxsize=64)
def _records_cached(t: str, fmt: str, arg: str) -> tuple | None:
    if fmt == "csv":
        recs = _csv_records(t)
    elif fmt == "md":
        recs = _md_records(t)
    elif fmt == "jsonl":
        recs = _jsonl_records(t)
    elif fmt == "xml":
        recs = _xml_records(t, arg)
    else:
        doc = _yaml_doc(t)
        lst = doc.get(arg) if isinstance(doc, dict) else None
        recs = [r | {"__keys__": list(r)} for r in lst] if isinstance(lst, list) and all(
            isinstance(r, dict) for r in lst) else None
    return None if recs is None else tuple(json.dumps(r, sort_keys=True, default=str) for r in recs)


def records(text: str, fmt: str, arg: str = "") -> list[dict[str, Any]] | None:
    """The answer's records (see the module docstring), or None when it does not parse."""
    if len(text) > MAX_CHARS:
        return None
    try:
        got = _records_cached(text.strip(), fmt, arg)
    except (TypeError, ValueError, RecursionError):  # e.g. YAML keys of mixed types
        return None
    return None if got is None else [json.loads(r) for r in got]


TYPED = ("jsonl", "yaml")


def _as_int(v: Any, fmt: str) -> int | None:
    if fmt in TYPED:
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    return int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else None


def _type_ok(v: Any, ty: str) -> bool:
    return {"integer": lambda: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda: isinstance(v, (int, float)) and not isinstance(v, bool),
            "string": lambda: isinstance(v, str), "boolean": lambda: isinstance(v, bool),
            "list": lambda: isinstance(v, list) and all(isinstance(x, str) for x in v)}.get(ty, lambda: False)()


def check_records(t: str, k: str, c: Mapping[str, Any]) -> bool | None:
    if not k.startswith("rec_"):
        return _check_yaml(t, k, c)
    fmt = c["fmt"]
    recs = records(t, fmt, c.get("arg", ""))
    if recs is None:
        return False
    key = c.get("key")
    vals = [r.get(key) for r in recs] if key else []
    if k == "rec_count":
        return len(recs) == c["n"]
    if k == "rec_keys":
        return bool(recs) and all(r["__keys__"] == list(c["keys"]) if c.get("ordered") else
                                  sorted(r["__keys__"]) == sorted(c["keys"]) for r in recs)
    if k == "rec_filled":
        plain = [json.dumps({a: b for a, b in r.items() if not a.startswith("__")}, sort_keys=True) for r in recs]
        return bool(recs) and len(set(plain)) == len(plain) and all(
            v not in ("", None, [], {}) for r in recs for a, v in r.items() if not a.startswith("__"))
    if k == "rec_attrs":
        return bool(recs) and all(r.get("__attrs__") == sorted(c["names"]) for r in recs)
    if k == "rec_tag":
        return bool(recs) and all(r.get("__tag__") == c["tag"] for r in recs)
    if k == "rec_int_range":
        ints = [_as_int(v, fmt) for v in vals]
        return bool(ints) and all(i is not None and c["lo"] <= i <= c["hi"] for i in ints)
    if k == "rec_unique":
        return bool(vals) and None not in vals and len({json.dumps(v) for v in vals}) == len(vals)
    if k == "rec_sorted":
        ints = [_as_int(v, fmt) for v in vals]
        keys = ints if None not in ints else [str(v) for v in vals]
        return bool(vals) and None not in vals and keys == sorted(keys)
    if k == "rec_enum":
        return bool(vals) and all(v in c["values"] for v in vals)
    if k == "rec_seq":
        return [_as_int(v, fmt) for v in vals] == list(range(1, len(vals) + 1)) and bool(vals)
    if k == "rec_pattern":
        return bool(vals) and all(isinstance(v, str) and re.fullmatch(c["regex"], v) for v in vals)
    if k == "rec_sum":
        ints = [_as_int(v, fmt) for v in vals]
        return bool(ints) and None not in ints and sum(ints) == c["total"]
    if k == "rec_type":
        return bool(vals) and all(_type_ok(v, c["type"]) for v in vals)
    return None


def _check_yaml(t: str, k: str, c: Mapping[str, Any]) -> bool | None:
    if k == "yaml_top":
        doc = _yaml_doc(t)
        return isinstance(doc, dict) and sorted(map(str, doc)) == sorted(c["keys"])
    if k == "yaml_meta":
        doc = _yaml_doc(t)
        meta = doc.get(c["key"]) if isinstance(doc, dict) else None
        return isinstance(meta, dict) and all(meta.get(a) == b and type(meta.get(a)) is type(b)
                                              for a, b in c["values"].items())
    return None
