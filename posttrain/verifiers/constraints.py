"""Verifiable instruction constraints: length, keywords, forbidden words, casing, sections,
lists, letters, and a JSON-Schema subset checked rule by rule.

What it is: a constraint is a plain dict ``{"kind": ..., ...}`` (JSON-serialisable, so it lives
in a Task); :func:`check` decides it on a response, :func:`describe` phrases it for a prompt;
:func:`score_constraints` gives partial credit per constraint behind a **substance gate**.

The gate (documented reward-hacking defence): credit counts only when
(1) every constraint marked ``"gate": true`` holds (the domains mark the topic keywords, the
length range and the document's skeleton), (2) the response is not an echo of the prompt (at
most 30 % of its word 4-grams occur in the prompt) and (3) it is not keyword stuffing (it has
at least three sentences or items, and no word of 4+ letters is more than 30 % of those words) and (4) at most 3 % of the
characters of its whitespace-separated tokens are in garbled tokens (neither words in one casing style, numbers,
abbreviations, placeholders nor markdown markup).
Otherwise the value is 0, whatever else holds — an empty answer trivially "avoids forbidden
words" and "stays under the length limit", and must not be paid for that.

JSON-Schema subset (:func:`schema_rules`): ``type``, ``enum``, ``const``, ``minLength``,
``maxLength``, ``pattern``, ``minimum``, ``maximum``, ``exclusiveMaximum``, ``minItems``,
``maxItems``, ``uniqueItems``, ``items``, ``properties``, ``required``,
``additionalProperties: false``; ``required`` and ``additionalProperties`` are gates, every
other keyword is one rule with partial credit.

Not covered: fluency, relevance or truth (a judge model is needed for those); word salad made
of varied words passes the stuffing heuristic. Guarantees: every function is total on any
string and every value is in [0, 1].
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score

MAX_CHARS = 40_000
WORD = re.compile(r"[A-Za-z0-9']+")
# A sentence starts at the text's start or right after a terminator: the look-behind keeps
# findall linear (without it, 20k characters with no terminator took 15 s, quadratic).
_SENT = re.compile(r"(?<![^.!?])[^.!?]+[.!?]")
_BULLET = re.compile(r"^\s*[-*] +\S", re.M)
# A well-formed token: a word in one casing style (lower, UPPER, Capitalised), a number, an
# abbreviation, a placeholder or markdown markup, with ordinary punctuation around it.
_TOKEN = re.compile(r"""^[("'\[]*(?:[a-z]+|[A-Z]+|[A-Z][a-z]+|(?:[A-Za-z]\.)+[A-Za-z]?|\d+(?:[.,:]\d+)*)"""
                    r"""(?:['-](?:[a-z]+|[A-Z]+|[A-Z][a-z]+|\d+))*[)"'\]]*[%.,;:!?]*[)"']*$|^(?:#+|-|\*|\d+\.)$""")


def words(text: str) -> list[str]:
    return WORD.findall(text)


def count_word(text: str, word: str) -> int:
    return len(re.findall(rf"(?<![A-Za-z0-9']){re.escape(word)}(?![A-Za-z0-9'])", text, re.I))


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def numbered_items(text: str) -> list[str] | None:
    """Items of a list written ``1. ...`` one per line, numbered from 1 in order; else None."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    items = []
    for i, ln in enumerate(lines, 1):
        m = re.match(rf"^{i}\. +(\S.*)$", ln)
        if not m:
            return None
        items.append(m.group(1))
    return items or None


def headers(text: str, level: int = 2) -> list[str]:
    return [m.strip() for m in re.findall(rf"^{'#' * level} +(.+)$", text, re.M)]


def section_bodies(text: str) -> list[str]:
    return re.split(r"^## .+$", text, flags=re.M)[1:]


def _letters(text: str) -> str:
    return "".join(ch for ch in text if ch.isalpha())


def check(text: str, c: Mapping[str, Any]) -> bool:
    """Whether ``text`` satisfies constraint ``c`` (unknown kinds fail)."""
    k, t = c.get("kind"), text.strip()
    if k == "word_range":
        return c["min"] <= len(words(t)) <= c["max"]
    if k == "keyword":
        return count_word(t, c["word"]) >= c.get("n", 1)
    if k == "forbidden":
        return all(count_word(t, w) == 0 for w in c["words"])
    if k == "case":
        s = _letters(t)
        return bool(s) and (s.islower() if c["mode"] == "lower" else s.isupper())
    if k == "starts_with":
        return t.lower().startswith(c["phrase"].lower())
    if k == "ends_with":
        return t.lower().endswith(c["phrase"].lower())
    if k == "no_char":
        return c["char"] not in t
    if k == "paragraphs":
        return len(paragraphs(t)) == c["n"]
    if k == "sentence_max_words":
        sents = _SENT.findall(t)
        return bool(sents) and all(len(words(s)) <= c["n"] for s in sents)
    if k == "sections":
        return headers(t) == list(c["titles"])
    if k == "title":
        first = t.splitlines()[0] if t else ""
        return bool(re.fullmatch(r"# +\S.*", first)) and count_word(first, c["word"]) > 0
    if k == "bullets_per_section":
        bodies = section_bodies(t)
        return bool(bodies) and all(len(_BULLET.findall(b)) == c["n"] for b in bodies)
    if k == "section_min_words":
        bodies = section_bodies(t)
        return bool(bodies) and all(len(words(b)) >= c["n"] for b in bodies)
    return _check_more(t, k, c)


def _check_more(t: str, k: Any, c: Mapping[str, Any]) -> bool:
    items = numbered_items(t)
    if k == "numbered":
        return items is not None and len(items) == c["n"]
    if k == "item_max_words":
        return items is not None and all(len(words(i)) <= c["n"] for i in items)
    if k == "items_alphabetical":
        return items is not None and [i.lower() for i in items] == sorted(i.lower() for i in items)
    if k == "item_keyword":
        return items is not None and len(items) >= c["index"] and count_word(items[c["index"] - 1], c["word"]) > 0
    if k == "distinct_first_words":
        firsts = [words(i)[0].lower() for i in items or [] if words(i)]
        return items is not None and len(firsts) == len(items) and len(set(firsts)) == len(firsts)
    if k == "greeting":
        return bool(re.match(rf"^Dear {re.escape(c['name'])},\s*\n", t))
    if k == "signoff":
        return bool(re.search(rf"\n{re.escape(c['closing'])},\s*\n{re.escape(c['sender'])}\s*(\n\s*P\.S\..*)?$", t, re.S))
    if k == "postscript":
        return bool(re.search(r"^P\.S\. \S", t, re.M))
    if k == "placeholders":
        return len(set(re.findall(r"\[[a-z][a-z ]*\]", t))) >= c["n"]
    return False


def describe(c: Mapping[str, Any]) -> str:
    """The constraint as an instruction sentence."""
    k = c["kind"]
    d = {
        "word_range": lambda: f"Write between {c.get('min')} and {c.get('max')} words.",
        "keyword": lambda: f"Use the word \"{c.get('word')}\" at least {c.get('n', 1)} time(s).",
        "forbidden": lambda: "Do not use any of these words: " + ", ".join(c.get("words", [])) + ".",
        "case": lambda: f"Write everything in {c.get('mode')}case letters.",
        "starts_with": lambda: f"Start your response with \"{c.get('phrase')}\".",
        "ends_with": lambda: f"End your response with the exact phrase \"{c.get('phrase')}\".",
        "no_char": lambda: f"Do not use the character \"{c.get('char')}\" anywhere.",
        "paragraphs": lambda: f"Write exactly {c.get('n')} paragraphs separated by blank lines.",
        "sentence_max_words": lambda: f"Keep every sentence to at most {c.get('n')} words; end sentences with a period.",
        "sections": lambda: "Use exactly these level-2 markdown headers in this order: "
                            + "; ".join(f"\"## {t}\"" for t in c.get("titles", [])) + ".",
        "title": lambda: f"Start with a level-1 markdown title (\"# ...\") containing the word \"{c.get('word')}\".",
        "bullets_per_section": lambda: f"Put exactly {c.get('n')} bullet points (lines starting with \"- \") in each section.",
        "section_min_words": lambda: f"Write at least {c.get('n')} words in each section.",
        "numbered": lambda: f"Answer with a numbered list of exactly {c.get('n')} items, one per line (\"1. ...\").",
        "item_max_words": lambda: f"Keep each item to at most {c.get('n')} words.",
        "items_alphabetical": lambda: "Order the items alphabetically.",
        "item_keyword": lambda: f"Item {c.get('index')} must contain the word \"{c.get('word')}\".",
        "distinct_first_words": lambda: "Start every item with a different word.",
        "greeting": lambda: f"Begin with the line \"Dear {c.get('name')},\".",
        "signoff": lambda: f"End with \"{c.get('closing')},\" on one line and \"{c.get('sender')}\" on the next "
                           "(a P.S. may follow).",
        "postscript": lambda: "Add a postscript line starting with \"P.S. \".",
        "placeholders": lambda: f"Include at least {c.get('n')} different placeholders in square brackets, such as [date].",
    }
    return d[k]() if k in d else f"({k})"


def _grams(ws: Sequence[str], n: int = 4) -> list[tuple[str, ...]]:
    return [tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)]


def substance(text: str, prompt: str) -> str:
    """'' when the response is substantive, else why not (echo, stuffing, too few sentences)."""
    ws = [w.lower() for w in words(text)]
    grams = _grams(ws)
    if grams:
        seen = set(_grams([w.lower() for w in words(prompt)]))
        if sum(g in seen for g in grams) > 0.3 * len(grams):
            return "the response echoes the prompt"
    units = len(_SENT.findall(text)) + len(numbered_items(text) or []) + len(_BULLET.findall(text))
    if units < 3:
        return "fewer than three sentences or items"
    long = [w for w in ws if len(w) >= 4]
    if long and Counter(long).most_common(1)[0][1] > max(6, 0.3 * len(long)):
        return "one word dominates the response (stuffing)"
    tokens = text.split()
    if sum(len(t) for t in tokens if not _TOKEN.match(t)) > 0.03 * sum(map(len, tokens)):
        return "garbled tokens (neither words, numbers nor markup)"
    return ""


def score_constraints(answer: str, constraints: Sequence[Mapping[str, Any]], prompt: str,
                      version: str) -> Score:
    """Fraction of constraints met, 0 unless the substance gate holds (module docstring)."""
    text = answer or ""
    comps, gate_fail = {}, []
    for i, c in enumerate(constraints):
        ok = len(text) <= MAX_CHARS and check(text, c)
        comps[f"{i}:{c['kind']}"] = (1.0 if ok else 0.0, float(c.get("weight", 1.0)))
        if c.get("gate") and not ok:
            gate_fail.append(c["kind"])
    why = "too long" if len(text) > MAX_CHARS else substance(text, prompt)
    met = sum(1 for v, _ in comps.values() if v)
    if gate_fail or why:
        reason = why or f"gate constraints failed: {gate_fail}"
        return Score(0.0, components=comps, passed=met, total=len(comps), reason=reason, verifier_version=version)
    return Score.weighted(comps, passed=met, total=len(comps), reason=f"{met}/{len(comps)} constraints met",
                          verifier_version=version)


# JSON Schema subset ---------------------------------------------------------------------

_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


def _type_ok(v: Any, t: str) -> bool:
    if t in ("integer", "number") and isinstance(v, bool):
        return False
    if t == "integer" and isinstance(v, float):
        return v.is_integer()
    return isinstance(v, _TYPES[t])


def _rule(v: Any, key: str, arg: Any) -> bool:
    if key == "type":
        return _type_ok(v, arg)
    if key == "enum":
        return any(v == a and type(v) is type(a) for a in arg)
    if key == "const":
        return v == arg and type(v) is type(arg)
    if key in ("minLength", "maxLength", "pattern"):
        if not isinstance(v, str):
            return False
        return (len(v) >= arg if key == "minLength" else len(v) <= arg if key == "maxLength"
                else re.fullmatch(arg, v) is not None)
    if key in ("minimum", "maximum", "exclusiveMaximum"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        return v >= arg if key == "minimum" else v <= arg if key == "maximum" else v < arg
    if key in ("minItems", "maxItems", "uniqueItems"):
        if not isinstance(v, list):
            return False
        if key == "uniqueItems":
            return len({json.dumps(x, sort_keys=True) for x in v}) == len(v)
        return len(v) >= arg if key == "minItems" else len(v) <= arg
    return False


_MISSING = object()


def schema_rules(schema: Mapping[str, Any], value: Any, path: str = "$") -> tuple[dict[str, bool], list[str]]:
    """``(rules, gate_failures)``: each checkable keyword at each path → pass/fail."""
    rules: dict[str, bool] = {}
    gates: list[str] = []
    for key, arg in schema.items():
        if key in ("type", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum",
                   "exclusiveMaximum", "minItems", "maxItems", "uniqueItems"):
            rules[f"{path}:{key}"] = value is not _MISSING and _rule(value, key, arg)
    if "items" in schema:
        items = value if isinstance(value, list) else []
        for i, item in enumerate(items):
            sub, g = schema_rules(schema["items"], item, f"{path}[{i}]")
            rules.update(sub)
            gates += g
        if not items:
            rules[f"{path}[]:items"] = False
    if "properties" in schema:
        obj = value if isinstance(value, dict) else {}
        for req in schema.get("required", []):
            if req not in obj:
                gates.append(f"{path}.{req} missing")
        if schema.get("additionalProperties") is False:
            gates += [f"{path}.{k} not allowed" for k in obj if k not in schema["properties"]]
        for name, sub_schema in schema["properties"].items():
            if name not in obj:  # a missing required key is a gate failure; an optional one is fine
                continue
            sub, g = schema_rules(sub_schema, obj[name], f"{path}.{name}")
            rules.update(sub)
            gates += g
    return rules, gates
