"""Instruction domains over the form of prose: exact counts, acrostics, alliteration,
lipograms, spelled-out numbers and short poems under line limits.

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

Reward: fraction of constraints met behind the gate of
:func:`posttrain.verifiers.constraints_more.score_any` (the structural constraints and the
keyword are gates; the substance check refuses echoes, stuffing, garble and repetition).
What they train: controlling the surface form of text while staying on topic. Not covered:
meaning, meter, real rhyme. Probes: keyword stuffing, the topic words, the constraint list,
and one sentence repeated to the asked count.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _compose as C
from posttrain.domains.instructions import _more as M
from posttrain.verifiers.constraints import words
from posttrain.verifiers.constraints_more import lines, sentences


def _repeat_probe(task: Task) -> str:
    ref = task.hidden["reference"]
    first = sentences(ref)[0] if sentences(ref) else ref
    return "\n".join([first] * max(4, len(lines(ref))))


class _Prose(M.Base):
    def probes(self, task: Task) -> dict[str, str]:
        return M.keyword_probes(task) | {"repeated_sentence": _repeat_probe(task)}


@register_domain
class ExactCounts(_Prose):
    """Exact sentence, paragraph and word counts (see the module docstring)."""

    id = "instructions.exact_counts-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        topic = rng.choice(sorted(C.TOPICS))
        kw = rng.choice(C.TOPICS[topic]["nouns"])
        p, k = rng.randint(2, 2 + difficulty), rng.randint(2, 4)
        avoid = rng.sample(C.FORBIDDABLE, 3)
        sents = M.prose(rng, topic, p * k, avoid=avoid, keywords={kw: 2})
        text = "\n\n".join(" ".join(sents[i * k:(i + 1) * k]) for i in range(p))
        cons: list[dict[str, Any]] = [{"kind": "keyword", "word": kw, "n": 2, "gate": True},
                                      {"kind": "sentence_count", "n": p * k, "gate": True},
                                      {"kind": "paragraphs", "n": p}]
        if difficulty >= 2:
            cons += [{"kind": "word_count", "n": len(words(text))}, {"kind": "forbidden", "words": avoid}]
        if difficulty == 3:
            cons += [{"kind": "para_sentences", "n": k}, {"kind": "no_char", "char": ","}]
        return M.task(self.id, difficulty, f"Write a short text about {topic}.", topic, cons, text)


@register_domain
class Acrostic(_Prose):
    """An acrostic on a word (see the module docstring)."""

    id = "instructions.acrostic-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        topic = rng.choice(sorted(C.TOPICS))
        pool = [w for w in M.ACROSTICS if (len(w) <= 5 if difficulty == 1 else len(w) >= 5)]
        word = rng.choice(pool).upper()
        nouns = C.TOPICS[topic]["nouns"]
        kw = rng.choice(nouns)
        avoid = rng.sample(C.FORBIDDABLE, 3)
        ends = rng.sample([n for n in nouns if n != kw], len(word) - 1) + [kw]
        rng.shuffle(ends)
        out = []
        for ch, end in zip(word.lower(), ends):
            adjs, subj, verbs = M.LEX[ch]
            out.append(f"{rng.choice(adjs).capitalize()} {rng.choice(subj)} {rng.choice(verbs)} the {end}.")
        text = "\n".join(out)
        cons: list[dict[str, Any]] = [{"kind": "acrostic", "word": word, "gate": True},
                                      {"kind": "keyword", "word": kw, "n": 1, "gate": True}]
        if difficulty >= 2:
            cons += [{"kind": "line_max_chars", "n": max(len(x) for x in out) + rng.randint(0, 6)},
                     {"kind": "line_min_words", "n": 4}]
        if difficulty == 3:
            cons += [{"kind": "distinct_endings", "suffix": 99}, {"kind": "forbidden", "words": avoid}]
        return M.task(self.id, difficulty, f"Write an acrostic poem about {topic}.", topic, cons, text)


@register_domain
class Alliteration(_Prose):
    """Alliterative lines (see the module docstring)."""

    id = "instructions.alliteration-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        letter = rng.choice(sorted(M.LEX))
        n, k = {1: 3, 2: 4, 3: 4}[difficulty], 1 + difficulty
        ends = rng.sample(M.LEX[letter][1], n)  # distinct line endings, one of them the keyword
        kw = rng.choice(ends)
        out = [M.alliterative(rng, letter, k, end) for end in ends]
        text = "\n".join(out)
        cons: list[dict[str, Any]] = [{"kind": "line_count", "n": n, "gate": True},
                                      {"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                      {"kind": "alliteration", "letter": letter, "n": k}]
        if difficulty == 3:
            cons.append({"kind": "distinct_endings", "suffix": 99})
        topic = sorted(C.TOPICS)[ord(letter) % len(C.TOPICS)]
        intro = f"Write {n} alliterative lines on the letter \"{letter.upper()}\"."
        return M.task(self.id, difficulty, intro, topic, cons, text)


@register_domain
class Lipogram(_Prose):
    """Prose avoiding letters (see the module docstring)."""

    id = "instructions.lipogram-v1"
    LETTERS = {1: "zqxj", 2: "wykbfv", 3: "eaoit"}

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        while True:
            letter, topic = rng.choice(self.LETTERS[difficulty]), rng.choice(sorted(C.TOPICS))
            if M.feasible(topic, [letter]):
                break
        kw = rng.choice([w for w in C.TOPICS[topic]["nouns"] if letter not in w])
        sents = M.prose(rng, topic, 4 + 2 * difficulty, letters=[letter], keywords={kw: 2})
        paras = 2 if difficulty == 3 else 1
        text = "\n\n".join(" ".join(g) for g in C.chunk(sents, paras))
        n = len(words(text))
        cons: list[dict[str, Any]] = [{"kind": "lipogram", "letters": [letter], "gate": True},
                                      {"kind": "keyword", "word": kw, "n": 2, "gate": True},
                                      {"kind": "word_range", "min": n - 8, "max": n + 12, "gate": True}]
        if difficulty >= 2:
            cons.append({"kind": "no_char", "char": ","})
        if difficulty == 3:
            cons.append({"kind": "paragraphs", "n": 2})
        return M.task(self.id, difficulty, f"Write a short text about {topic}.", topic, cons, text)


@register_domain
class SpelledNumbers(_Prose):
    """Numbers spelled out in words (see the module docstring)."""

    id = "instructions.spelled_numbers-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        topic = rng.choice(sorted(C.TOPICS))
        kw = rng.choice(C.TOPICS[topic]["nouns"])
        top = {1: 99, 2: 999, 3: 99_999}[difficulty]
        nums = rng.sample(range(11, top + 1), 1 + difficulty)
        sents = [M.number_sentence(rng, topic, x) for x in nums] + M.prose(rng, topic, 3, keywords={kw: 1})
        rng.shuffle(sents)
        text = " ".join(sents)
        n = len(words(text))
        cons: list[dict[str, Any]] = [{"kind": "keyword", "word": kw, "n": 1, "gate": True},
                                      {"kind": "word_range", "min": n - 10, "max": n + 20, "gate": True},
                                      {"kind": "no_digits"}]
        cons += [{"kind": "spelled", "numbers": [x]} for x in nums]
        intro = f"Write a short report about {topic} that mentions some counts."
        return M.task(self.id, difficulty, intro, topic, cons, text)

    def probes(self, task: Task) -> dict[str, str]:
        nums = [x for c in task.hidden["constraints"] if c["kind"] == "spelled" for x in c["numbers"]]
        return super().probes(task) | {"numbers_only": " ".join(M.spell(x) for x in nums) + "."}


@register_domain
class PoemLines(_Prose):
    """A short poem under line limits (see the module docstring)."""

    id = "instructions.poem_lines-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        topic = rng.choice(sorted(C.TOPICS))
        nouns, adjs = C.TOPICS[topic]["nouns"], C.TOPICS[topic]["adjs"]
        n, suffix = 2 + 2 * difficulty, {1: 99, 2: 99, 3: 2}[difficulty]
        pool = nouns + [w for L in sorted(M.LEX) for w in M.LEX[L][1]]
        rng.shuffle(pool)
        kw = rng.choice(nouns)
        ends, seen = [], set()
        for w in [kw] + pool:
            if w[-suffix:] not in seen and len(ends) < n:
                ends.append(w)
                seen.add(w[-suffix:])
        rng.shuffle(ends)
        out = [f"{rng.choice(adjs).capitalize()} {rng.choice(nouns)} {rng.choice(C.VERBS)} the {e}." for e in ends]
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
        return M.task(self.id, difficulty, f"Write a short poem about {topic}.", topic, cons, text)
