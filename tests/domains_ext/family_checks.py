"""Checks shared by the family test files (logic, algorithms, text_data): the family's ids,
reference = 1 and wrong < 1 with probes at the floor and determinism, and conformance."""

import json

from posttrain.core.serde import from_dict, to_dict
from posttrain.core.types import Task
from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain

load_builtin_domains()


def defined_in(dom) -> str:
    """The module a domain is written in: its draw function's for a record, else its class's."""
    draw = getattr(dom, "draw", None)
    draw = getattr(draw, "func", draw)  # a functools.partial names its function
    return getattr(draw, "__module__", None) or type(dom).__module__


def family_ids(family: str) -> list[str]:
    """Native ids of ``family`` defined in ``posttrain.domains.<family>``."""
    return [i for i in DOMAINS.ids() if DOMAINS.get(i).family == family
            and defined_in(DOMAINS.get(i)).startswith(f"posttrain.domains.{family}.")]


def roundtrip(task):
    return from_dict(Task, json.loads(json.dumps(to_dict(task))))


def check_reference_and_probes(did: str) -> None:
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        prompts = set()
        for seed in range(4):
            task = sample_task(dom, seed, d)
            assert to_dict(task) == to_dict(sample_task(dom, seed, d))  # deterministic
            prompts.add(task.prompt[-1]["content"])
            ref = dom.solve(task)
            assert dom.score(roundtrip(task), ref).value == 1.0
            assert dom.score(task, f"<answer>{ref}</answer>").value == 1.0
            for name, probe in dom.probes(task).items():
                s = dom.score(task, probe)
                assert s.value <= 0.05, (name, probe, s)
                assert s.verifier_version == did
            assert dom.score(task, ref + "\n" + ref).value < 1.0
        assert len(prompts) > 1


def check_conformance(did: str) -> None:
    report = check_domain(DOMAINS.get(did), seeds=(0, 1), sample=sample_task)
    assert report.ok, report.failures


def task_of(did, seed=0, d=2):
    dom = DOMAINS.get(did)
    return dom, sample_task(dom, seed, d)
