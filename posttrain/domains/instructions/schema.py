"""``instructions.json_schema-v1``: produce one JSON object that complies with a JSON Schema and
with value requirements stated in prose.

The generator draws a record schema (strings with length and pattern limits, bounded integers
and numbers, enums, arrays with item rules and uniqueness, and at d3 a nested object) plus
2-4 prose requirements ("set category to \"tools\"", "count must equal the number of tags"),
which the verifier adds to its hidden copy of the schema as ``const`` rules.

Reward: the fraction of the answer's properties that satisfy every rule of their schema
(:func:`posttrain.verifiers.constraints.schema_rules`; all-or-nothing per property, so an
empty string cannot earn a "maxLength" point), 0 unless the gate holds: exactly one JSON object, every required key present at every level
and no key the schema does not allow. What it trains: structured output under a schema and
reading prose requirements. Not covered: ``$ref``, ``oneOf``/``anyOf``, formats.

Probes: the schema itself as the answer, the reference with an extra key, the reference without
a required key, every value ``null``, every value the empty string.
"""

from __future__ import annotations

import copy
import json
import random
import re
import string
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions._kit import TOPICS
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.constraints import schema_rules
from posttrain.verifiers.fields import parse_object

CATEGORIES = ["tools", "garden", "kitchen", "outdoor", "office", "toys", "books"]


def _prop_pool(rng: random.Random, topic: str) -> dict[str, tuple[dict, Any]]:
    """Candidate properties: name -> (schema, a conforming value)."""
    lo = rng.randint(1, 20)
    hi = lo + rng.randint(5, 50)
    cap = rng.choice([50, 100, 250])
    letters = "".join(rng.sample(string.ascii_uppercase, 3))
    nouns = TOPICS[topic]["nouns"]
    n_tags = rng.randint(2, 4)
    return {
        "name": ({"type": "string", "minLength": 3, "maxLength": 24, "pattern": "^[A-Z][a-z]+( [A-Z][a-z]+)*$"},
                 f"{rng.choice(TOPICS[topic]['adjs']).capitalize()} {rng.choice(nouns).capitalize()}"),
        "sku": ({"type": "string", "pattern": f"^{letters}-[0-9]{{4}}$"}, f"{letters}-{rng.randint(1000, 9999)}"),
        "quantity": ({"type": "integer", "minimum": lo, "maximum": hi}, rng.randint(lo, hi)),
        "price": ({"type": "number", "minimum": 0, "exclusiveMaximum": cap}, round(rng.uniform(1, cap - 1), 2)),
        "category": ({"type": "string", "enum": CATEGORIES}, rng.choice(CATEGORIES)),
        "tags": ({"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 12},
                  "minItems": 2, "maxItems": 4, "uniqueItems": True}, rng.sample(nouns, n_tags)),
        "ratings": ({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 5}, "minItems": 3},
                    [rng.randint(1, 5) for _ in range(rng.randint(3, 5))]),
        "available": ({"type": "boolean"}, rng.choice([True, False])),
    }


def _nested(rng: random.Random) -> tuple[dict, Any]:
    dims = {k: rng.randint(2, 90) for k in ("width", "height", "depth")}
    props = {k: {"type": "integer", "minimum": 1, "maximum": 100} for k in dims}
    return ({"type": "object", "properties": props, "required": list(dims), "additionalProperties": False}, dims)


def _requirements(rng: random.Random, value: dict, k: int) -> list[tuple[str, str, Any]]:
    """Prose requirements as (key, sentence, required value), drawn from the value's keys."""
    out = []
    for key in rng.sample(sorted(value), len(value)):
        v = value[key]
        if isinstance(v, bool) or isinstance(v, (dict, list)):
            continue
        out.append((key, f"The \"{key}\" field must be {json.dumps(v)}.", v))
        if len(out) == k:
            break
    return out


ID_JSON_SCHEMA = "instructions.json_schema-v1"


def _json_schema_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(TOPICS))
    pool = _prop_pool(rng, topic)
    keys = rng.sample(sorted(pool), 2 + 2 * difficulty)
    if difficulty == 3:
        pool["dimensions"] = _nested(rng)
        keys.append("dimensions")
    props = {k: pool[k][0] for k in keys}
    value = {k: pool[k][1] for k in keys}
    required = sorted(rng.sample(keys, max(2, len(keys) - difficulty + 1)))
    schema = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
    for k in keys:
        if k not in required and rng.random() < 0.5:
            value.pop(k)  # optional keys may be left out by the reference
    reqs = _requirements(rng, {k: value[k] for k in required if k in value}, 1 + difficulty)
    hidden = copy.deepcopy(schema)
    for key, _, v in reqs:
        hidden["properties"][key]["const"] = v
    prose = "\n".join(f"- {s}" for _, s, _ in reqs)
    prompt = (f"Produce one JSON object describing an item for a shop about {topic}. It must validate "
              f"against this JSON Schema:\n{json.dumps(schema, indent=1)}\n\nValue requirements:\n{prose}\n\n"
              "Answer with the JSON object only.")
    return Draft(prompt, public={"schema": schema},
                 hidden={"schema": hidden, "reference": value})


def _json_schema_reference(task: Task) -> str:
    return json.dumps(task.hidden["reference"])


def _json_schema_check(task: Task, answer: str) -> Score:
    obj, why = parse_object(answer)
    rules, gates = schema_rules(task.hidden["schema"], obj if obj is not None else {})
    groups: dict[str, bool] = {}
    for path, ok in rules.items():  # "$.tags[0]:type" belongs to property "tags"
        if not path.startswith("$."):  # the root must be an object: parse_object saw to it
            continue
        prop = re.split(r"[.\[:]", path[2:], maxsplit=1)[0]
        groups[prop] = groups.get(prop, True) and ok
    comps = {k: (1.0 if v else 0.0, 1.0) for k, v in groups.items()}
    met = sum(groups.values())
    if obj is None or gates or not groups:
        return Score(0.0, components=comps, passed=met, total=len(groups),
                     reason=why or f"gate: {gates[:4]}", verifier_version=task.domain)
    return Score.weighted(comps, passed=met, total=len(groups),
                          reason=f"{met}/{len(groups)} properties valid", verifier_version=task.domain)


def _json_schema_probes(task: Task) -> dict[str, str]:
    ref = task.hidden["reference"]
    req = task.hidden["schema"]["required"]
    return {"schema_as_answer": json.dumps(task.public["schema"]),
            "extra_key": json.dumps({**ref, "comment": "ok"}),
            "missing_required": json.dumps({k: v for k, v in ref.items() if k != req[0]}),
            "all_null": json.dumps({k: None for k in ref}),
            "all_empty_strings": json.dumps({k: "" for k in ref}),
            "array_wrapped": json.dumps([ref])}


register_domain(SingleTurnDomain(
    ID_JSON_SCHEMA, _json_schema_draw, _json_schema_check, _json_schema_probes, reference=_json_schema_reference,
    description="Producing one JSON object that complies with a JSON Schema and prose value requirements.\n\n"
                + __doc__))
