"""A small self-check for domains, used by the tests of the extended families.

It asserts, for seeds x difficulties: the reference scores 1.0; every domain probe, and the
generic exploits (empty, garbage, prompt echo, the reference padded among other candidates,
the reference repeated, a very long answer), score at most 0.05; generation is deterministic
given the rng; the task round-trips through JSON; scores are in [0, 1] with the domain id as
``verifier_version``. It returns the list of failures (empty = pass).

Does not replace the project conformance checker (``posttrain.envs.conformance``); it is the
subset the family tests need while staying fast.
"""

from __future__ import annotations

import json
import random
from typing import Any, Iterable

from posttrain.core.serde import from_dict, to_dict
from posttrain.core.types import Task
from posttrain.domains.base import sample_task

FLOOR = 0.05


def generic_probes(task: Task, ref: str) -> dict[str, str]:
    prompt = " ".join(str(m.get("content", "")) for m in task.prompt)
    return {
        "empty": "",
        "garbage": "lorem ipsum ##$$ 42 ???",
        "echo": prompt,
        "padded": f"7 {ref} 13 x\n{ref}\n0 1 2 -1 {ref} yes no",
        "repeated": "\n".join([ref] * 5),
        "long": "9" * 30_000,
    }


def check_domain_quick(dom: Any, seeds: Iterable[int] = range(4)) -> list[str]:
    failures: list[str] = []
    for d in dom.difficulties:
        for seed in seeds:
            t = sample_task(dom, seed, d)
            t2 = sample_task(dom, seed, d)
            tag = f"{dom.id} d{d} s{seed}"
            if to_dict(t) != to_dict(t2):
                failures.append(f"{tag}: not deterministic")
            blob = json.dumps(to_dict(t))
            if from_dict(Task, json.loads(blob)) != t:
                failures.append(f"{tag}: task does not round-trip through JSON")
            ref = dom.solve(t)
            s = dom.score(t, ref)
            if s.value != 1.0 or s.verifier_version != dom.id:
                failures.append(f"{tag}: reference scored {s.value} ({s.reason})")
            wrapped = dom.score(t, f"thinking...<answer>{ref}</answer>")
            if wrapped.value != 1.0:
                failures.append(f"{tag}: <answer>-wrapped reference scored {wrapped.value}")
            probes = {**generic_probes(t, ref), **dom.probes(t)}
            for name, p in probes.items():
                if isinstance(p, list):
                    continue
                ps = dom.score(t, p)
                if not (0.0 <= ps.value <= FLOOR):
                    failures.append(f"{tag}: probe {name!r} scored {ps.value} ({ps.reason})")
    return failures


def rng_for(seed: int) -> random.Random:
    return random.Random(seed)
