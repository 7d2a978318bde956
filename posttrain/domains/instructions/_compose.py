"""Topic vocabularies and a tiny sentence grammar: what the instruction generators ask about
and what the reference solvers write.

Guarantees: sentences have no commas, at most nine words, end with a period, never contain a
word from the ``avoid`` set, and are deterministic given the ``random.Random``. This is a
reference writer that provably meets the constraints, not a model of good prose.
"""

from __future__ import annotations

import random
from typing import Iterable

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
