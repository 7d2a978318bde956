"""Instruction-following domains over free text: constrained prose, sectioned markdown,
numbered lists and letters.

- ``instructions.constrained_text-v1`` — a short piece on a topic under length, keyword,
  forbidden-word, casing, start/end phrase, no-comma, paragraph and sentence-length constraints.
- ``instructions.sections-v1`` — a markdown document with a titled header, exact level-2
  sections in order, bullets per section and words per section.
- ``instructions.lists-v1`` — a numbered list of exactly n items with per-item limits, order,
  distinct first words and a keyword in a given item.
- ``instructions.letter-v1`` — a letter with greeting, sign-off, postscript, placeholders and
  a length range.

Difficulty adds constraints (d1 two beyond the gate, d2 four, d3 six) and lengthens the text.
Reward: the fraction of constraints met, paid only behind the substance gate of
:mod:`posttrain.verifiers.constraints` (topic keywords, the length or skeleton constraints
marked ``gate``, no prompt echo, no keyword stuffing). What they train: obeying several
verifiable format constraints at once. Not covered: quality, relevance or truth of the prose.

Probes: keyword stuffing to the length range, the reference without its gate keywords, the
topic words listed without sentences, and the constraint list itself.
"""

from __future__ import annotations

import functools
import random
from typing import Any, Callable

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _kit as K
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.constraints import check, describe, score_constraints
from posttrain.verifiers.text import extract_answer

STARTS = ["Here is my answer", "Consider this", "To begin"]
ENDS = ["That is all for now.", "Thank you for reading.", "Nothing more to add."]
SECTION_TITLES = ["Overview", "History", "Practice", "Risks", "Outlook", "Summary"]
NAMES = ["Ms. Okafor", "Mr. Lindqvist", "Dr. Ferreira", "Ms. Tanaka", "Mr. Abara"]
SENDERS = ["Priya Nair", "Tomas Vidal", "Lena Hoffmann", "Kofi Mensah"]
CLOSINGS = ["Sincerely", "Kind regards", "Best wishes"]


def _draft(intro: str, topic: str, cons: list[dict], seed_text: int) -> Draft:
    """The task: the constraints listed; the reference is written at solve time from ``seed_text``."""
    lines = "\n".join(f"{i + 1}. {describe(c)}" for i, c in enumerate(cons))
    prompt = f"{intro}\n\nFollow every one of these instructions:\n{lines}"
    return Draft(prompt, public={"topic": topic}, hidden={"constraints": cons, "writer_seed": seed_text})


def _check(task: Task, answer: str) -> Score:
    """Fraction of constraints met behind the substance gate, under the task's domain id."""
    return score_constraints(extract_answer(answer or ""), task.hidden["constraints"],
                             str(task.prompt[-1]["content"]), task.domain)


def _find(cons: list[dict], kind: str) -> dict | None:
    return next((c for c in cons if c["kind"] == kind), None)


def _avoid(cons: list[dict]) -> list[str]:
    c = _find(cons, "forbidden")
    return list(c["words"]) if c else []


def _keywords(cons: list[dict]) -> dict[str, int]:
    return {c["word"]: c.get("n", 1) for c in cons if c["kind"] == "keyword"}


def _common_probes(task: Task, ref: str) -> dict[str, str]:
    cons = task.hidden["constraints"]
    kws = list(_keywords(cons)) or ["topic"]
    rng_words = max(60, (_find(cons, "word_range") or {"min": 60})["min"])
    stuffed = " ".join(kws[i % len(kws)] for i in range(rng_words)) + "."
    stuffed_sents = " ".join(f"{kws[i % len(kws)].capitalize()} {kws[(i + 1) % len(kws)]}." for i in range(rng_words // 2))
    stripped = ref
    for kw in kws:
        stripped = stripped.replace(kw, "item").replace(kw.capitalize(), "Item").replace(kw.upper(), "ITEM")
    return {"keyword_stuffing": stuffed, "keyword_sentences": stuffed_sents, "no_gate_keywords": stripped,
            "constraint_list": "\n".join(describe(c) for c in cons),
            "topic_words": " ".join(K.TOPICS[task.public["topic"]]["nouns"])}


def _fit(task: Task, build) -> str:
    """The first text ``build(shift)`` makes that meets every constraint (shifts trim length)."""
    text = ""
    for shift in range(0, 60, 3):
        text = build(shift)
        if all(check(text, c) for c in task.hidden["constraints"]):
            return text
    return text


ID_CONSTRAINED_TEXT = "instructions.constrained_text-v1"


def _constrained_text_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kws = rng.sample(K.TOPICS[topic]["nouns"], 2)
    lo = {1: 50, 2: 100, 3: 180}[difficulty]
    cons: list[dict[str, Any]] = [{"kind": "keyword", "word": w, "n": 1 if difficulty == 1 else rng.randint(2, 3),
                                   "gate": True} for w in kws]
    cons.append({"kind": "word_range", "min": lo, "max": lo + 30 + 10 * difficulty, "gate": True})
    others = [w for w in K.TOPICS[topic]["nouns"] if w not in kws]
    pool = [
        {"kind": "forbidden", "words": rng.sample(K.FORBIDDABLE, 3) + ([rng.choice(others)] if difficulty == 3 else [])},
        {"kind": "case", "mode": rng.choice(["lower", "upper"])},
        {"kind": "starts_with", "phrase": rng.choice(STARTS)},
        {"kind": "ends_with", "phrase": rng.choice(ENDS)},
        {"kind": "no_char", "char": ","},
        {"kind": "paragraphs", "n": rng.randint(2, 4)},
        {"kind": "sentence_max_words", "n": rng.randint(10, 12)},
    ]
    cons += rng.sample(pool, {1: 2, 2: 4, 3: 6}[difficulty])
    intro = f"Write a short piece about {topic}."
    return _draft(intro, topic, cons, rng.randrange(10 ** 6))


def _constrained_text_reference(task: Task) -> str:
    return _fit(task, lambda shift: _constrained_text_write(task, shift))


def _constrained_text_write(task: Task, shift: int) -> str:
    cons = task.hidden["constraints"]
    rng = random.Random(task.hidden["writer_seed"] + shift)
    head = [_find(cons, "starts_with")["phrase"] + "."] if _find(cons, "starts_with") else []
    tail = [_find(cons, "ends_with")["phrase"]] if _find(cons, "ends_with") else []
    fixed = sum(len(s.split()) for s in head + tail)
    body = K.sentences(rng, task.public["topic"], _find(cons, "word_range")["min"] + 4 - fixed,
                       _avoid(cons), _keywords(cons))
    sents = head + body + tail
    para = _find(cons, "paragraphs")
    text = "\n\n".join(" ".join(g) for g in K.chunk(sents, para["n"] if para else 1))
    case = _find(cons, "case")
    if case:
        text = text.lower() if case["mode"] == "lower" else text.upper()
    return text


ID_SECTIONS = "instructions.sections-v1"


def _sections_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    chosen = set(rng.sample(SECTION_TITLES, difficulty + 1))
    titles = [t for t in SECTION_TITLES if t in chosen]
    cons: list[dict[str, Any]] = [{"kind": "title", "word": kw, "gate": True},
                                  {"kind": "sections", "titles": titles, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 2 + difficulty, "gate": True}]
    pool = [{"kind": "bullets_per_section", "n": rng.randint(2, 3)},
            {"kind": "section_min_words", "n": rng.choice([15, 20, 25])},
            {"kind": "forbidden", "words": rng.sample(K.FORBIDDABLE, 3)},
            {"kind": "no_char", "char": ","},
            {"kind": "ends_with", "phrase": rng.choice(ENDS)},
            {"kind": "word_range", "min": 40 * len(titles), "max": 40 * len(titles) + 60}]
    cons += rng.sample(pool, {1: 2, 2: 4, 3: 6}[difficulty])
    intro = f"Write a markdown briefing about {topic}."
    return _draft(intro, topic, cons, rng.randrange(10 ** 6))


def _sections_reference(task: Task) -> str:
    return _fit(task, lambda shift: _sections_write(task, shift))


def _sections_write(task: Task, shift: int) -> str:
    cons = task.hidden["constraints"]
    rng = random.Random(task.hidden["writer_seed"])
    topic, avoid = task.public["topic"], _avoid(cons)
    kw = _find(cons, "title")["word"]
    titles = _find(cons, "sections")["titles"]
    nb = (_find(cons, "bullets_per_section") or {"n": 0})["n"]
    per = max((_find(cons, "section_min_words") or {"n": 0})["n"],
              (_find(cons, "word_range") or {"min": 0})["min"] // len(titles) + 2 - shift // len(titles))
    need_kw = _find(cons, "keyword")["n"]
    parts = [f"# Notes on the {kw}"]
    for i, t in enumerate(titles):
        kwn = need_kw // len(titles) + (1 if i < need_kw % len(titles) else 0)
        bullets = [f"- {K.sentence(rng, topic, avoid)}" for _ in range(nb)]
        rest = per - sum(len(b.split()) - 1 for b in bullets)
        body = K.sentences(rng, topic, max(1, rest), avoid, {kw: kwn} if kwn else None)
        parts.append("\n".join([f"## {t}", " ".join(body)] + bullets))
    end = _find(cons, "ends_with")
    return "\n\n".join(parts) + (f"\n\n{end['phrase']}" if end else "")


ID_LISTS = "instructions.lists-v1"


def _lists_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    n = rng.randint(3 + difficulty, 4 + 2 * difficulty)
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    cons: list[dict[str, Any]] = [{"kind": "numbered", "n": n, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True}]
    pool = [{"kind": "item_max_words", "n": rng.choice([8, 9, 10])},
            {"kind": "items_alphabetical"},
            {"kind": "distinct_first_words"},
            {"kind": "item_keyword", "index": rng.randint(1, n), "word": kw},
            {"kind": "forbidden", "words": rng.sample(K.FORBIDDABLE, 3)},
            {"kind": "case", "mode": "lower"},
            {"kind": "no_char", "char": ","}]
    cons += rng.sample(pool, {1: 2, 2: 4, 3: 6}[difficulty])
    intro = f"List practical tips about {topic}."
    return _draft(intro, topic, cons, rng.randrange(10 ** 6))


def _lists_reference(task: Task) -> str:
    cons = task.hidden["constraints"]
    rng = random.Random(task.hidden["writer_seed"])
    topic, avoid = task.public["topic"], set(_avoid(cons))
    nouns, adjs, verbs = K.vocab(topic, avoid)
    n = _find(cons, "numbered")["n"]
    firsts = rng.sample(adjs + nouns, n)
    objs = rng.sample(nouns, len(nouns))  # cycle through every noun so none dominates
    pick = [objs[i % len(objs)] if objs[i % len(objs)] != f else objs[(i + 1) % len(objs)]
            for i, f in enumerate(firsts)]
    items = sorted(f"{f.capitalize()} {rng.choice(verbs)} the {o}." for f, o in zip(firsts, pick))
    kw = _find(cons, "keyword")["word"]
    at = (_find(cons, "item_keyword") or {"index": 1})["index"] - 1
    items[at] = items[at][:-1] + f" near the {kw}."
    text = "\n".join(f"{i + 1}. {it}" for i, it in enumerate(items))
    return text.lower() if _find(cons, "case") else text


ID_LETTER = "instructions.letter-v1"


def _letter_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    lo = {1: 60, 2: 100, 3: 150}[difficulty]
    cons: list[dict[str, Any]] = [
        {"kind": "greeting", "name": rng.choice(NAMES), "gate": True},
        {"kind": "signoff", "closing": rng.choice(CLOSINGS), "sender": rng.choice(SENDERS), "gate": True},
        {"kind": "keyword", "word": kw, "n": difficulty, "gate": True},
        {"kind": "word_range", "min": lo, "max": lo + 40, "gate": True}]
    pool = [{"kind": "postscript"}, {"kind": "placeholders", "n": rng.randint(2, 3)},
            {"kind": "no_char", "char": "!"}, {"kind": "no_char", "char": ";"},
            {"kind": "forbidden", "words": rng.sample(K.FORBIDDABLE, 3)},
            {"kind": "sentence_max_words", "n": rng.randint(10, 12)}]
    cons += rng.sample(pool, {1: 2, 2: 4, 3: 6}[difficulty])
    intro = f"Write a letter to a neighbour about a community project on {topic}."
    return _draft(intro, topic, cons, rng.randrange(10 ** 6))


def _letter_reference(task: Task) -> str:
    return _fit(task, lambda shift: _letter_write(task, shift))


def _letter_write(task: Task, shift: int) -> str:
    cons = task.hidden["constraints"]
    rng = random.Random(task.hidden["writer_seed"])
    g, s = _find(cons, "greeting"), _find(cons, "signoff")
    kw = _find(cons, "keyword")
    ph = _find(cons, "placeholders")
    slots = ["[date]", "[place]", "[time]"][: ph["n"] if ph else 0]
    extra = [f"We meet at {p}." for p in slots]
    ps = ["P.S. " + K.sentence(rng, task.public["topic"], _avoid(cons))] if _find(cons, "postscript") else []
    fixed = 1 + len(g["name"].split()) + 1 + len(s["closing"].split()) + len(s["sender"].split()) \
        + sum(len(x.split()) for x in extra + ps)
    body = K.sentences(rng, task.public["topic"], _find(cons, "word_range")["min"] + 4 - fixed + shift,
                       _avoid(cons), {kw["word"]: kw["n"]})
    paras = [" ".join(p) for p in K.chunk(body + extra, 2)]
    return "\n".join([f"Dear {g['name']},", "", paras[0], "", paras[1], "", f"{s['closing']},", s["sender"]] + ps)


def _text_probes(task: Task, *, reference: Callable[[Task], str]) -> dict[str, str]:
    return _common_probes(task, reference(task))


def _text_domain(dom_id: str, draw, reference: Callable[[Task], str], skill: str) -> None:
    """Register a free-text domain: its draw and reference writer with the module's scorer and probes."""
    register_domain(SingleTurnDomain(dom_id, draw, _check, functools.partial(_text_probes, reference=reference),
                                     reference=reference, description=f"{skill}\n\n{__doc__}"))


_text_domain(ID_CONSTRAINED_TEXT, _constrained_text_draw, _constrained_text_reference,
             "Writing a short piece on a topic under length, keyword, forbidden-word, casing and phrase constraints.")
_text_domain(ID_SECTIONS, _sections_draw, _sections_reference,
             "Writing a markdown document with a titled header and exact level-2 sections in order.")
_text_domain(ID_LISTS, _lists_draw, _lists_reference,
             "Writing a numbered list of exactly n items under per-item constraints.")
_text_domain(ID_LETTER, _letter_draw, _letter_reference,
             "Writing a letter with greeting, sign-off, postscript and placeholders within a length range.")
