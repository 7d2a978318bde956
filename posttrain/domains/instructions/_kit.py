"""The kit of the ``instructions`` family: topic vocabularies, reference writers, the
constraint phrasing, and the constructor of the family's constraint-checked records.

What it holds: :data:`TOPICS` and a tiny sentence grammar (:func:`sentence`, :func:`prose`,
:func:`alliterative` ...) that the generators use to write each task's reference; the
wording of every constraint kind (:func:`describe_any`); :func:`constraint_draft`, the task
of a constraint domain (prompt = intro + numbered constraint list, reference in
``hidden["reference"]``); :func:`constraint_domain`, which composes a draw function with the
family's scorer (:func:`posttrain.verifiers.constraints_more.score_any`) and probes into a
:class:`~posttrain.domains.kit.single_turn.SingleTurnDomain`.

Guarantees: every writer draws only from the ``random.Random`` it is given; sentences have no
commas or digits, end with a period and contain none of the ``avoid`` words or letters; the
sentence grammar is a reference writer that provably meets the constraints, not a model of
good prose. :func:`constraint_draft` fails loudly if the written reference misses one of its
own constraints (the reference meets them by construction; a bug must not ship a task).
"""

from __future__ import annotations

import functools
import random
from typing import Any, Callable, Iterable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.constraints import describe
from posttrain.verifiers.constraints_more import check_any, lines, score_any, spell
from posttrain.verifiers.constraints_more import sentences as split_sentences
from posttrain.verifiers.structured import answer_text
from posttrain.verifiers.text import extract_answer

TOPICS = {
    "lighthouse": {"nouns": ["lantern", "keeper", "harbor", "tower", "beacon", "storm", "coast", "vessel"],
                   "adjs": ["distant", "steady", "salty", "quiet", "bright", "old"]},
    "beekeeping": {"nouns": ["hive", "queen", "honey", "colony", "meadow", "pollen", "frame", "keeper"],
                   "adjs": ["golden", "busy", "calm", "sticky", "warm", "small"]},
    "railways": {"nouns": ["platform", "engine", "signal", "timetable", "carriage", "junction", "driver", "track"],
                 "adjs": ["punctual", "long", "noisy", "empty", "early", "late"]},
    "gardening": {"nouns": ["seedling", "compost", "trowel", "greenhouse", "hedge", "soil", "harvest", "bulb"],
                  "adjs": ["fertile", "green", "damp", "tidy", "young", "sunny"]},
    "astronomy": {"nouns": ["telescope", "comet", "nebula", "orbit", "planet", "observer", "crater", "galaxy"],
                  "adjs": ["faint", "cold", "vast", "clear", "ancient", "dark"]},
    "baking": {"nouns": ["dough", "oven", "crust", "flour", "baker", "loaf", "starter", "recipe"],
               "adjs": ["crisp", "soft", "fresh", "golden", "rustic", "sweet"]},
    "sailing": {"nouns": ["mast", "sail", "rudder", "crew", "anchor", "current", "island", "captain"],
                "adjs": ["brisk", "calm", "open", "swift", "sturdy", "blue"]},
    "chess": {"nouns": ["bishop", "knight", "opening", "endgame", "pawn", "board", "player", "gambit"],
              "adjs": ["bold", "quiet", "sharp", "patient", "clever", "careful"]},
}
VERBS = ["guides", "watches", "follows", "shapes", "carries", "protects", "reaches", "needs", "changes", "greets"]
FORBIDDABLE = ["very", "really", "thing", "stuff", "nice", "just", "also", "basically", "literally", "good"]
TEMPLATES = [
    "The {a} {n1} {v} the {n2}.",
    "Every {n1} {v} a {a} {n2}.",
    "A {a} {n1} often {v} the {n2}.",
    "Near the {n2} the {n1} {v} us.",
    "Each {a} {n1} quietly {v} the {n2}.",
]
KEY_TEMPLATES = ["The {kw} {v} the {n2}.", "We noticed the {kw} near the {n2}.", "A {a} {kw} {v} everyone."]


def vocab(topic: str, avoid: Iterable[str] = ()) -> tuple[list[str], list[str], list[str]]:
    bad = {w.lower() for w in avoid}
    t = TOPICS[topic]
    keep = lambda xs: [x for x in xs if x.lower() not in bad]  # noqa: E731
    return keep(t["nouns"]), keep(t["adjs"]), keep(VERBS)


def sentence(rng: random.Random, topic: str, avoid: Iterable[str] = (), keyword: str | None = None) -> str:
    nouns, adjs, verbs = vocab(topic, avoid)
    n1, n2 = rng.sample(nouns, 2)
    fill = {"a": rng.choice(adjs), "n1": n1, "n2": n2, "v": rng.choice(verbs), "kw": keyword or n1}
    tmpl = rng.choice(KEY_TEMPLATES if keyword else TEMPLATES)
    s = tmpl.format(**fill)
    return s[0].upper() + s[1:]


def sentences(rng: random.Random, topic: str, n_words: int, avoid: Iterable[str] = (),
              keywords: dict[str, int] | None = None) -> list[str]:
    """Sentences with at least ``n_words`` words in total and each keyword at least its count."""
    out = []
    for kw, n in (keywords or {}).items():
        out += [sentence(rng, topic, avoid, kw) for _ in range(n)]
    while sum(len(s.split()) for s in out) < n_words:
        out.append(sentence(rng, topic, avoid))
    rng.shuffle(out)
    return out


def chunk(items: list[str], k: int) -> list[list[str]]:
    """``items`` split into ``k`` non-empty consecutive groups (as even as possible)."""
    q, r = divmod(len(items), k)
    out, i = [], 0
    for j in range(k):
        size = q + (1 if j < r else 0)
        out.append(items[i:i + size])
        i += size
    return out


LEX = {  # initial letter -> (adjectives, nouns, verbs in the third person singular)
    "b": (["bright", "bold", "brave", "busy"], ["bees", "bridges", "boats", "bakers"], ["build", "bring", "bless"]),
    "c": (["calm", "clever", "cold", "careful"], ["cats", "coasts", "clocks", "cooks"], ["carry", "catch", "call"]),
    "d": (["dark", "daring", "deep", "dusty"], ["dogs", "doors", "drums", "docks"], ["draw", "drive", "dig"]),
    "f": (["fast", "fair", "fresh", "fond"], ["farmers", "fields", "foxes", "flags"], ["find", "follow", "fill"]),
    "g": (["gentle", "golden", "grand", "green"], ["gardens", "geese", "gates", "guides"], ["greet", "guard", "gather"]),
    "h": (["happy", "humble", "honest", "hardy"], ["horses", "hills", "harbors", "hens"], ["help", "hold", "hear"]),
    "l": (["little", "lively", "lucky", "lonely"], ["lamps", "lakes", "lions", "lanes"], ["light", "lift", "lead"]),
    "m": (["mild", "merry", "misty", "modest"], ["mountains", "mills", "markets", "miners"], ["make", "mend", "meet"]),
    "p": (["proud", "patient", "pale", "polite"], ["painters", "paths", "ponds", "pilots"], ["paint", "plant", "push"]),
    "r": (["rapid", "rustic", "rough", "round"], ["rivers", "roads", "robins", "rafts"], ["reach", "raise", "ride"]),
    "s": (["silent", "steady", "small", "sunny"], ["sailors", "ships", "streets", "stones"], ["seek", "save", "shape"]),
    "t": (["tall", "tidy", "tiny", "tender"], ["towers", "trains", "trees", "tailors"], ["turn", "tend", "trust"]),
    "w": (["warm", "wise", "wild", "windy"], ["wolves", "walls", "wagons", "weavers"], ["watch", "wake", "wash"]),
    "a": (["ancient", "able", "amber", "alert"], ["anchors", "artists", "apples", "arches"], ["admire", "answer", "aid"]),
    "e": (["eager", "early", "easy", "even"], ["engines", "eagles", "editors", "elders"], ["enter", "earn", "echo"]),
    "o": (["old", "open", "odd", "orange"], ["owls", "oceans", "orchards", "oars"], ["open", "offer", "obey"]),
    "n": (["noble", "neat", "new", "narrow"], ["nests", "nights", "nurses", "needles"], ["need", "name", "near"]),
    "i": (["idle", "icy", "inner", "ideal"], ["islands", "inns", "inks", "insects"], ["invite", "inspire", "imagine"]),
}
ACROSTICS = ["harbor", "garden", "planet", "winter", "forest", "silent", "bright", "stream", "candle", "meadow",
             "island", "bread", "storm", "dream", "light", "orbit", "tower", "smile", "ocean"]
PLAIN_VERBS = ["holds", "finds", "brings", "pulls", "draws", "turns", "warms", "fills", "lifts", "spots",
               "guides", "follows", "watches", "shapes", "carries", "protects", "reaches", "greets"]
PLAIN_TEMPLATES = ["A {a} {n1} {v} a {n2}.", "Our {a} {n1} {v} a {n2}.", "The {a} {n1} {v} the {n2}.",
                   "Each {n1} {v} a {a} {n2}.", "Every {a} {n1} {v} our {n2}.", "This {n1} {v} a {a} {n2}.",
                   "My {a} {n1} {v} its {n2}.", "A {n1} {v} our {a} {n2} today.", "Many a {n1} {v} this {n2}."]
DESCRIBE = {
    "sentence_count": "Write exactly {n} sentences, each ending with a period.",
    "word_count": "Use exactly {n} words in total (a hyphenated word counts as two).",
    "para_sentences": "Put exactly {n} sentences in every paragraph.",
    "line_count": "Write exactly {n} non-empty lines.",
    "line_max_chars": "Keep every line to at most {n} characters.",
    "line_min_words": "Put at least {n} words on every line.",
    "acrostic": "Write an acrostic: one line per letter of \"{word}\", each line starting with that letter in order.",
    "alliteration": "On every line, at least {n} words must start with the letter \"{letter}\".",
    "distinct_endings": "No two lines may end with words sharing their last {suffix} letters (no rhymes).",
    "lipogram": "Never use the letter(s) {letters_q} anywhere, in any case.",
    "no_digits": "Do not write any digit (0-9).",
    "spelled": "Mention each of these numbers, spelled out in words: {numbers_txt}.",
    "outline": "Answer with an outline: exactly {n} top-level bullets (\"- \"), each followed by exactly {k} "
               "sub-bullets indented by two spaces (\"  - \"), and nothing else.",
    "sub_max_words": "Keep each sub-bullet to at most {n} words.",
    "top_title_case": "Write every top-level bullet in Title Case (Each Word Capitalised).",
    "section_case": "Write the body of section {index1} in {mode_txt}.",
    "delimited": "Split the response into exactly {n} parts separated by lines containing only \"{delim}\".",
    "part_labels": "Start each part with a line \"{label} X\", X counting from 1.",
    "part_sentences": "Write at least {n} sentences in every part.",
    "part_keyword": "Part {index1} must use the word \"{word}\".",
    "angle_title": "Begin with a title line wrapped in double angular brackets, like <<title>>, containing \"{word}\".",
    "highlights": "Highlight at least {n} phrases with single asterisks, like *this phrase*.",
    "quoted_whole": "Wrap the entire response in one pair of double quotation marks (use no other double quotes).",
    "first_sentence_has": "The first sentence must contain \"{phrase}\".",
    "last_sentence_has": "The last sentence must contain \"{phrase}\".",
    "phrase_count": "Use the phrase \"{phrase}\" exactly {n} times.",
    "order": "Mention these in this order (first mentions): {phrases_txt}.",
    "email_headers": "Format it as an e-mail: first line \"To: {to}\", then \"Subject: ...\", optional header lines, "
                     "then a blank line and the body.",
    "cc": "Add a header line \"Cc: {address}\".",
    "subject_keyword": "The subject must contain the word \"{word}\".",
    "subject_max_words": "Keep the subject to at most {n} words.",
    "salutation": "Open the body with the line \"Hi {name},\".",
    "closing": "End with \"{word},\" on one line and \"{sender}\" on the last line.",
    "bullet_count": "Include exactly {n} bullet points (\"- \") in the body.",
    "rec_count": "Include exactly {n} {rec}s.",
    "rec_keys": "Every {rec} has exactly the fields {keys_txt}{order_txt}.",
    "rec_filled": "Give every field a non-empty value; no two {rec}s may be identical.",
    "rec_attrs": "Write the fields {names_txt} as attributes of each {rec}; every other field is a child element.",
    "rec_tag": "Each child of the root is an <{tag}> element.",
    "rec_int_range": "\"{key}\" must be an integer from {lo} to {hi}.",
    "rec_unique": "No two {rec}s may share the same \"{key}\".",
    "rec_sorted": "Order the {rec}s by \"{key}\", ascending.",
    "rec_enum": "\"{key}\" must be one of {values_txt}.",
    "rec_seq": "\"{key}\" numbers the {rec}s 1, 2, 3, ... in order.",
    "rec_pattern": "\"{key}\" must fully match the regular expression {regex}",
    "rec_sum": "The \"{key}\" values must add up to exactly {total}.",
    "rec_type": "\"{key}\" must be of type {type} (not a string unless the type is string).",
    "yaml_top": "The document is a mapping with exactly the top-level keys {keys_txt}.",
    "yaml_meta": "Under \"{key}\", set exactly these values: {meta_txt}.",
}
RECORD_NAMES = {"csv": "row", "md": "row", "jsonl": "object", "xml": "element", "yaml": "item"}
MODES = {"upper": "ALL CAPITAL LETTERS", "lower": "lowercase letters only", "title": "Title Case (Every Word Capitalised)"}


def describe_any(c: Mapping[str, Any]) -> str:
    k = c["kind"]
    if k not in DESCRIBE:
        return describe(c)
    extra = {"index1": c.get("index", 0) + 1, "mode_txt": MODES.get(c.get("mode", ""), ""),
             "letters_q": ", ".join(f"\"{x}\"" for x in c.get("letters", [])),
             "numbers_txt": ", ".join(str(n) for n in c.get("numbers", [])),
             "phrases_txt": " → ".join(f"\"{p}\"" for p in c.get("phrases", [])),
             "rec": RECORD_NAMES.get(c.get("fmt", ""), "record"),
             "keys_txt": ", ".join(f"\"{x}\"" for x in c.get("keys", [])),
             "names_txt": ", ".join(f"\"{x}\"" for x in c.get("names", [])),
             "order_txt": " in this order" if c.get("ordered") else "",
             "values_txt": ", ".join(f"\"{x}\"" for x in c.get("values", [])) if isinstance(c.get("values"), list) else "",
             "meta_txt": ", ".join(f"{a}: {b!r}" for a, b in (c.get("values") or {}).items())
             if isinstance(c.get("values"), dict) else ""}
    if k == "distinct_endings" and c.get("suffix", 99) >= 20:
        return "No two lines may end with the same word."
    return DESCRIBE[k].format(**{**c, **extra})


def avoided(word: str, letters: Iterable[str] = (), words_: Iterable[str] = ()) -> bool:
    w = word.lower()
    return any(ch in w for ch in letters) or w in {x.lower() for x in words_}


def plain_sentence(rng: random.Random, topic: str, letters: Iterable[str] = (), avoid: Iterable[str] = (),
                   keyword: str | None = None) -> str:
    """One sentence on ``topic`` with none of ``letters`` / ``avoid`` (keyword as its subject)."""
    letters, avoid = list(letters), list(avoid)
    nouns = [w for w in TOPICS[topic]["nouns"] if not avoided(w, letters, avoid) and w != keyword]
    adjs = [w for w in TOPICS[topic]["adjs"] if not avoided(w, letters, avoid)]
    verbs = [w for w in PLAIN_VERBS if not avoided(w, letters, avoid)]
    tmpls = [t for t in PLAIN_TEMPLATES if not avoided(t.format(a="", n1="", v="", n2=""), letters)]
    n1 = keyword or rng.choice(nouns)
    n2 = rng.choice([n for n in nouns if n != n1])
    s = rng.choice(tmpls).format(a=rng.choice(adjs), n1=n1, v=rng.choice(verbs), n2=n2)
    return s[0].upper() + s[1:]


def feasible(topic: str, letters: Iterable[str] = (), avoid: Iterable[str] = ()) -> bool:
    letters, avoid = list(letters), list(avoid)
    return (len([w for w in TOPICS[topic]["nouns"] if not avoided(w, letters, avoid)]) >= 4
            and any(not avoided(w, letters, avoid) for w in TOPICS[topic]["adjs"])
            and sum(not avoided(w, letters, avoid) for w in PLAIN_VERBS) >= 2
            and any(not avoided(t.format(a="", n1="", v="", n2=""), letters) for t in PLAIN_TEMPLATES))


def prose(rng: random.Random, topic: str, n: int, letters: Iterable[str] = (), avoid: Iterable[str] = (),
          keywords: Mapping[str, int] | None = None) -> list[str]:
    """``n`` sentences (at least as many as the keyword uses), keywords placed at random."""
    out = [plain_sentence(rng, topic, letters, avoid, kw) for kw, k in (keywords or {}).items() for _ in range(k)]
    while len(out) < n:
        out.append(plain_sentence(rng, topic, letters, avoid))
    rng.shuffle(out)
    return out


def alliterative(rng: random.Random, letter: str, k: int = 3, end: str | None = None) -> str:
    """A line with at least ``k`` words starting with ``letter`` (adjective, noun, verb, noun)."""
    adjs, nouns, verbs = LEX[letter]
    a1, a2 = rng.sample(adjs, 2)
    n2 = end or rng.choice(nouns)
    n1 = rng.choice([x for x in nouns if x != n2])
    s = f"{a1} {n1} {rng.choice(verbs)} {a2} {n2}." if k > 3 else f"{a1} {n1} {rng.choice(verbs)} the {n2}."
    return s[0].upper() + s[1:]


def number_sentence(rng: random.Random, topic: str, n: int) -> str:
    nouns = TOPICS[topic]["nouns"]
    s = rng.choice(["We counted {w} of them near the {n}.", "About {w} visitors asked about the {n}.",
                    "The {n} has waited {w} days for us.", "Nearly {w} people admired the {n}."])
    out = s.format(w=spell(n), n=rng.choice(nouns))
    return out[0].upper() + out[1:]


PHRASE_SENTENCES = ["We saw the {p} again.", "Everyone talks about the {p}.", "Nobody forgets the {p}.",
                    "Then came the {p}."]


def constraint_draft(intro: str, topic: str, cons: list[dict], reference: str, **hidden: Any) -> Draft:
    """The task of a constraint domain; fails loudly if ``reference`` misses one of ``cons``."""
    bad = [c for c in cons if not check_any(reference, c)]
    if bad:
        raise AssertionError(f"reference misses {bad[:2]}:\n{reference[:400]}")
    listed = "\n".join(f"{i + 1}. {describe_any(c)}" for i, c in enumerate(cons))
    prompt = f"{intro}\n\nFollow every one of these instructions:\n{listed}"
    return Draft(prompt, public={"topic": topic}, hidden={"constraints": cons, "reference": reference, **hidden})


def stored_reference(task: Task) -> str:
    """The reference written at generation time (``hidden["reference"]``)."""
    return task.hidden["reference"]


def check_constraints(task: Task, answer: str, *, gate: str = "prose", fmt: str = "") -> Score:
    """The family's score: :func:`score_any` on the extracted answer (the data block when the
    gate is not ``"prose"``), reported under the task's own domain id."""
    text = extract_answer(answer or "") if gate == "prose" else answer_text(answer or "") or ""
    return score_any(text, task.hidden["constraints"], str(task.prompt[-1]["content"]), task.domain,
                     gate=gate, fmt=fmt, arg=task.hidden.get("arg", ""))


def keyword_probes(task: Task) -> dict[str, str]:
    """Shared probes: keyword stuffing, the topic words, the constraint list, no-sentence prose."""
    cons = task.hidden["constraints"]
    kws = [c["word"] for c in cons if c["kind"] in ("keyword", "part_keyword", "subject_keyword")] or ["topic"]
    topic = task.public.get("topic", "lighthouse")
    nouns = TOPICS.get(topic, TOPICS["lighthouse"])["nouns"]
    return {"keyword_stuffing": " ".join(kws[i % len(kws)] for i in range(80)) + ".",
            "keyword_sentences": " ".join(f"{kws[i % len(kws)].capitalize()} {kws[(i + 1) % len(kws)]}." for i in range(40)),
            "constraint_list": "\n".join(describe_any(c) for c in cons),
            "topic_words": " ".join(nouns)}


def prose_probes(task: Task) -> dict[str, str]:
    """The shared probes plus the reference's first sentence repeated to its line count."""
    ref = task.hidden["reference"]
    first = split_sentences(ref)[0] if split_sentences(ref) else ref
    return keyword_probes(task) | {"repeated_sentence": "\n".join([first] * max(4, len(lines(ref))))}


def constraint_domain(dom_id: str, draw: Callable[[random.Random, int], Draft], *, description: str,
                      exploits: Callable[[Task], Mapping[str, str]] = prose_probes, gate: str = "prose",
                      fmt: str = "") -> SingleTurnDomain:
    """A constraint domain: ``draw`` returns a :func:`constraint_draft`; the record scores with
    :func:`check_constraints` (``gate``, ``fmt``) and answers with the stored reference."""
    return SingleTurnDomain(dom_id, draw, functools.partial(check_constraints, gate=gate, fmt=fmt), exploits,
                            reference=stored_reference, description=description)
