"""The terminal, long_horizon and code families are records of functions (issue 19): every
domain is one of the kits' records, carries its own one-line skill, and the shared checkers
read the id they score for from the task."""

import dataclasses
import sys

import pytest

from posttrain.cli.domains_cmd import describe
from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.envs.tool_env import format_answer

load_builtin_domains()

FAMILIES = ("terminal", "long_horizon", "code")
RECORDS = {"TreeDomain", "LongDomain", "ReplDomain", "SingleTurnDomain", "SynthDomain", "RepoDomain"}


def _native(family):
    return [DOMAINS.get(i) for i in DOMAINS.ids()
            if DOMAINS.get(i).family == family and getattr(DOMAINS.get(i), "native", True)]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_domain_is_a_record_with_its_own_skill(family):
    doms = _native(family)
    assert doms
    kit_lines = set()
    for mod in (f"posttrain.domains.{family}._kit", "posttrain.domains.code._synth_common"):
        if mod in sys.modules:
            kit_lines.add(sys.modules[mod].__doc__.strip().splitlines()[0])
    summaries = {}
    for dom in doms:
        assert type(dom).__name__ in RECORDS, (dom.id, type(dom).__name__)
        line = describe(dom)["summary"]
        assert line and line not in kit_lines, (dom.id, line)
        summaries.setdefault(line, []).append(dom.id)
    shared = {k: v for k, v in summaries.items() if len(v) > 1}
    assert not shared, shared


def test_code_checker_scores_for_the_task_id():
    """One checker serves every repair domain: the Score names the id of the task it got."""
    dom = DOMAINS.get("code.repair_division-v1")
    task = sample_task(dom, 0, 1)
    other = dataclasses.replace(task, domain="code.repair_comparison-v1")
    s = dom.score(other, format_answer(task.hidden["reference"]))
    assert s.value == pytest.approx(1.0) and s.verifier_version == "code.repair_comparison-v1"
    wrong = dom.score(task, format_answer(task.public["program"]))
    assert wrong.value <= 0.05 and wrong.verifier_version == "code.repair_division-v1"
