"""The finance family: statements tie out, field scoring normalises units/scales and refuses
padding, references score 1, partial answers score partially, probes stay at the floor."""

import json
import random

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.domains.finance._company import make_company
from posttrain.verifiers.fields import FieldSpec, parse_quantity, score_fields

load_builtin_domains()
# The light tier (filings as text in the prompt); the real tier's PDF filings are multi-turn
# episodes with their own tests (test_filings_pdf.py).
IDS = [i for i in DOMAINS.ids() if i.startswith("finance.") and getattr(DOMAINS.get(i), "tier", "light") == "light"]


def test_family_size():
    assert len(IDS) >= 5, IDS


@pytest.mark.parametrize("seed", range(8))
def test_company_ties_out(seed):
    co = make_company(random.Random(seed), 3)
    for y in co["years"]:
        b, cf, inc = co["balance"][y], co["cashflow"][y], co["income"][y]
        assert b["total_assets"] == b["liabilities_equity"]
        assert cf["cash_end"] == b["cash"] and cf["net_income"] == inc["net_income"]
        assert b["retained"] == co["balance"][y - 1]["retained"] + inc["net_income"] + cf["dividends"]
        assert sum(co["segments"][y].values()) == inc["revenue"]
    last = co["balance"][co["years"][-1]]
    assert sum(co["maturities"].values()) == last["short_debt"] + last["long_debt"]


@pytest.mark.parametrize("text,kind,scale,want", [
    ("$1,234", "amount", 1, 1234), ("(1,234)", "amount", 1, -1234), ("$(2,500)", "amount", 1, -2500),
    ("−12", "amount", 1, -12), ("2.5 million", "amount", 1e3, 2500), ("$2.5bn", "amount", 1e6, 2500),
    ("750k", "amount", 1e6, 0.75), ("USD 3,000", "amount", 1, 3000), ("12.5%", "percent", 1, 12.5),
    (12.5, "percent", 1, 12.5), ("1.25", "ratio", 1, 1.25),
])
def test_parse_quantity_normalises(text, kind, scale, want):
    assert parse_quantity(text, kind, scale) == pytest.approx(want)


@pytest.mark.parametrize("text,kind", [("1 2", "amount"), ("$$5", "amount"), ("5%", "amount"), ("5 million", "percent"),
                                       ("(-5)", "amount"), (True, "amount"), ([5], "amount"), ("five", "ratio")])
def test_parse_quantity_refuses(text, kind):
    assert parse_quantity(text, kind) is None


def test_score_fields_strict_object():
    specs = [FieldSpec("a", "amount", 1.0), FieldSpec("b", "percent", 3.0, abs_tol=0.06)]
    exp = {"a": 100.0, "b": 12.34}
    assert score_fields('{"a": "$100", "b": "12.3%"}', specs, exp, "v").value == 1.0
    assert score_fields('{"a": 100, "b": 99}', specs, exp, "v").value == pytest.approx(0.25)
    assert score_fields('{"a": 100}', specs, exp, "v").value == pytest.approx(0.25)
    assert score_fields('{"a": 100, "b": 12.3, "c": 1}', specs, exp, "v").value == 0.0  # extra key
    assert score_fields('{"a": 100, "a": 100, "b": 12.3}', specs, exp, "v").value == 0.0  # repeated key
    assert score_fields('{"a": [100, 5], "b": 12.3}', specs, exp, "v").value == pytest.approx(0.75)
    assert score_fields('[{"a": 100, "b": 12.3}]', specs, exp, "v").value == 0.0
    assert score_fields('<answer>{"a": 100, "b": 12.3}</answer>', specs, exp, "v").value == 1.0


@pytest.mark.parametrize("did", IDS)
def test_reference_one_partial_between_probes_floor(did):
    dom = DOMAINS.get(did)
    partial = 0
    one_word = False
    for d in dom.difficulties:
        for seed in range(6):
            task = sample_task(dom, seed, d)
            text = dom.solve(task)
            assert dom.score(task, text).value == 1.0
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, probe)
            if not text.startswith("{"):  # the chart-shape domains: one word, no fields to break
                assert getattr(dom, "vision", False) and len(text.split()) == 1, (did, text)
                one_word = True
                continue
            ref = json.loads(text)
            assert dom.score(task, json.dumps(ref)).value == 1.0
            if len(ref) >= 2:
                k = next(k for k in ref if not isinstance(ref[k], str))
                broken = {**ref, k: ref[k] * 3 + 7}
                if "failed_check" in ref:  # the discrepancy gates the check name: break the name
                    broken = {**ref, "failed_check": "none"}
                v = dom.score(task, json.dumps(broken)).value
                assert 0 < v < 1
                partial += 1
    assert partial > 0 or one_word


def test_scale_normalisation_end_to_end():
    dom = DOMAINS.get("finance.extract-v1")
    for seed in range(40):
        task = sample_task(dom, seed, 2)
        spec = task.hidden["fields"][0]
        if spec["scale"] == 1e3:
            ref = json.loads(dom.solve(task))
            k = spec["name"]
            as_millions = {**ref, k: f"${ref[k] / 1000} million"}
            assert dom.score(task, json.dumps(as_millions)).value == 1.0
            return
    pytest.fail("no task asked in thousands")


def test_crosscheck_gate_and_planted_error_visible():
    dom = DOMAINS.get("finance.crosscheck-v1")
    task = sample_task(dom, 4, 3)
    ref = json.loads(dom.solve(task))
    assert ref["discrepancy"] != 0
    wrong_name = next(c for c in ("cash", "net_income", "retained_earnings") if c != ref["failed_check"])
    assert dom.score(task, json.dumps({**ref, "failed_check": wrong_name})).value == pytest.approx(3 / 4)
    assert dom.score(task, json.dumps({**ref, "discrepancy": 1})).value == pytest.approx(1 / 4)  # FCF only


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures
