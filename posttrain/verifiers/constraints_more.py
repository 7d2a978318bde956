"""More verifiable instruction constraints: exact counts, line forms (acrostic, alliteration,
line length, rhyme-free endings), lipograms, spelled-out numbers, outlines, per-section
casing, delimited parts, highlights, phrase placement and order, e-mail headers, and records
in structured formats (CSV, markdown table, JSON Lines, XML, YAML).

What it is: the same plain-dict constraints as :mod:`posttrain.verifiers.constraints`
(``{"kind": ..., ...}``); :func:`check_any` decides any kind of either module and
:func:`describe_any` phrases it. :func:`score_any` gives the fraction of constraints met
behind a gate: every ``"gate": true`` constraint must hold, and either the prose substance
gate of :func:`posttrain.verifiers.constraints.substance` (``gate="prose"``, applied after
:func:`_plain` removes the markup these constraints legitimately ask for: ``<<title>>``,
``*highlights*``, e-mail addresses, a wrapping pair of quotes) or, for structured output
(``gate="structured"``), a non-echo check (at most 30 % of the answer's word 4-grams in the
prompt) plus at least three records.

Records (:func:`records`): a structured answer read as a list of flat dicts. CSV and
markdown tables are read by their header (values are strings); JSON Lines are typed; XML
records are the root's children (attributes plus the text of their sub-elements); YAML
records are the list under a named top-level key (typed; anchors and aliases are refused, so
an alias bomb cannot expand). Parsing is strict: a stray line makes the answer unreadable.

Not covered: fluency, truth, rhyme beyond a spelling proxy (two line endings "rhyme" when
their last two letters agree). Guarantees: every function is total on any string, values in
[0, 1], parsing bounded by :data:`MAX_CHARS`.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score
from posttrain.verifiers import constraints as base
from posttrain.verifiers.constraints import count_word, paragraphs, words

MAX_CHARS = base.MAX_CHARS
_SENT = re.compile(r"[^.!?]+[.!?]")
_HILITE = re.compile(r"(?<![*\w])\*[^*\n]+\*(?![*\w])")
_EMAIL = re.compile(r"\b[a-z][a-z0-9.]*@[a-z0-9]+(?:\.[a-z]+)+\b")
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spell(n: int) -> str:
    """English words for 0 <= n < 1,000,000 (``forty-two``, ``one thousand two hundred five``)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return ONES[n // 100] + " hundred" + (" " + spell(n % 100) if n % 100 else "")
    return spell(n // 1000) + " thousand" + (" " + spell(n % 1000) if n % 1000 else "")


def spelled_pattern(n: int) -> re.Pattern:
    """The spelled number with any of space/hyphen between parts and an optional "and"."""
    parts = re.split(r"[\s-]+", spell(n))
    return re.compile(r"(?<![a-z])" + r"[\s-]+(?:and\s+)?".join(parts) + r"(?![a-z-])", re.I)


_NUMWORDS = set(ONES + TENS[2:] + ["hundred", "thousand", "and"])


def _spelled_alone(text: str, n: int) -> bool:
    """``n`` spelled out, not as the tail or head of a longer number (42 is not in 142)."""
    for m in spelled_pattern(n).finditer(text):
        before = re.findall(r"[A-Za-z]+", text[max(0, m.start() - 12):m.start()])
        after = re.findall(r"[A-Za-z]+", text[m.end():m.end() + 12])
        if not (before and before[-1].lower() in _NUMWORDS) and not (after and after[0].lower() in _NUMWORDS):
            return True
    return False


def lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text)]


def _last_word(line: str) -> str:
    ws = re.findall(r"[A-Za-z]+", line)
    return ws[-1].lower() if ws else ""


def _case_ok(body: str, mode: str) -> bool:
    letters = [w for w in re.findall(r"[A-Za-z']+", body)]
    if not letters:
        return False
    if mode == "upper":
        return all(w == w.upper() for w in letters)
    if mode == "lower":
        return all(w == w.lower() for w in letters)
    return all(re.fullmatch(r"[A-Z][a-z']*", w) for w in letters)  # title


def parts(text: str, delim: str) -> list[str]:
    return [p.strip() for p in re.split(rf"^[ \t]*{re.escape(delim)}[ \t]*$", text.strip(), flags=re.M)]


def outline(text: str) -> list[tuple[str, list[str]]] | None:
    """``- top`` lines each followed by ``  - sub`` lines (2+ spaces); None if any other line."""
    out: list[tuple[str, list[str]]] = []
    for ln in text.strip().splitlines():
        if not ln.strip():
            continue
        m = re.fullmatch(r"- +(\S.*)", ln) or None
        s = re.fullmatch(r" {2,}- +(\S.*)", ln)
        if m:
            out.append((m.group(1).strip(), []))
        elif s and out:
            out[-1][1].append(s.group(1).strip())
        else:
            return None
    return out or None


def _first_pos(text: str, phrase: str) -> int:
    m = re.search(rf"(?<![A-Za-z0-9']){re.escape(phrase)}(?![A-Za-z0-9'])", text, re.I)
    return m.start() if m else -1


def _headers_block(text: str) -> dict[str, str] | None:
    head = text.strip().split("\n\n", 1)[0]
    out = {}
    for ln in head.splitlines():
        m = re.fullmatch(r"([A-Z][a-z]+): (\S.*)", ln.strip())
        if not m:
            return None
        out[m.group(1)] = m.group(2).strip()
    return out


def _check_prose(t: str, k: str, c: Mapping[str, Any]) -> bool | None:
    """Prose and layout kinds; None when ``k`` is not one of them."""
    if k == "sentence_count":
        return len(sentences(t)) == c["n"]
    if k == "word_count":
        return len(words(t)) == c["n"]
    if k == "para_sentences":
        ps = paragraphs(t)
        return bool(ps) and all(len(sentences(p)) == c["n"] for p in ps)
    if k == "line_count":
        return len(lines(t)) == c["n"]
    if k == "line_max_chars":
        return bool(lines(t)) and all(len(ln) <= c["n"] for ln in lines(t))
    if k == "line_min_words":
        return bool(lines(t)) and all(len(words(ln)) >= c["n"] for ln in lines(t))
    if k == "acrostic":
        ls = lines(t)
        return len(ls) == len(c["word"]) and all(ln[:1].upper() == ch.upper() for ln, ch in zip(ls, c["word"]))
    if k == "alliteration":
        ls = lines(t)
        return bool(ls) and all(sum(w.lower().startswith(c["letter"]) for w in words(ln)) >= c["n"] for ln in ls)
    if k == "distinct_endings":
        ends = [_last_word(ln)[-c.get("suffix", 99):] for ln in lines(t)]
        return bool(ends) and all(ends) and len(set(ends)) == len(ends)
    if k == "lipogram":
        return not any(ch in t.lower() for ch in c["letters"])
    if k == "no_digits":
        return not re.search(r"\d", t)
    if k == "spelled":
        return all(_spelled_alone(t, n) for n in c["numbers"])
    if k == "outline":
        o = outline(t)
        return o is not None and len(o) == c["n"] and all(len(s) == c["k"] for _, s in o)
    if k == "sub_max_words":
        o = outline(t)
        return o is not None and all(len(words(s)) <= c["n"] for _, subs in o for s in subs)
    if k == "top_title_case":
        o = outline(t)
        return o is not None and all(_case_ok(top, "title") for top, _ in o)
    if k == "section_case":
        bodies = base.section_bodies(t)
        return len(bodies) > c["index"] and _case_ok(bodies[c["index"]], c["mode"])
    return _check_layout(t, k, c)


def _check_layout(t: str, k: str, c: Mapping[str, Any]) -> bool | None:
    if k == "delimited":
        ps = parts(t, c["delim"])
        return len(ps) == c["n"] and all(ps)
    if k == "part_labels":
        ps = parts(t, c["delim"])
        return all(p.splitlines()[0].strip() == f"{c['label']} {i}" for i, p in enumerate(ps, 1) if p)
    if k == "part_sentences":
        return all(len(sentences(p)) >= c["n"] for p in parts(t, c["delim"]))
    if k == "part_keyword":
        ps = parts(t, c["delim"])
        return len(ps) > c["index"] and count_word(ps[c["index"]], c["word"]) > 0
    if k == "angle_title":
        first = t.lstrip('"').splitlines()[0].strip() if t.lstrip('"') else ""
        return bool(re.fullmatch(r"<<[^<>\n]+>>", first)) and count_word(first, c["word"]) > 0
    if k == "highlights":
        return len(_HILITE.findall(t)) >= c["n"]
    if k == "quoted_whole":
        return len(t) > 2 and t[0] == '"' and t[-1] == '"' and '"' not in t[1:-1]
    if k == "first_sentence_has":
        ss = sentences(t)
        return bool(ss) and count_word(ss[0], c["phrase"]) > 0
    if k == "last_sentence_has":
        ss = sentences(t)
        return bool(ss) and count_word(ss[-1], c["phrase"]) > 0
    if k == "phrase_count":
        return count_word(t, c["phrase"]) == c["n"]
    if k == "order":
        pos = [_first_pos(t, p) for p in c["phrases"]]
        return all(p >= 0 for p in pos) and pos == sorted(pos) and len(set(pos)) == len(pos)
    if k == "email_headers":
        h = _headers_block(t)
        return h is not None and list(h)[:2] == ["To", "Subject"] and h["To"] == c["to"] and \
            all(x in ("To", "Subject", "Cc") for x in h)
    if k == "cc":
        h = _headers_block(t)
        return h is not None and h.get("Cc") == c["address"]
    if k == "subject_keyword":
        h = _headers_block(t) or {}
        return count_word(h.get("Subject", ""), c["word"]) > 0
    if k == "subject_max_words":
        h = _headers_block(t) or {}
        return 0 < len(words(h.get("Subject", ""))) <= c["n"]
    if k == "salutation":
        body = t.strip().split("\n\n", 1)[-1]
        return body.splitlines()[0].strip() == f"Hi {c['name']}," if body.strip() else False
    if k == "closing":
        return bool(re.search(rf"\n{re.escape(c['word'])},\n{re.escape(c['sender'])}$", t.strip()))
    if k == "bullet_count":
        return len(re.findall(r"^- +\S", t, re.M)) == c["n"]
    return None


# structured records -----------------------------------------------------------------------

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


def _yaml_doc(t: str) -> Any:
    if re.search(r"(^|[\s:\[{,-])[&*!]", t):  # anchors, aliases and tags are refused
        return None
    import yaml

    try:
        return yaml.safe_load(t)
    except yaml.YAMLError:
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


def _check_records(t: str, k: str, c: Mapping[str, Any]) -> bool | None:
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


def check_any(text: str, c: Mapping[str, Any]) -> bool:
    """Whether ``text`` satisfies ``c`` (a kind of this module or of the base module)."""
    t, k = text.strip(), c.get("kind")
    try:
        for fn in (_check_prose, _check_records):
            got = fn(t, str(k), c)
            if got is not None:
                return bool(got)
    except (KeyError, TypeError, ValueError, re.error, RecursionError):
        return False
    return base.check(t, c)


def _plain(text: str) -> str:
    """The prose under the markup some constraints ask for (so the garble check accepts it)."""
    t = text.strip()
    if len(t) > 2 and t[0] == t[-1] == '"':
        t = t[1:-1]
    t = re.sub(r"<<([^<>\n]+)>>", r"\1.", t)
    t = _HILITE.sub(lambda m: m.group(0)[1:-1], t)
    return _EMAIL.sub("address", t)


def _grams(text: str) -> list[tuple[str, ...]]:
    ws = [w.lower() for w in words(text)]
    return [tuple(ws[i:i + 4]) for i in range(len(ws) - 3)]


def echoes(text: str, prompt: str) -> bool:
    grams = _grams(text)
    seen = set(_grams(prompt))
    return bool(grams) and sum(g in seen for g in grams) > 0.3 * len(grams)


def _repetitive(text: str) -> str:
    for units in (sentences(text), lines(text)):
        units = [u for u in (re.sub(r"\W+", " ", s.lower()).strip() for s in units) if u]
        if units and len(set(units)) < 0.7 * len(units):
            return "the response repeats itself"
    return ""


def score_any(answer: str, constraints: Sequence[Mapping[str, Any]], prompt: str, version: str, *,
              gate: str = "prose", fmt: str = "", arg: str = "") -> Score:
    """Fraction of constraints met, 0 unless the gates hold (module docstring)."""
    text = (answer or "").strip()
    comps, gate_fail = {}, []
    for i, c in enumerate(constraints):
        ok = len(text) <= MAX_CHARS and check_any(text, c)
        comps[f"{i}:{c['kind']}"] = (1.0 if ok else 0.0, float(c.get("weight", 1.0)))
        if c.get("gate") and not ok:
            gate_fail.append(c["kind"])
    if len(text) > MAX_CHARS:
        why = "too long"
    elif gate == "prose":
        why = base.substance(_plain(text), prompt) or _repetitive(text)
    else:
        recs = records(text, fmt, arg)
        why = ("the response echoes the prompt" if echoes(text, prompt) else
               "fewer than three records" if recs is None or len(recs) < 3 else "")
    met = sum(1 for v, _ in comps.values() if v)
    if gate_fail or why:
        return Score(0.0, components=comps, passed=met, total=len(comps),
                     reason=why or f"gate constraints failed: {gate_fail}", verifier_version=version)
    return Score.weighted(comps, passed=met, total=len(comps), reason=f"{met}/{len(comps)} constraints met",
                          verifier_version=version)
