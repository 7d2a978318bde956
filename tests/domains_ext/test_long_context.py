"""The long_context family: documents grow with difficulty, distractors are present, the
references score 1, the near-miss / revoked / one-hop-short / unordered-log traps score 0."""

import json
import re

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain

load_builtin_domains()
# Native domains only: adapter domains (reasoning-gym's needle_haystack) have their own levels.
# The real tier's PDF reports are multi-turn episodes with their own tests (test_filings_pdf.py).
IDS = [i for i in DOMAINS.ids() if i.startswith("long_context.")
       and getattr(DOMAINS.get(i), "native", True) is not False
       and getattr(DOMAINS.get(i), "tier", "light") == "light"]


def text(task):
    return str(task.prompt[-1]["content"])


def test_family_size():
    assert len(IDS) >= 5, IDS


@pytest.mark.parametrize("did", IDS)
def test_length_grows_with_difficulty(did):
    dom = DOMAINS.get(did)
    sizes = [len(text(sample_task(dom, 0, d))) for d in dom.difficulties]
    assert sizes == sorted(sizes) and sizes[-1] > 8 * sizes[0], sizes
    assert sizes[-1] > 40_000


@pytest.mark.parametrize("did", IDS)
def test_reference_and_probes(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        for seed in range(4):
            task = sample_task(dom, seed, d)
            ref = dom.solve(task)
            assert dom.score(task, ref).value == 1.0
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, d, seed)


def test_needle_distractors_present():
    dom = DOMAINS.get("long_context.needle-v1")
    task = sample_task(dom, 3, 3)
    doc = text(task)
    assert task.hidden["near_miss"] and task.hidden["near_miss"] in doc
    assert task.hidden["revoked"] is None or task.hidden["revoked"] in doc
    assert len(set(re.findall(r"\b[A-Z]\d-\d{4}\b", doc))) > 100  # look-alike codes everywhere
    assert doc.count(task.hidden["answer"]) == 1


def test_latest_trap_is_not_the_answer():
    dom = DOMAINS.get("long_context.latest-v1")
    for seed in range(10):
        task = sample_task(dom, seed, 3)
        assert task.hidden["last_mentioned"] != task.hidden["answer"]
        assert dom.score(task, task.hidden["last_mentioned"]).value == 0.0


def test_multi_needle_partial_credit():
    dom = DOMAINS.get("long_context.multi_needle-v1")
    task = sample_task(dom, 2, 3)
    exp = dict(task.hidden["expected"])
    k = next(iter(exp))
    exp[k] = "nowhere" if isinstance(exp[k], str) else exp[k] + 1
    assert dom.score(task, json.dumps(exp)).value == pytest.approx(1 - 1 / len(exp))


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures


def test_records_carry_their_exemptions_and_checkers_read_the_task_id():
    """The family's records are built by one kit constructor: retrieval records keep their
    answer-in-prompt exemption (and only those), and a shared checker reports the id of the
    task it scores, not of the record it was first written for."""
    from posttrain.domains._helpers import make_task
    from posttrain.domains.long_context import _kit as K

    exempt = {i for i in IDS if dict(DOMAINS.get(i).conformance_exempt)}
    assert exempt == {"long_context.needle-v1", "long_context.multi_needle-v1", "long_context.multihop-v1",
                      "long_context.crossref-v1"}
    assert all(tuple(DOMAINS.get(i).difficulties) == (1, 2, 3, 4) for i in IDS)
    check = K.set_check(r"[a-z]+", "names")
    t = make_task("long_context.any-v1", 1, "q", hidden={"names": ["ada", "bo"]})
    s = check(t, "bo, ada")
    assert s.value == 1 and s.verifier_version == "long_context.any-v1"
    assert check(t, "bo, ada, cy").value == pytest.approx(0.5)  # (2 right - 1 wrong) / 2
