"""The long_context logs, scanning and documents domains: documents grow with difficulty,
references score 1, the planted traps (near conditions, look-alikes, mention order, same-name
records, reformatting) score at the floor, partial answers earn partial credit, generation is
deterministic, and the conformance checker passes."""

import json

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.domains.long_context import documents
from posttrain.domains.long_context._kit import order_credit, parse_names, set_credit

load_builtin_domains()
NEW = ["long_context.log_count-v1", "long_context.timeline-v1", "long_context.record_stats-v1",
       "long_context.table_join-v1", "long_context.contradiction-v1", "long_context.crossref-v1",
       "long_context.kv_override-v1", "long_context.code_callers-v1", "long_context.dedupe-v1",
       "long_context.config_diff-v1"]


def text(task):
    return str(task.prompt[-1]["content"])


def test_family_reaches_15():
    ids = [i for i in DOMAINS.ids() if i.startswith("long_context.")]
    assert set(NEW) <= set(ids) and len(ids) >= 15, ids


@pytest.mark.parametrize("did", NEW)
def test_reference_probes_length_determinism(did):
    dom = DOMAINS.get(did)
    for seed in range(3):
        sizes = []
        for d in dom.difficulties:
            task = sample_task(dom, seed, d)
            assert text(task) == text(sample_task(dom, seed, d))
            sizes.append(len(text(task)))
            s = dom.score(task, dom.solve(task))
            assert s.value == 1.0 and s.verifier_version == did
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, d, seed)
        assert sizes == sorted(sizes) and sizes[-1] > 40_000 and sizes[-1] > 8 * sizes[0], sizes


@pytest.mark.parametrize("did", NEW)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures


def test_set_and_order_credit():
    assert parse_names("a, b", r"[a-z]") == ["a", "b"]
    assert parse_names("a, a", r"[a-z]") is None and parse_names("a\nb", r"[a-z]") is None
    assert set_credit(["a", "b", "x"], ["a", "b", "c"])[0] == pytest.approx(1 / 3)
    assert set_credit(["a", "x", "y"], ["a", "b"])[0] == 0.0
    assert order_credit(list("abcd"), list("abcd")) == 1.0
    assert order_credit(list("dcba"), list("abcd")) == 0.0
    assert order_credit(list("bacd"), list("abcd")) == pytest.approx(2 * 5 / 6 - 1)
    assert order_credit(list("abc"), list("abcd")) == 0.0


def test_log_count_near_matches_are_wrong():
    dom = DOMAINS.get("long_context.log_count-v1")
    for seed in range(4):
        task = sample_task(dom, seed, 3)
        assert task.hidden["looser"] > int(task.hidden["answer"])  # near matches were planted
        assert dom.score(task, str(task.hidden["looser"])).value == 0.0


def test_timeline_partial_and_neutral_listing():
    dom = DOMAINS.get("long_context.timeline-v1")
    task = sample_task(dom, 5, 3)
    order = task.hidden["order"]
    swapped = order[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert 0.5 < dom.score(task, ", ".join(swapped)).value < 1.0
    assert dom.score(task, ", ".join(sorted(order))).value <= 0.05
    assert dom.score(task, ", ".join(sorted(order)[::-1])).value <= 0.05


def test_record_stats_partial():
    dom = DOMAINS.get("long_context.record_stats-v1")
    task = sample_task(dom, 2, 3)
    exp = dict(task.hidden["expected"])
    assert dom.score(task, json.dumps({**exp, "mean": exp["mean"] + 1})).value == pytest.approx(0.75)


def test_table_join_corrections_matter():
    dom = DOMAINS.get("long_context.table_join-v1")
    moved = 0
    for seed in range(4):
        task = sample_task(dom, seed, 4)
        assert "CORRECTIONS" in text(task)
        moved += "uncorrected" in task.hidden["alt"]
        assert dom.score(task, f"{int(task.hidden['answer']):,}").value == 1.0  # thousands separators are fine
    assert moved > 0


def test_contradiction_half_credit():
    dom = DOMAINS.get("long_context.contradiction-v1")
    task = sample_task(dom, 1, 2)
    a, b = task.hidden["pair"]
    assert dom.score(task, f"{a}, {b + 1}").value == pytest.approx(0.5)
    assert dom.score(task, f"S{a}, S{b}").value == 1.0
    assert dom.score(task, f"{a}, {a}").value == 0.0


def test_crossref_traps_present():
    dom = DOMAINS.get("long_context.crossref-v1")
    task = sample_task(dom, 0, 4)
    probes = dom.probes(task)
    assert "superseded" in probes and probes["superseded"] != task.hidden["answer"]
    assert dom.score(task, probes["look_alike"]).value == 0.0


def test_kv_override_semantics():
    defaults = {"a": 5, "b": 7}
    ops = [("set", "a", 10), ("inc", "a", 3), ("set", "b", 1), ("reset", "b", 0), ("set", "a", 2), ("inc", "a", 1)]
    assert documents._apply(defaults, ops) == {"a": 3, "b": 7}
    assert documents._apply(defaults, ops, "first") == {"a": 10, "b": 1}
    assert documents._apply(defaults, ops, "sets_only") == {"a": 2, "b": 1}


def test_code_callers_partial_and_mentions():
    dom = DOMAINS.get("long_context.code_callers-v1")
    task = sample_task(dom, 0, 3)
    callers = task.hidden["callers"]
    assert dom.score(task, ", ".join(callers[:-1])).value == pytest.approx(1 - 1 / len(callers))
    assert len(task.hidden["mention"]) > 2 * len(callers)  # distractors outnumber the callers
    assert dom.score(task, ", ".join(task.hidden["mention"])).value == 0.0


def test_dedupe_and_config_diff_partial():
    dd = DOMAINS.get("long_context.dedupe-v1")
    task = sample_task(dd, 1, 2)
    dups = task.hidden["dups"]
    assert dd.score(task, ", ".join(dups[1:])).value == pytest.approx(1 - 1 / len(dups))
    cd = DOMAINS.get("long_context.config_diff-v1")
    task = sample_task(cd, 1, 3)
    exp = task.hidden["expected"]
    assert cd.score(task, json.dumps({**exp, "added": []})).value == pytest.approx(2 / 3)
    assert cd.score(task, json.dumps({**exp, "extra": []})).value == 0.0
