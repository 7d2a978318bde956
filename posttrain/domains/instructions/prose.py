"""Instruction domains over the form of prose: exact counts, acrostics, alliteration,
lipograms, spelled-out numbers, short poems under line limits, and prose under many combined
constraints.

- ``instructions.exact_counts-v1`` — exactly S sentences in exactly P paragraphs (d1), also
  exactly W words and forbidden words (d2), also exactly K sentences per paragraph and no
  commas (d3).
- ``instructions.acrostic-v1`` — one line per letter of a word, in order (4-5 letters at d1,
  6 at d3), with a topic keyword; d2 adds a line-length cap and words per line, d3 distinct
  line endings and forbidden words.
- ``instructions.alliteration-v1`` — N lines, each with at least k words starting with one
  letter (k = 2, 3, 4), a keyword of that letter; d3 adds distinct line endings.
- ``instructions.lipogram-v1`` — prose that never uses given letters (a rare letter at d1, a
  common consonant at d2, a vowel or ``t`` at d3) with a keyword and a length range.
- ``instructions.spelled_numbers-v1`` — mention 2-4 given numbers (up to five digits at d3)
  spelled out in words, with no digit anywhere.
- ``instructions.poem_lines-v1`` — a poem of exactly N lines, each at most K characters and
  at least three words, no two lines ending alike (d2: distinct last words; d3: distinct last
  two letters, a rhyme-free proxy), lowercase and no commas at d3.
- ``instructions.combo-v1`` — prose under a keyword and a length range plus 3, 5 or 7 more
  constraints drawn from a pool (opening and closing phrases, forbidden words, a lipogram,
  no commas, casing, exact paragraph and sentence counts, highlights, a <<title>>, quoting,
  mention order, an exact phrase count), generated jointly so that they are satisfiable.

Reward: fraction of constraints met behind the gate of
:func:`posttrain.verifiers.constraints_more.score_any` (the structural constraints and the
keyword are gates; the substance check refuses echoes, stuffing, garble and repetition).
What they train: controlling the surface form of text while staying on topic. Not covered:
meaning, meter, real rhyme. Probes (:func:`._kit.prose_probes`): keyword stuffing, the topic
words, the constraint list, and one sentence repeated to the asked count.
"""

from __future__ import annotations

import random
import re
from typing import Any

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _kit as K
from posttrain.domains.kit.single_turn import Draft
from posttrain.verifiers.constraints import words

ID_EXACT_COUNTS = "instructions.exact_counts-v1"


def _exact_counts_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    p, k = rng.randint(2, 2 + difficulty), rng.randint(2, 4)
    avoid = rng.sample(K.FORBIDDABLE, 3)
    sents = K.prose(rng, topic, p * k, avoid=avoid, keywords={kw: 2})
    text = "\n\n".join(" ".join(sents[i * k:(i + 1) * k]) for i in range(p))
    cons: list[dict[str, Any]] = [{"kind": "keyword", "word": kw, "n": 2, "gate": True},
                                  {"kind": "sentence_count", "n": p * k, "gate": True},
                                  {"kind": "paragraphs", "n": p}]
    if difficulty >= 2:
        cons += [{"kind": "word_count", "n": len(words(text))}, {"kind": "forbidden", "words": avoid}]
    if difficulty == 3:
        cons += [{"kind": "para_sentences", "n": k}, {"kind": "no_char", "char": ","}]
    return K.constraint_draft(f"Write a short text about {topic}.", topic, cons, text)


ID_ACROSTIC = "instructions.acrostic-v1"


def _acrostic_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    pool = [w for w in K.ACROSTICS if (len(w) <= 5 if difficulty == 1 else len(w) >= 5)]
    word = rng.choice(pool).upper()
    nouns = K.TOPICS[topic]["nouns"]
    kw = rng.choice(nouns)
    avoid = rng.sample(K.FORBIDDABLE, 3)
    ends = rng.sample([n for n in nouns if n != kw], len(word) - 1) + [kw]
    rng.shuffle(ends)
    out = []
    for ch, end in zip(word.lower(), ends):
        adjs, subj, verbs = K.LEX[ch]
        out.append(f"{rng.choice(adjs).capitalize()} {rng.choice(subj)} {rng.choice(verbs)} the {end}.")
    text = "\n".join(out)
    cons: list[dict[str, Any]] = [{"kind": "acrostic", "word": word, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True}]
    if difficulty >= 2:
        cons += [{"kind": "line_max_chars", "n": max(len(x) for x in out) + rng.randint(0, 6)},
                 {"kind": "line_min_words", "n": 4}]
    if difficulty == 3:
        cons += [{"kind": "distinct_endings", "suffix": 99}, {"kind": "forbidden", "words": avoid}]
    return K.constraint_draft(f"Write an acrostic poem about {topic}.", topic, cons, text)


ID_ALLITERATION = "instructions.alliteration-v1"


def _alliteration_draw(rng: random.Random, difficulty: int) -> Draft:
    letter = rng.choice(sorted(K.LEX))
    n, k = {1: 3, 2: 4, 3: 4}[difficulty], 1 + difficulty
    ends = rng.sample(K.LEX[letter][1], n)  # distinct line endings, one of them the keyword
    kw = rng.choice(ends)
    out = [K.alliterative(rng, letter, k, end) for end in ends]
    text = "\n".join(out)
    cons: list[dict[str, Any]] = [{"kind": "line_count", "n": n, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                  {"kind": "alliteration", "letter": letter, "n": k}]
    if difficulty == 3:
        cons.append({"kind": "distinct_endings", "suffix": 99})
    topic = sorted(K.TOPICS)[ord(letter) % len(K.TOPICS)]
    intro = f"Write {n} alliterative lines on the letter \"{letter.upper()}\"."
    return K.constraint_draft(intro, topic, cons, text)


ID_LIPOGRAM = "instructions.lipogram-v1"
LIPOGRAM_LETTERS = {1: "zqxj", 2: "wykbfv", 3: "eaoit"}


def _lipogram_draw(rng: random.Random, difficulty: int) -> Draft:
    while True:
        letter, topic = rng.choice(LIPOGRAM_LETTERS[difficulty]), rng.choice(sorted(K.TOPICS))
        if K.feasible(topic, [letter]):
            break
    kw = rng.choice([w for w in K.TOPICS[topic]["nouns"] if letter not in w])
    sents = K.prose(rng, topic, 4 + 2 * difficulty, letters=[letter], keywords={kw: 2})
    paras = 2 if difficulty == 3 else 1
    text = "\n\n".join(" ".join(g) for g in K.chunk(sents, paras))
    n = len(words(text))
    cons: list[dict[str, Any]] = [{"kind": "lipogram", "letters": [letter], "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 2, "gate": True},
                                  {"kind": "word_range", "min": n - 8, "max": n + 12, "gate": True}]
    if difficulty >= 2:
        cons.append({"kind": "no_char", "char": ","})
    if difficulty == 3:
        cons.append({"kind": "paragraphs", "n": 2})
    return K.constraint_draft(f"Write a short text about {topic}.", topic, cons, text)


ID_SPELLED_NUMBERS = "instructions.spelled_numbers-v1"


def _spelled_numbers_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    kw = rng.choice(K.TOPICS[topic]["nouns"])
    top = {1: 99, 2: 999, 3: 99_999}[difficulty]
    nums = rng.sample(range(11, top + 1), 1 + difficulty)
    sents = [K.number_sentence(rng, topic, x) for x in nums] + K.prose(rng, topic, 3, keywords={kw: 1})
    rng.shuffle(sents)
    text = " ".join(sents)
    n = len(words(text))
    cons: list[dict[str, Any]] = [{"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                  {"kind": "word_range", "min": n - 10, "max": n + 20, "gate": True},
                                  {"kind": "no_digits"}]
    cons += [{"kind": "spelled", "numbers": [x]} for x in nums]
    intro = f"Write a short report about {topic} that mentions some counts."
    return K.constraint_draft(intro, topic, cons, text)


def _spelled_numbers_probes(task: Task) -> dict[str, str]:
    nums = [x for c in task.hidden["constraints"] if c["kind"] == "spelled" for x in c["numbers"]]
    return K.prose_probes(task) | {"numbers_only": " ".join(K.spell(x) for x in nums) + "."}


ID_POEM_LINES = "instructions.poem_lines-v1"


def _poem_lines_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    nouns, adjs = K.TOPICS[topic]["nouns"], K.TOPICS[topic]["adjs"]
    n, suffix = 2 + 2 * difficulty, {1: 99, 2: 99, 3: 2}[difficulty]
    pool = nouns + [w for L in sorted(K.LEX) for w in K.LEX[L][1]]
    rng.shuffle(pool)
    kw = rng.choice(nouns)
    ends, seen = [], set()
    for w in [kw] + pool:
        if w[-suffix:] not in seen and len(ends) < n:
            ends.append(w)
            seen.add(w[-suffix:])
    rng.shuffle(ends)
    out = [f"{rng.choice(adjs).capitalize()} {rng.choice(nouns)} {rng.choice(K.VERBS)} the {e}." for e in ends]
    if difficulty == 3:
        out = [x.lower() for x in out]
    text = "\n".join(out)
    cons: list[dict[str, Any]] = [{"kind": "line_count", "n": n, "gate": True},
                                  {"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                  {"kind": "line_max_chars", "n": max(map(len, out)) + rng.randint(0, 4)},
                                  {"kind": "line_min_words", "n": 3}]
    if difficulty >= 2:
        cons.append({"kind": "distinct_endings", "suffix": suffix})
    if difficulty == 3:
        cons += [{"kind": "case", "mode": "lower"}, {"kind": "no_char", "char": ","}]
    return K.constraint_draft(f"Write a short poem about {topic}.", topic, cons, text)


COMBO_POOL = ["starts_with", "ends_with", "forbidden", "lipogram", "no_comma", "case", "paragraphs",
              "sentence_count", "highlights", "angle_title", "quoted_whole", "order", "phrase_count"]
CONFLICTS = {("starts_with", "angle_title"), ("starts_with", "quoted_whole"), ("ends_with", "quoted_whole"),
             ("case", "angle_title"), ("case", "highlights")}


def _pick(rng: random.Random, k: int) -> list[str]:
    out: list[str] = []
    for f in rng.sample(COMBO_POOL, len(COMBO_POOL)):
        if len(out) < k and not any((f, o) in CONFLICTS or (o, f) in CONFLICTS for o in out):
            out.append(f)
    return out


ID_COMBO = "instructions.combo-v1"


def _combo_draw(rng: random.Random, difficulty: int) -> Draft:
    feats = _pick(rng, 1 + 2 * difficulty)
    letter = rng.choice("zqxj") if "lipogram" in feats else None
    letters = [letter] if letter else []
    topic = rng.choice(sorted(K.TOPICS))
    nouns = [w for w in K.TOPICS[topic]["nouns"] if not letter or letter not in w]
    kw, a, b, pn = rng.sample(nouns, 4)
    avoid = rng.sample(K.FORBIDDABLE, 3) if "forbidden" in feats else []
    special = [a, b, pn] if {"order", "phrase_count"} & set(feats) else []
    sents = K.prose(rng, topic, 6 + 2 * difficulty, letters, avoid + special, {kw: 2})
    cons: list[dict[str, Any]] = [{"kind": "keyword", "word": kw, "n": 2, "gate": True}]
    if "order" in feats:
        sents.insert(1, K.plain_sentence(rng, topic, letters, avoid + special, keyword=a))
        sents.insert(len(sents) - 1, K.plain_sentence(rng, topic, letters, avoid + special, keyword=b))
        cons.append({"kind": "order", "phrases": [a, b]})
    if "phrase_count" in feats:
        times = rng.randint(2, 3)
        for i in range(times):
            sents.insert(2 + 2 * i, K.PHRASE_SENTENCES[i].format(p=pn))
        cons.append({"kind": "phrase_count", "phrase": pn, "n": times})
    if "highlights" in feats:
        h = rng.randint(2, 3)
        for i in range(h):
            head, last = sents[i][:-1].rsplit(" ", 1)
            sents[i] = f"{head} *{last}*."
        cons.append({"kind": "highlights", "n": h})
    opening, closing = "Here is my answer.", "That is all for now."
    if "starts_with" in feats:
        sents.insert(0, opening)
        cons.append({"kind": "starts_with", "phrase": opening[:-1]})
    if "ends_with" in feats:
        sents.append(closing)
        cons.append({"kind": "ends_with", "phrase": closing})
    p = rng.randint(2, 3) if "paragraphs" in feats else 1
    text = "\n\n".join(" ".join(g) for g in K.chunk(sents, p))
    if "angle_title" in feats:
        text = f"<<The {kw} notes>>\n{text}"  # one newline: the title opens the first paragraph
        cons.append({"kind": "angle_title", "word": kw})
    if "case" in feats:
        mode = rng.choice(["lower", "upper"])
        text = text.lower() if mode == "lower" else text.upper()
        cons.append({"kind": "case", "mode": mode})
    if "quoted_whole" in feats:
        text = f'"{text}"'
        cons.append({"kind": "quoted_whole"})
    n = len(words(text))
    cons.append({"kind": "word_range", "min": n - 10, "max": n + 15, "gate": True})
    cons += [{"kind": "forbidden", "words": avoid}] if avoid else []
    cons += [{"kind": "lipogram", "letters": letters}] if letters else []
    cons += [{"kind": "no_char", "char": ","}] if "no_comma" in feats else []
    cons += [{"kind": "paragraphs", "n": p}] if "paragraphs" in feats else []
    cons += [{"kind": "sentence_count", "n": len(re.findall(r"[^.!?]+[.!?]", text))}] if "sentence_count" in feats else []
    return K.constraint_draft(f"Write a short text about {topic}.", topic, cons, text)


def _domain(dom_id, draw, skill: str, detail: str, exploits=K.prose_probes):
    return register_domain(K.constraint_domain(dom_id, draw, exploits=exploits, description=f"{skill}\n\n{detail}"))


_domain(ID_EXACT_COUNTS, _exact_counts_draw, "Writing to exact sentence, paragraph and word counts.",
        "Exactly S sentences in P paragraphs; d2 adds an exact word count and forbidden words, d3 "
        "sentences per paragraph and no commas.")
_domain(ID_ACROSTIC, _acrostic_draw, "Writing an acrostic: one line per letter of a word, in order.",
        "With a topic keyword; d2 adds a line-length cap and words per line, d3 distinct line endings and "
        "forbidden words.")
_domain(ID_ALLITERATION, _alliteration_draw, "Writing alliterative lines on one letter.",
        "N lines with at least k words (2, 3, 4) starting with the letter and a keyword of that letter; d3 "
        "adds distinct line endings.")
_domain(ID_LIPOGRAM, _lipogram_draw, "Writing prose that never uses given letters (a lipogram).",
        "A rare letter at d1, a common consonant at d2, a vowel or t at d3; with a keyword and a length range.")
_domain(ID_SPELLED_NUMBERS, _spelled_numbers_draw, "Mentioning given numbers spelled out in words, with no digit.",
        "2-4 numbers, up to five digits at d3, in a short report on a topic.", exploits=_spelled_numbers_probes)
_domain(ID_POEM_LINES, _poem_lines_draw, "Writing a short poem under line-count, line-length and line-ending limits.",
        "Exactly N lines of at most K characters and at least three words, no two lines ending alike; "
        "lowercase and no commas at d3.")
_domain(ID_COMBO, _combo_draw, "Writing prose under many combined, jointly satisfiable constraints.",
        "A keyword and a length range plus 3, 5 or 7 constraints from a pool (opening and closing phrases, "
        "forbidden words, a lipogram, casing, counts, highlights, a title, quoting, order, phrase counts).")
