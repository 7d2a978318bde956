"""More verifiable instruction constraints: exact counts, line forms (acrostic, alliteration,
line length, rhyme-free endings), lipograms, spelled-out numbers, outlines, per-section
casing, delimited parts, highlights, phrase placement and order, e-mail headers, and records
in structured formats (CSV, markdown table, JSON Lines, XML, YAML; read by
:mod:`posttrain.verifiers.constraints_more_records`).

What it is: the same plain-dict constraints as :mod:`posttrain.verifiers.constraints`
(``{"kind": ..., ...}``); :func:`check_any` decides any kind of either module and
:func:`describe_any` phrases it. :func:`score_any` gives the fraction of constraints met
behind a gate: every ``"gate": true`` constraint must hold, and either the prose substance
gate of :func:`posttrain.verifiers.constraints.substance` (``gate="prose"``, applied after
:func:`_plain` removes the markup these constraints legitimately ask for: ``<<title>>``,
``*highlights*``, e-mail addresses, a wrapping pair of quotes) or, for structured output
(``gate="structured"``), a non-echo check (at most 30 % of the answer's word 4-grams in the
prompt) plus at least three records.

Not covered: fluency, truth, rhyme beyond a spelling proxy (two line endings "rhyme" when
their last two letters agree). Guarantees: every function is total on any string, values in
[0, 1], parsing bounded by :data:`MAX_CHARS`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score
from posttrain.verifiers import constraints as base
from posttrain.verifiers.constraints import count_word, paragraphs, words
from posttrain.verifiers.constraints_more_records import MAX_CHARS, check_records, records

# A sentence starts at the text's start or right after a terminator: the look-behind keeps
# findall linear (without it, 20k characters with no terminator took 15 s, quadratic).
_SENT = re.compile(r"(?<![^.!?])[^.!?]+[.!?]")
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


def check_any(text: str, c: Mapping[str, Any]) -> bool:
    """Whether ``text`` satisfies ``c`` (a kind of this module or of the base module)."""
    t, k = text.strip(), c.get("kind")
    try:
        for fn in (_check_prose, check_records):
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
