"""The single-turn kit: a record of functions passes the conformance checker, and its guarantees hold."""

import random

import pytest

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import _check, sample_task
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, exact_check
from posttrain.rollout.conformance import check_domain

ID = "math.kit_digit_sum-v1"


def _draw(rng: random.Random, difficulty: int) -> Draft:
    n = rng.randint(10 ** difficulty, 10 ** (difficulty + 1) - 1)
    return Draft(f"Sum the digits of {n}. Reply with the number only.",
                 answer=str(sum(map(int, str(n)))), public={"number": n})


def _probes(task: Task) -> dict[str, str]:
    return {"echo_number": str(task.public["number"]),
            "off_by_one": str(int(task.hidden["answer"]) + 1)}


DOM = SingleTurnDomain(ID, _draw, exact_check, _probes, description="Digit sums.\nMore.")


def test_the_record_is_a_domain_and_passes_the_conformance_checker():
    _check(DOM)  # the registry's attribute checks
    assert DOM.family == "math" and DOM.env_kind == "single_turn"
    report = check_domain(DOM, seeds=(0, 1))
    assert report.ok, report.failures


def test_generate_is_deterministic_and_scores_with_the_records_id():
    a, b = sample_task(DOM, 7, 2), sample_task(DOM, 7, 2)
    assert a == b and a.domain == ID and a.public["number"] >= 100
    s = DOM.score(a, DOM.solve(a))
    assert s.value == 1.0 and s.verifier_version == ID
    assert DOM.score(a, DOM.probes(a)["off_by_one"]).value == 0.0


def test_a_draw_that_builds_a_task_for_another_id_is_refused():
    bad = SingleTurnDomain(ID, lambda rng, d: make_task("math.other-v1", d, "x", answer="1"),
                           exact_check)
    with pytest.raises(ValueError, match="math.other-v1"):
        bad.generate(random.Random(0), 1)
    good = SingleTurnDomain(ID, lambda rng, d: make_task(ID, d, "x", answer="1"), exact_check)
    assert good.generate(random.Random(0), 1).hidden["answer"] == "1"


def test_the_docs_sandbox_example_is_a_domain_that_passes_the_checker():
    """docs/domains.md's TreeDomain example, as written there, in a real sandbox."""
    from posttrain.sandbox import isolated_available

    if not isolated_available()[0]:
        pytest.skip("needs bubblewrap")
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "domains.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "TreeDomain(" in b)
    scope = {"register_domain": lambda d: d}
    exec("from posttrain.domains.terminal._kit import TreeDomain, shell, tree_task\n" + code, scope)
    dom = scope["DOMAIN"]
    report = check_domain(dom, seeds=(0, 1), difficulties=(1, 3))
    assert report.ok, report.failures
