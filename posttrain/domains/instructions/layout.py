"""Instruction domains over the layout of a response: outlines, per-section casing, delimited
parts, highlights and titles, phrase placement, mention order and e-mails.

- ``instructions.outline-v1`` — exactly n top-level bullets with exactly k indented
  sub-bullets each; d2 adds Title Case tops and short sub-bullets, d3 forbidden words and no
  commas.
- ``instructions.section_case-v1`` — markdown sections in a given order whose bodies are in
  given casings (ALL CAPS, lowercase, Title Case): one section cased at d1, two at d2, all at d3.
- ``instructions.delimited_parts-v1`` — exactly n parts separated by a delimiter line, each with
  a minimum number of sentences; labelled parts ("SECTION 1") at d2, a keyword in a given part
  at d3.
- ``instructions.highlight-v1`` — a <<title>> line, at least n *highlighted* phrases; an exact
  closing phrase at d2; the whole answer wrapped in double quotes and a length range at d3.
- ``instructions.phrase_placement-v1`` — a phrase in the first sentence and one in the last
  (d1), a two-word phrase used exactly n times (d2), a fixed opening and a length range (d3).
- ``instructions.mention_order-v1`` — mention 3-5 things in a given order, each exactly once
  (d2+), with an exact sentence count and no commas at d3.
- ``instructions.email-v1`` — an e-mail: To/Subject headers, a salutation and a closing
  (gates), a subject keyword and length, a Cc header (d2+), an exact number of bullets (d2+)
  and a length range (d3).

Reward and gate as in :mod:`.prose`. What they train: document skeletons and placing
content where asked. Not covered: content quality. Probes: the shared ones, one sentence
repeated, and per domain the skeleton without content (empty sections, bare delimiters,
headers with no body).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _kit as K
from posttrain.domains.kit.single_turn import Draft
from posttrain.verifiers.constraints import words

TITLES = ["Overview", "History", "Practice", "Risks", "Outlook", "Summary"]
PEOPLE = [("Lena", "Hoffmann"), ("Tomas", "Vidal"), ("Priya", "Nair"), ("Kofi", "Mensah"), ("Aiko", "Tanaka")]


def _title(s: str) -> str:
    return " ".join(w.capitalize() for w in s.split())


ID_OUTLINE = "instructions.outline-v1"


def _outline_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    nouns, adjs = K.TOPICS[topic]["nouns"], K.TOPICS[topic]["adjs"]
    n, k = 2 + difficulty, rng.randint(2, 3)
    kw = rng.choice(nouns)
    avoid = rng.sample(K.FORBIDDABLE, 3)
    tops = [f"{a.capitalize()} {b.capitalize()}" for a, b in zip(rng.sample(adjs, n), rng.sample(nouns, n))]
    subs = K.prose(rng, topic, n * k, avoid=avoid, keywords={kw: 1})
    text = "\n".join(f"- {t}\n" + "\n".join(f"  - {s}" for s in subs[i * k:(i + 1) * k]) for i, t in enumerate(tops))
    cons: list[dict[str, Any]] = [{"kind": "outline", "n": n, "k": k, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True}]
    if difficulty >= 2:
        cons += [{"kind": "top_title_case"}, {"kind": "sub_max_words", "n": 9}]
    if difficulty == 3:
        cons += [{"kind": "forbidden", "words": avoid}, {"kind": "no_char", "char": ","}]
    return K.constraint_draft(f"Outline a plan about {topic}.", topic, cons, text)


def _outline_probes(task: Task) -> dict[str, str]:
    c = task.hidden["constraints"][0]
    bare = "\n".join("- Topic\n" + "\n".join("  - Point." for _ in range(c["k"])) for _ in range(c["n"]))
    return K.prose_probes(task) | {"bare_outline": bare}


ID_SECTION_CASE = "instructions.section_case-v1"


def _section_case_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    chosen = set(rng.sample(TITLES, 1 + difficulty))
    titles = [t for t in TITLES if t in chosen]
    n_cased = {1: 1, 2: 2, 3: len(titles)}[difficulty]
    cased = rng.sample(range(len(titles)), n_cased)
    modes = {i: m for i, m in zip(cased, rng.sample(["upper", "lower", "title"] * 2, n_cased))}
    body = []
    for i, t in enumerate(titles):
        s = " ".join(K.prose(rng, topic, 3, keywords={kw: 1} if i == 0 else None))
        mode = modes.get(i)
        s = s.upper() if mode == "upper" else s.lower() if mode == "lower" else _title(s) if mode else s
        body.append(f"## {t}\n{s}")
    cons: list[dict[str, Any]] = [{"kind": "sections", "titles": titles, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True}]
    cons += [{"kind": "section_case", "index": i, "mode": m} for i, m in sorted(modes.items())]
    return K.constraint_draft(f"Write a markdown note about {topic}.", topic, cons, "\n\n".join(body))


def _section_case_probes(task: Task) -> dict[str, str]:
    titles = task.hidden["constraints"][0]["titles"]
    return K.prose_probes(task) | {"headers_only": "\n\n".join(f"## {t}\nTEXT." for t in titles)}


ID_DELIMITED_PARTS = "instructions.delimited_parts-v1"


def _delimited_parts_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    n, m = 1 + difficulty, rng.randint(2, 3)
    delim, label = rng.choice(["* * *", "###", "-"]), rng.choice(["SECTION", "Part", "Chapter"])
    at = rng.randrange(n)
    parts = []
    for i in range(n):
        s = " ".join(K.prose(rng, topic, m, keywords={kw: 1} if i == at else None))
        parts.append(f"{label} {i + 1}\n{s}" if difficulty >= 2 else s)
    text = f"\n{delim}\n".join(parts)
    cons: list[dict[str, Any]] = [{"kind": "delimited", "delim": delim, "n": n, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                  {"kind": "part_sentences", "delim": delim, "n": m}]
    if difficulty >= 2:
        cons.append({"kind": "part_labels", "delim": delim, "label": label})
    if difficulty == 3:
        cons.append({"kind": "part_keyword", "delim": delim, "index": at, "word": kw})
    return K.constraint_draft(f"Write a short piece about {topic} in parts.", topic, cons, text)


def _delimited_parts_probes(task: Task) -> dict[str, str]:
    c = task.hidden["constraints"][0]
    return K.prose_probes(task) | {"bare_delimiters": f"\n{c['delim']}\n".join(["Text."] * c["n"])}


ID_HIGHLIGHT = "instructions.highlight-v1"


def _highlight_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    h = 1 + difficulty
    sents = K.prose(rng, topic, h + 3)
    for i in rng.sample(range(len(sents)), h):  # highlight the final noun phrase
        head, last = sents[i][:-1].rsplit(" ", 1)
        sents[i] = f"{head} *{last}*."
    ending = rng.choice(["That is all for now.", "Nothing more to add."])
    if difficulty == 2:
        sents.append(ending)
    text = f"<<Notes on the {kw}>>\n\n" + " ".join(sents)
    cons: list[dict[str, Any]] = [{"kind": "angle_title", "word": kw, "gate": True},
                                  {"kind": "highlights", "n": h}]
    if difficulty == 2:
        cons.append({"kind": "ends_with", "phrase": ending})
    if difficulty == 3:
        text = f'"{text}"'
        cons.append({"kind": "quoted_whole"})
    n = len(words(text))
    cons.append({"kind": "word_range", "min": n - 10, "max": n + 15, "gate": True})
    return K.constraint_draft(f"Write a short note about {topic}.", topic, cons, text)


def _highlight_probes(task: Task) -> dict[str, str]:
    kw = task.hidden["constraints"][0]["word"]
    return K.prose_probes(task) | {"title_and_stars": f"<<{kw}>>\n*a* *b* *c* *d* *e*. *f*. *g*."}


ID_PHRASE_PLACEMENT = "instructions.phrase_placement-v1"


def _phrase_placement_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    nouns, adjs = K.TOPICS[topic]["nouns"], K.TOPICS[topic]["adjs"]
    first, last, pn = rng.sample(nouns, 3)
    phrase, times = f"{rng.choice(adjs)} {pn}", rng.randint(2, 3)
    sents = K.prose(rng, topic, 4 + difficulty, avoid=[pn])
    sents[0] = K.plain_sentence(rng, topic, avoid=[pn], keyword=first)
    sents[-1] = K.plain_sentence(rng, topic, avoid=[pn], keyword=last)
    cons: list[dict[str, Any]] = [{"kind": "first_sentence_has", "phrase": first, "gate": True},
                                  {"kind": "last_sentence_has", "phrase": last, "gate": True}]
    if difficulty >= 2:
        for j, i in enumerate(rng.sample(range(1, len(sents) - 1), times)):
            sents[i] = K.PHRASE_SENTENCES[j].format(p=phrase)
        cons.append({"kind": "phrase_count", "phrase": phrase, "n": times})
    opening = rng.choice(["Here is my answer.", "To begin."])
    text = " ".join(([opening] if difficulty == 3 else []) + sents)
    n = len(words(text))
    cons.append({"kind": "word_range", "min": n - 8, "max": n + 12, "gate": True})
    if difficulty == 3:
        cons[0] = {**cons[0], "kind": "keyword", "word": first, "n": 1}  # the opening is now first
        cons.append({"kind": "starts_with", "phrase": opening})
    return K.constraint_draft(f"Write a short text about {topic}.", topic, cons, text)


def _phrase_placement_probes(task: Task) -> dict[str, str]:
    cons = task.hidden["constraints"]
    a, b = cons[0].get("phrase") or cons[0]["word"], cons[1]["phrase"]
    return K.prose_probes(task) | {"minimal": f"The {a} is here. Some text follows. The {b} is there."}


ID_MENTION_ORDER = "instructions.mention_order-v1"


def _mention_order_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    items = rng.sample(K.TOPICS[topic]["nouns"], 2 + difficulty)
    sents = [K.plain_sentence(rng, topic, avoid=items, keyword=w) for w in items]
    filler = K.prose(rng, topic, 2 + difficulty, avoid=items)
    out = []
    for i, s in enumerate(sents):
        out += [s] + filler[i:i + 1]
    text = " ".join(out)
    n = len(words(text))
    cons: list[dict[str, Any]] = [{"kind": "order", "phrases": items, "gate": True},
                                  {"kind": "word_range", "min": n - 8, "max": n + 15, "gate": True}]
    if difficulty >= 2:
        cons += [{"kind": "phrase_count", "phrase": w, "n": 1} for w in items]
    if difficulty == 3:
        cons += [{"kind": "sentence_count", "n": len(out)}, {"kind": "no_char", "char": ","}]
    return K.constraint_draft(f"Write a short text about {topic}.", topic, cons, text)


def _mention_order_probes(task: Task) -> dict[str, str]:
    items = task.hidden["constraints"][0]["phrases"]
    return K.prose_probes(task) | {"items_only": ". ".join(w.capitalize() for w in items) + "."}


ID_EMAIL = "instructions.email-v1"


def _email_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    (tf, tl), (sf, sl), (cf, cl) = rng.sample(PEOPLE, 3)
    to, cc = f"{tf.lower()}.{tl.lower()}@example.org", f"{cf.lower()}.{cl.lower()}@example.org"
    word = rng.choice(["Best", "Cheers", "Thanks"])
    head = [f"To: {to}", f"Subject: Update on the {kw}"] + ([f"Cc: {cc}"] if difficulty >= 2 else [])
    body = " ".join(K.prose(rng, topic, 3 + difficulty, keywords={kw: 1}))
    nb = rng.randint(2, 3)
    bullets = "\n".join(f"- {s}" for s in K.prose(rng, topic, nb)) if difficulty >= 2 else ""
    text = "\n".join(head) + f"\n\nHi {tf},\n\n{body}\n\n" + (bullets + "\n\n" if bullets else "") + f"{word},\n{sf} {sl}"
    cons: list[dict[str, Any]] = [{"kind": "email_headers", "to": to, "gate": True},
                                  {"kind": "salutation", "name": tf, "gate": True},
                                  {"kind": "closing", "word": word, "sender": f"{sf} {sl}", "gate": True},
                                  {"kind": "subject_keyword", "word": kw}, {"kind": "subject_max_words", "n": 6}]
    if difficulty >= 2:
        cons += [{"kind": "cc", "address": cc}, {"kind": "bullet_count", "n": nb}]
    if difficulty == 3:
        n = len(words(text))
        cons.append({"kind": "word_range", "min": n - 10, "max": n + 15})
    intro = f"Write an e-mail from {sf} {sl} to {tf} {tl} with news about {topic}."
    return K.constraint_draft(intro, topic, cons, text)


def _email_probes(task: Task) -> dict[str, str]:
    ref = task.hidden["reference"]
    head, rest = ref.split("\n\n", 1)
    skeleton = head + "\n\n" + rest.split("\n\n")[0] + "\n\nText.\n\n" + "\n\n".join(rest.split("\n\n")[-1:])
    return K.prose_probes(task) | {"skeleton_only": skeleton}


def _domain(dom_id, draw, exploits, skill: str, detail: str):
    return register_domain(K.constraint_domain(dom_id, draw, exploits=exploits, description=f"{skill}\n\n{detail}"))


_domain(ID_OUTLINE, _outline_draw, _outline_probes, "Writing a two-level outline of exact shape.",
        "Exactly n top-level bullets with exactly k indented sub-bullets each; d2 adds Title Case tops and "
        "short sub-bullets, d3 forbidden words and no commas.")
_domain(ID_SECTION_CASE, _section_case_draw, _section_case_probes,
        "Writing markdown sections in a given order, each body in a given casing.",
        "ALL CAPS, lowercase or Title Case: one section cased at d1, two at d2, all at d3.")
_domain(ID_DELIMITED_PARTS, _delimited_parts_draw, _delimited_parts_probes,
        "Splitting a response into exact parts separated by a delimiter line.",
        "Each part with a minimum number of sentences; labelled parts at d2, a keyword in a given part at d3.")
_domain(ID_HIGHLIGHT, _highlight_draw, _highlight_probes, "Marking up a response: a <<title>> and *highlighted* phrases.",
        "At least n highlights; an exact closing phrase at d2; the whole answer in double quotes and a length "
        "range at d3.")
_domain(ID_PHRASE_PLACEMENT, _phrase_placement_draw, _phrase_placement_probes,
        "Placing phrases where asked: first sentence, last sentence, an exact number of times.",
        "A two-word phrase used exactly n times from d2; a fixed opening and a length range at d3.")
_domain(ID_MENTION_ORDER, _mention_order_draw, _mention_order_probes, "Mentioning given things in a given order.",
        "3-5 things, each exactly once from d2, with an exact sentence count and no commas at d3.")
_domain(ID_EMAIL, _email_draw, _email_probes, "Writing an e-mail with exact headers, salutation and closing.",
        "To/Subject headers, a subject keyword and length limit; a Cc header and an exact bullet count from d2, "
        "a length range at d3.")
