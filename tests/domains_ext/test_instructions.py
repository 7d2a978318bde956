"""The instructions family: constraint checks decide correctly, the substance gate refuses
empty/echo/stuffed/garbled answers, partial credit is per constraint, probes stay at the floor."""

import json

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.verifiers.constraints import check, schema_rules, score_constraints, substance

load_builtin_domains()
IDS = [i for i in DOMAINS.ids() if i.startswith("instructions.")]

TEXT = ("Dear Ms. Tanaka,\n\nThe steady lantern guides the harbor. Every keeper watches a quiet tower.\n\n"
        "We meet at [date] in the [place].\n\nKind regards,\nKofi Mensah\nP.S. The storm reaches the coast.")


def test_family_size():
    assert len(IDS) >= 5, IDS


@pytest.mark.parametrize("c,want", [
    ({"kind": "word_range", "min": 20, "max": 40}, True), ({"kind": "word_range", "min": 50, "max": 90}, False),
    ({"kind": "keyword", "word": "lantern", "n": 1}, True), ({"kind": "keyword", "word": "lantern", "n": 2}, False),
    ({"kind": "keyword", "word": "lant", "n": 1}, False),  # whole words only
    ({"kind": "forbidden", "words": ["very", "storm"]}, False), ({"kind": "forbidden", "words": ["very"]}, True),
    ({"kind": "case", "mode": "lower"}, False), ({"kind": "greeting", "name": "Ms. Tanaka"}, True),
    ({"kind": "signoff", "closing": "Kind regards", "sender": "Kofi Mensah"}, True),
    ({"kind": "signoff", "closing": "Sincerely", "sender": "Kofi Mensah"}, False),
    ({"kind": "postscript"}, True), ({"kind": "placeholders", "n": 2}, True), ({"kind": "placeholders", "n": 3}, False),
    ({"kind": "no_char", "char": "!"}, True), ({"kind": "sentence_max_words", "n": 7}, True),
    ({"kind": "sentence_max_words", "n": 4}, False), ({"kind": "unknown"}, False),
])
def test_check(c, want):
    assert check(TEXT, c) is want


def test_lists_and_sections():
    lst = "1. Alpha beta.\n2. Gamma delta.\n3. Zeta eta."
    assert check(lst, {"kind": "numbered", "n": 3}) and check(lst, {"kind": "items_alphabetical"})
    assert not check("1. a\n3. b", {"kind": "numbered", "n": 2})
    doc = "# Notes on bees\n\n## Overview\nText here.\n- one\n- two\n\n## Risks\nMore.\n- three\n- four"
    assert check(doc, {"kind": "sections", "titles": ["Overview", "Risks"]})
    assert not check(doc, {"kind": "sections", "titles": ["Risks", "Overview"]})
    assert check(doc, {"kind": "bullets_per_section", "n": 2}) and check(doc, {"kind": "title", "word": "bees"})


def test_substance_gate():
    prompt = "Write about lighthouses. Use the word lantern. Write between 5 and 80 words."
    assert substance(TEXT, prompt) == ""
    assert substance(prompt, prompt) != ""  # echo
    assert substance("lantern " * 40 + ".", prompt) != ""  # stuffing
    assert substance("Lantern. Harbor.", prompt) != ""  # too few sentences
    assert substance(TEXT + " zQ9!kk#x8?Lp0@@w3&&rT7!!mm2%^q", prompt) != ""  # garbled tokens
    cons = [{"kind": "keyword", "word": "lantern", "gate": True}, {"kind": "forbidden", "words": ["very"]},
            {"kind": "word_range", "min": 0, "max": 80}]
    assert score_constraints("", cons, prompt, "v").value == 0.0  # empty "avoids" forbidden words: no credit
    assert score_constraints(TEXT, cons, prompt, "v").value == 1.0
    assert score_constraints(TEXT + " It is very calm.", cons, prompt, "v").value == pytest.approx(2 / 3)


def test_schema_rules_gates_and_partial():
    schema = {"type": "object", "required": ["a"], "additionalProperties": False,
              "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"type": "string", "maxLength": 2}}}
    rules, gates = schema_rules(schema, {"a": 3, "b": "xyz"})
    assert not gates and rules["$.a:minimum"] and not rules["$.b:maxLength"]
    assert schema_rules(schema, {"b": "x"})[1]  # missing required
    assert schema_rules(schema, {"a": 1, "c": 0})[1]  # not allowed
    assert not schema_rules(schema, {"a": True})[0]["$.a:type"]  # bool is not an integer


@pytest.mark.parametrize("did", IDS)
def test_reference_partial_probes(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        for seed in range(5):
            task = sample_task(dom, seed, d)
            ref = dom.solve(task)
            assert dom.score(task, ref).value == 1.0
            assert dom.score(task, f"<answer>{ref}</answer>").value == 1.0
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, d, seed)


def test_partial_credit_per_constraint():
    dom = DOMAINS.get("instructions.constrained_text-v1")
    for seed in range(20):
        task = sample_task(dom, seed, 2)
        kinds = [c["kind"] for c in task.hidden["constraints"]]
        if "ends_with" in kinds:
            ref = dom.solve(task)
            cut = ref[: ref.rstrip().rfind(".", 0, len(ref.rstrip()) - 1) + 1]  # drop the final phrase
            s = dom.score(task, cut)
            if s.components and all(v for k, (v, _) in s.components.items() if "word_range" in k or "keyword" in k):
                assert 0 < s.value < 1
                return
    pytest.fail("no task exercised partial credit")


def test_schema_partial_per_property():
    dom = DOMAINS.get("instructions.json_schema-v1")
    task = sample_task(dom, 3, 2)
    ref = json.loads(dom.solve(task))
    k = task.hidden["schema"]["required"][0]
    v = dom.score(task, json.dumps({**ref, k: None})).value
    assert v == pytest.approx(1 - 1 / len(ref))


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures


def test_constraint_draft_refuses_a_reference_that_misses_its_constraints():
    """The kit writes each reference at generation time; a reference that breaks one of its own
    constraints is a generator bug and must fail loudly rather than ship a task."""
    from posttrain.domains.instructions import _kit as K

    cons = [{"kind": "keyword", "word": "lantern", "n": 1}]
    d = K.constraint_draft("Write about lighthouses.", "lighthouse", cons, "The lantern guides us.")
    assert d.hidden["reference"] == "The lantern guides us." and "1. " in d.prompt
    with pytest.raises(AssertionError, match="reference misses"):
        K.constraint_draft("Write about lighthouses.", "lighthouse", cons, "The tower guides us.")
