"""Long-context retrieval: one needle, and several needles at once.

- ``long_context.needle-v1`` — the access code of one named person in a staff handbook of up
  to ~90k characters. Distractors: people sharing the first or last name, revoked former codes
  of the same person, and ticket numbers in the same format in filler paragraphs. Exact match
  of the whole answer.
- ``long_context.multi_needle-v1`` — several facts (codes, extensions, cities, start years)
  about several people at once, answered as one JSON object; field-level scoring with
  :mod:`posttrain.verifiers.fields` (extra keys or list values earn nothing).

Difficulty is length and distractor density: d1 8 people and 6 filler paragraphs (~3k
characters), d2 30/25 (~12k), d3 80/80 (~35k), d4 200/220 (~90k); the share of near-miss names
grows from 20 % to 60 %. What they train: precise lookup in long inputs, resisting near
misses. Not covered: retrieval across documents, questions whose answer is absent.

The answer is written in the document by design (it is retrieval), so these domains are
exempt from the checker's answer-in-prompt heuristic. Probes: a near-miss person's code, the
revoked former code, every code in the document listed, and (multi) the right values under
swapped keys.
"""

from __future__ import annotations

import json
import random
import re

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft
from posttrain.domains.long_context import _kit as K
from posttrain.domains.long_context._corpus import SIZES, assemble, code, make_people, profile
from posttrain.verifiers.fields import FieldSpec

EXEMPT = {"answer_in_prompt": "retrieval: the answer is written in the document by design"}


def _handbook(rng: random.Random, difficulty: int, revoked: int) -> tuple[list[dict], str, dict[str, str]]:
    n, n_fill, near = SIZES[difficulty]
    people = make_people(rng, n, near)
    taken = {p["code"] for p in people}
    old = {}
    for p in rng.sample(people, min(len(people), revoked)):
        c = code(rng)
        while c in taken:
            c = code(rng)
        taken.add(c)
        old[p["name"]] = c
    paras = [profile(rng, p, old.get(p["name"])) for p in people]
    return people, assemble(rng, paras, n_fill, "STAFF HANDBOOK — DIRECTORY AND NOTICES"), old


def _near_miss(people: list[dict], target: dict) -> dict | None:
    first, last = target["name"].split()
    for p in people:
        if p is not target and (p["name"].startswith(first + " ") or p["name"].endswith(" " + last)):
            return p
    return None


ID_NEEDLE = "long_context.needle-v1"


def _needle_draw(rng: random.Random, difficulty: int) -> Draft:
    people, doc, old = _handbook(rng, difficulty, revoked=1 + difficulty * 3)
    with_miss = [p for p in people if _near_miss(people, p)]
    target = rng.choice(with_miss or people)
    miss = _near_miss(people, target)
    q = (f"{doc}\n\nQuestion: what is the current access code of {target['name']}? "
         "Answer with the code only (for example X0-0000).")
    return Draft(q, answer=target["code"],
                 hidden={"near_miss": miss["code"] if miss else None, "revoked": old.get(target["name"])})


def _needle_probes(task: Task) -> dict[str, str]:
    doc = str(task.prompt[-1]["content"])
    out = {"all_codes": "\n".join(sorted(set(re.findall(r"\b[A-Z]\d-\d{4}\b", doc))))}
    if task.hidden.get("near_miss"):
        out["near_miss_person"] = task.hidden["near_miss"]
    if task.hidden.get("revoked"):
        out["revoked_code"] = task.hidden["revoked"]
    return out


FACTS = {"code": ("access code", "choice"), "ext": ("desk phone extension", "count"),
         "city": ("office city", "choice"), "start": ("start year", "count")}


ID_MULTI_NEEDLE = "long_context.multi_needle-v1"


def _multi_needle_draw(rng: random.Random, difficulty: int) -> Draft:
    people, doc, _ = _handbook(rng, difficulty, revoked=difficulty * 2)
    k = 1 + difficulty
    picks = rng.sample(people, min(k, len(people)))
    specs, exp, qs = [], {}, []
    for i, p in enumerate(picks):
        fact = rng.choice(sorted(FACTS))
        key = f"{fact}_{i + 1}"
        label, kind = FACTS[fact]
        specs.append(FieldSpec(key, kind).to_dict())
        exp[key] = p[fact] if kind == "choice" else int(p[fact])
        qs.append(f"- {key}: the {label} of {p['name']}")
    prompt = (f"{doc}\n\nQuestions:\n" + "\n".join(qs) + "\n\nAnswer with one JSON object with exactly the keys "
              + ", ".join(exp) + "; numbers as JSON numbers, codes and cities as strings.")
    return Draft(prompt, hidden={"fields": specs, "expected": exp})


def _multi_needle_probes(task: Task) -> dict[str, str]:
    exp = dict(task.hidden["expected"])
    keys = list(exp)
    rotated = {k: exp[keys[(i + 1) % len(keys)]] for i, k in enumerate(keys)}
    out = {"as_list": json.dumps(list(exp.values())),
           "extra_keys": json.dumps({**exp, "confidence": "high"}),
           "list_values": json.dumps({k: [v, v] for k, v in exp.items()})}
    if all(rotated[k] != exp[k] for k in keys):
        out["rotated_values"] = json.dumps(rotated)
    return out


register_domain(K.lc_domain(
    ID_NEEDLE, _needle_draw, K.exact_cased_check, _needle_probes, exempt=EXEMPT,
    description="Looking up one fact (an access code) in a long staff handbook, resisting near misses.\n\n"
                "Up to ~90k characters; distractors: people sharing a first or last name, revoked former codes, "
                "ticket numbers in the same format. Exact match of the whole answer."))
register_domain(K.lc_domain(
    ID_MULTI_NEEDLE, _multi_needle_draw, K.fields_check, _multi_needle_probes, reference=K.expected_json,
    exempt=EXEMPT,
    description="Looking up several facts about several people in a long handbook at once, answered as JSON.\n\n"
                "Codes, extensions, cities and start years; field-level scoring (extra keys or list values earn "
                "nothing)."))
