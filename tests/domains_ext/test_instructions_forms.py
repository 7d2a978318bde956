"""The prose, layout, templates and formats instruction domains: their constraint kinds decide
correctly, the gates refuse trivial, echoed, repeated and malformed answers, references score
1, partial answers earn partial credit, probes stay at the floor, and every domain passes the
checker."""

import json
import random

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.verifiers.constraints_more import check_any, records, score_any, spell

load_builtin_domains()
NEW = ["exact_counts", "acrostic", "alliteration", "lipogram", "spelled_numbers", "poem_lines", "outline",
       "section_case", "delimited_parts", "highlight", "phrase_placement", "mention_order", "email", "csv_table",
       "markdown_table", "jsonl", "xml_records", "yaml_doc", "template_fill", "line_regex", "combo"]
IDS = [f"instructions.{n}-v1" for n in NEW]


def test_family_size():
    family = [i for i in DOMAINS.ids() if i.startswith("instructions.")]
    assert set(IDS) <= set(family) and len(family) >= 25, family


def test_spell_and_spelled_numbers():
    assert spell(42) == "forty-two" and spell(1205) == "one thousand two hundred five" and spell(90000) == "ninety thousand"
    c = {"kind": "spelled", "numbers": [42]}
    assert check_any("We saw forty two boats.", c) and check_any("We saw forty-two boats.", c)
    assert not check_any("We saw one hundred forty-two boats.", c)  # 42 is not in 142
    assert not check_any("We saw 42 boats.", c)
    assert check_any("We saw one hundred and forty-two boats.", {"kind": "spelled", "numbers": [142]})


@pytest.mark.parametrize("text,c,want", [
    ("Bold bees build.\nRapid rivers reach.\nEager eagles enter.", {"kind": "acrostic", "word": "BRE"}, True),
    ("Bold bees build.\nEager eagles enter.\nRapid rivers reach.", {"kind": "acrostic", "word": "BRE"}, False),
    ("Bold bees build boats.\nBrave bakers bring bread.", {"kind": "alliteration", "letter": "b", "n": 3}, True),
    ("Bold bees build boats.\nThe cat sat.", {"kind": "alliteration", "letter": "b", "n": 3}, False),
    ("A calm harbor.", {"kind": "lipogram", "letters": ["z"]}, True),
    ("A calm harbor.", {"kind": "lipogram", "letters": ["c"]}, False),
    ("One. Two. Three.", {"kind": "sentence_count", "n": 3}, True),
    ("One two three four", {"kind": "word_count", "n": 4}, True),
    ("a b.\nc d.\ne f.", {"kind": "distinct_endings", "suffix": 99}, True),
    ("a bat.\nc cat.", {"kind": "distinct_endings", "suffix": 2}, False),
    ("- Top One\n  - a.\n  - b.\n- Top Two\n  - c.\n  - d.", {"kind": "outline", "n": 2, "k": 2}, True),
    ("- Top One\n  - a.\n- Top Two\n  - c.\n  - d.", {"kind": "outline", "n": 2, "k": 2}, False),
    ("- Top One\nstray line\n  - a.", {"kind": "outline", "n": 1, "k": 1}, False),
    ("## A\nLOUD TEXT.\n\n## B\nquiet text.", {"kind": "section_case", "index": 0, "mode": "upper"}, True),
    ("## A\nLOUD TEXT.\n\n## B\nquiet text.", {"kind": "section_case", "index": 1, "mode": "title"}, False),
    ("A.\n* * *\nB.", {"kind": "delimited", "delim": "* * *", "n": 2}, True),
    ("A.\n* * *\n\n* * *\nB.", {"kind": "delimited", "delim": "* * *", "n": 3}, False),  # an empty part
    ("<<On bees>>\nText.", {"kind": "angle_title", "word": "bees"}, True),
    ("It is *calm* and *bright* here.", {"kind": "highlights", "n": 2}, True),
    ("- item one\n- item two", {"kind": "highlights", "n": 1}, False),  # bullets are not highlights
    ("The mast, then the sail.", {"kind": "order", "phrases": ["mast", "sail"]}, True),
    ("The sail, then the mast.", {"kind": "order", "phrases": ["mast", "sail"]}, False),
    ('"All of it quoted."', {"kind": "quoted_whole"}, True),
    ('"Quoted" and not.', {"kind": "quoted_whole"}, False),
    ("To: a.b@example.org\nSubject: Hi there\n\nHi A,\nText.", {"kind": "email_headers", "to": "a.b@example.org"}, True),
    ("Subject: Hi\nTo: a.b@example.org\n\nHi A,", {"kind": "email_headers", "to": "a.b@example.org"}, False),
    ("x", {"kind": "no_such_kind"}, False),
])
def test_check_any(text, c, want):
    assert check_any(text, c) is want


def test_records_parsers_are_strict():
    assert records("id,name\n1,A\n2,B", "csv") == [{"id": "1", "name": "A", "__keys__": ["id", "name"]},
                                                   {"id": "2", "name": "B", "__keys__": ["id", "name"]}]
    assert records("id,name\n1,A,extra", "csv") is None
    assert records("| a | b |\n|---|---|\n| 1 | 2 |", "md")[0]["a"] == "1"
    assert records("| a | b |\n| 1 | 2 |", "md") is None  # no separator row
    assert records('{"a": 1}\n{"a": 2}', "jsonl")[1]["a"] == 2
    assert records('{"a": 1}\nnot json', "jsonl") is None
    assert records('<r><item id="1"><name>A</name></item></r>', "xml", "r")[0]["name"] == "A"
    assert records('<!DOCTYPE r [<!ENTITY x "y">]><r><item id="&x;"/></r>', "xml", "r") is None
    assert records("items:\n- a: 1\n- a: 2", "yaml", "items")[1]["a"] == 2
    assert records("x: &a [1, 2]\nitems:\n- a: *a", "yaml", "items") is None  # aliases refused
    assert records("", "csv") is None and records("x" * 50_000, "jsonl") is None


def test_structured_gate_and_partial_credit():
    rows = [{"id": i, "qty": q} for i, q in enumerate([5, 3, 9], 1)]
    text = "\n".join(json.dumps(r) for r in rows)
    f = {"fmt": "jsonl"}
    cons = [{"kind": "rec_count", "n": 3, "gate": True, **f}, {"kind": "rec_seq", "key": "id", **f},
            {"kind": "rec_sorted", "key": "qty", **f}, {"kind": "rec_sum", "key": "qty", "total": 17, **f}]
    s = score_any(text, cons, "make records", "v", gate="structured", fmt="jsonl")
    assert s.value == pytest.approx(3 / 4)  # not sorted
    assert score_any(text + '\n{"id": 4, "qty": 1}', cons, "p", "v", gate="structured", fmt="jsonl").value == 0.0
    two = "\n".join(json.dumps(r) for r in rows[:2])
    two_cons = [dict(c, n=2) if c["kind"] == "rec_count" else c for c in cons]
    assert score_any(two, two_cons, "p", "v", gate="structured", fmt="jsonl").value == 0.0  # < 3 records


def test_prose_gate_refuses_repetition():
    cons = [{"kind": "sentence_count", "n": 6}]
    varied = "The lantern guides the harbor. A keeper watches the tower. Every storm reaches the coast. " \
             "The beacon protects a vessel. Our quiet harbor needs the keeper. A bright tower greets us."
    assert score_any(varied, cons, "write", "v").value == 1.0
    assert score_any("The lantern guides the harbor. " * 6, cons, "write", "v").value == 0.0


@pytest.mark.parametrize("did", IDS)
def test_reference_probes_determinism(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        for seed in range(4):
            task = sample_task(dom, seed, d)
            assert task == sample_task(dom, seed, d)
            ref = dom.solve(task)
            assert dom.score(task, ref).value == 1.0, (d, seed, dom.score(task, ref).reason)
            assert dom.score(task, f"<answer>{ref}</answer>").value == 1.0
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, d, seed)
            assert dom.score(task, ref[: len(ref) // 3]).value < 1.0  # a truncated answer is wrong


def _drop_last_char_of_line(text: str, i: int) -> str:
    lines = text.splitlines()
    lines[i] = lines[i][:-1] + "Z9"
    return "\n".join(lines)


@pytest.mark.parametrize("did,mutate", [
    ("instructions.template_fill-v1", lambda t: t.replace("\nContact: ", "\nContact: x ", 1)),
    ("instructions.line_regex-v1", lambda t: _drop_last_char_of_line(t, 1)),
    ("instructions.exact_counts-v1", lambda t: t.replace(".", " today.", 1)),
    ("instructions.csv_table-v1", lambda t: t.replace("\n1,", "\n7,", 1)),
    ("instructions.spelled_numbers-v1", lambda t: t + " We counted 3 more."),
    ("instructions.poem_lines-v1", lambda t: t.replace("\n", " and a long tail of words\n", 1)),
])
def test_partial_credit(did, mutate):
    dom = DOMAINS.get(did)
    for seed in range(6):
        task = sample_task(dom, seed, 2)
        ref = dom.solve(task)
        s = dom.score(task, mutate(ref))
        if mutate(ref) != ref and 0.0 < s.value < 1.0:
            return
    pytest.fail(f"{did}: no partial credit on a one-defect answer ({s.reason})")


def test_combo_has_many_constraints_at_d3():
    dom = DOMAINS.get("instructions.combo-v1")
    sizes = [len(sample_task(dom, s, 3).hidden["constraints"]) for s in range(6)]
    assert min(sizes) >= 7, sizes


def test_generation_uses_only_the_given_rng():
    dom = DOMAINS.get("instructions.lipogram-v1")
    random.seed(1)
    a = dom.generate(random.Random(5), 3)
    random.seed(2)
    assert dom.generate(random.Random(5), 3) == a


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures
