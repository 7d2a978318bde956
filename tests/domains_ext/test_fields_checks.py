"""Field-level scoring of document answers: scale phrases, parentheses negatives, percentages,
consistency checks and the answer contract (exactly the asked keys)."""

import json

import pytest

from posttrain.verifiers.fields import FieldSpec
from posttrain.verifiers.fields_checks import Check, correct, normalise, score_document_fields, value_of

K = FieldSpec("x", "amount", 1.0, 1e3, rel_tol=1e-3)


@pytest.mark.parametrize("text,want", [
    ("1,200 (in thousands)", 1200.0), ("1,200 in thousands of U.S. dollars", 1200.0), ("$1.2 million", 1200.0),
    ("USD 1.2 millions", 1200.0), ("(300)", -300.0), ("(300) thousand", -300.0), ("(1,300) (in thousands)", -1300.0),
    ("1200", 1200.0), (1200, 1200.0), ("$ 1,200", 1200.0), ("1,200,000 dollars", 1_200_000.0),
])
def test_values_in_the_asked_unit(text, want):
    assert value_of(text, K) == pytest.approx(want)


@pytest.mark.parametrize("text", ["1,200 and 1,300", "about 1,200", "[1200]", "1 2 thousand", "(in thousands)", "", True])
def test_not_one_quantity(text):
    assert value_of(text, K) is None


def test_percent_and_normalise_leave_other_values_alone():
    p = FieldSpec("m", "percent", abs_tol=0.06)
    assert correct("12.5%", 12.5, p) and correct(12.5, 12.5, p) and not correct(0.125, 12.5, p)
    assert normalise(["1,200 (in thousands)"]) == ["1,200 (in thousands)"]


SPECS = [FieldSpec(n, "amount", 1.0, 1e3) for n in ("total_assets", "total_liabilities", "equity")]
EXP = {"total_assets": 900.0, "total_liabilities": 300.0, "equity": 600.0}
CHECKS = [Check("balances", {"total_assets": 1, "total_liabilities": -1, "equity": -1})]


def _score(ans) -> float:
    text = ans if isinstance(ans, str) else json.dumps(ans)
    return score_document_fields(text, SPECS, EXP, CHECKS, "t").value


def test_consistency_lowers_a_contradictory_answer_and_never_pays_alone():
    assert _score(EXP) == 1.0
    assert _score({**EXP, "equity": "600 (in thousands)"}) == 1.0
    off = score_document_fields(json.dumps({**EXP, "equity": 600_000}), SPECS, EXP, CHECKS, "t")
    assert off.value == pytest.approx(2 / 3 * 0.5) and off.components["check:balances"] == (0.0, 0.0)
    # internally consistent, every field wrong (another year, or all at another scale): nothing
    assert _score({"total_assets": 800, "total_liabilities": 250, "equity": 550}) == 0.0
    assert _score({k: v * 1000 for k, v in EXP.items()}) == 0.0
    # consistent answer with one wrong field pair keeps its right fields' credit
    assert _score({"total_assets": 900, "total_liabilities": 350, "equity": 550}) == pytest.approx(1 / 3)


def test_the_answer_contract():
    assert _score({**EXP, "notes": "x"}) == 0.0
    assert _score('{"total_assets": 1, "total_assets": 900, "total_liabilities": 300, "equity": 600}') == 0.0
    assert _score({k: [v, 0] for k, v in EXP.items()}) == 0.0
    assert _score("") == 0.0 and _score("[900, 300, 600]") == 0.0
    partial = score_document_fields(json.dumps({"total_assets": 900}), SPECS, EXP, CHECKS, "t")
    assert partial.value == pytest.approx(1 / 3 * 0.5) and partial.passed == 1
