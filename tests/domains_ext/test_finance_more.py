"""The added finance domains: references score 1 on every difficulty, a wrong field costs credit
(partial, not all), mistake traps and shared probes stay at the floor, generation is
deterministic, the conformance checker passes, and the calculators agree with hand-worked
textbook values."""

import json

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.domains.finance import costing, instruments, per_share

load_builtin_domains()
NEW = ["finance.loan_amortization-v1", "finance.npv_irr-v1", "finance.bond_pricing-v1", "finance.depreciation-v1",
       "finance.lease-v1", "finance.liquidity-v1", "finance.efficiency-v1", "finance.dupont-v1", "finance.ebitda-v1",
       "finance.free_cash_flow-v1", "finance.working_capital_change-v1", "finance.segment_mix-v1",
       "finance.common_size-v1", "finance.dividends-v1", "finance.eps_dilution-v1", "finance.budget_variance-v1",
       "finance.invoice-v1", "finance.bank_reconciliation-v1", "finance.payroll-v1", "finance.breakeven-v1",
       "finance.inventory_costing-v1", "finance.fx_translation-v1", "finance.tax_rate-v1"]


def test_family_reaches_25():
    ids = [i for i in DOMAINS.ids() if i.startswith("finance.")]
    assert set(NEW) <= set(ids)
    assert len(ids) >= 25, len(ids)


@pytest.mark.parametrize("did", NEW)
def test_reference_partial_probes_determinism(did):
    dom = DOMAINS.get(did)
    traps = 0
    for d in dom.difficulties:
        for seed in range(4):
            task = sample_task(dom, seed, d)
            assert json.dumps(task.prompt) == json.dumps(sample_task(dom, seed, d).prompt)
            ref = json.loads(dom.solve(task))
            s = dom.score(task, json.dumps(ref))
            assert s.value == 1.0 and s.verifier_version == did
            for name, probe in dom.probes(task).items():
                assert dom.score(task, probe).value <= 0.05, (name, d, seed)
            traps += len(task.hidden["traps"])
            num = [k for k, v in ref.items() if not isinstance(v, str)]
            wrong = {**ref, num[-1]: ref[num[-1]] * 3 + 7}
            v = dom.score(task, json.dumps(wrong)).value
            assert v < 1.0
            if len(ref) >= 2:
                assert v > 0.0  # one wrong field costs its share, not everything
    assert dom.difficulties == (1, 2, 3)
    if did not in ("finance.npv_irr-v1",):  # NPV mistakes leave IRR/payback right: never a full-wrong trap
        assert traps > 0, "no mistake trap survived: the probes would only be the generic ones"


@pytest.mark.parametrize("did", NEW)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures


def test_loan_payment_textbook():
    v = instruments._loan({"principal": 100_000, "rate": 6.0, "years": 30, "freq": 12, "k": 1})
    assert v["payment"] == pytest.approx(599.55, abs=0.01)
    assert v["interest_portion"] == pytest.approx(500.0)
    assert v["balance_after"] == pytest.approx(100_000 - 99.55, abs=0.01)


def test_npv_irr_textbook():
    v = instruments._project([-1000, 500, 500, 500], 0.10)
    assert v["npv"] == pytest.approx(243.43, abs=0.01)
    assert v["irr_pct"] == pytest.approx(23.375, abs=0.01)
    assert v["payback_years"] == pytest.approx(2.0)
    assert v["decision"] == "accept"


def test_bond_at_par_and_discount():
    par = instruments._bond({"face": 1000, "coupon": 5.0, "yield": 5.0, "years": 10, "freq": 2})
    assert par["price"] == pytest.approx(1000.0)
    disc = instruments._bond({"face": 1000, "coupon": 5.0, "yield": 6.0, "years": 10, "freq": 2})
    assert disc["premium_or_discount"] == "discount" and disc["price"] == pytest.approx(925.61, abs=0.01)


def test_depreciation_methods():
    p = {"cost": 10_000, "salvage": 1_000, "life": 5, "k": 2, "total_units": 1, "units": [0] * 5}
    assert instruments._depreciation({**p, "method": "straight-line"})["depreciation"] == pytest.approx(1800)
    ddb = instruments._depreciation({**p, "method": "double-declining balance"})
    assert ddb["depreciation"] == pytest.approx(2400) and ddb["book_value"] == pytest.approx(3600)
    syd = instruments._depreciation({**p, "method": "sum-of-the-years'-digits"})
    assert syd["depreciation"] == pytest.approx(9000 * 4 / 15)


def test_inventory_fifo_lifo_wavg():
    p = {"u0": 10, "c0": 1.0, "buys": [(10, 2.0), (10, 3.0)], "sold": 15, "revenue": 100.0}
    v = costing._inventory(p)
    assert v["cogs_fifo"] == pytest.approx(10 * 1 + 5 * 2)
    assert v["cogs_lifo"] == pytest.approx(10 * 3 + 5 * 2)
    assert v["cogs_weighted_average"] == pytest.approx(15 * 2.0)
    assert costing._inventory(p, "swapped")["cogs_fifo"] == pytest.approx(v["cogs_lifo"])


def test_eps_treasury_and_antidilution():
    p = {"s0": 1_000_000, "issued": 120_000, "m_issue": 6, "bought": 0, "m_buy": 0, "ni": 2_000_000, "pref": 200_000,
         "options": 100_000, "strike": 10.0, "avg_price": 20.0, "conv_shares": 0, "conv_interest": 0, "tax": 0.25}
    v = per_share._eps(p)
    assert v["weighted_avg_shares"] == pytest.approx(1_060_000)  # July 1 issue: half a year outstanding
    assert v["basic_eps"] == pytest.approx(1_800_000 / 1_060_000)
    assert v["diluted_eps"] == pytest.approx(1_800_000 / 1_110_000)  # 100k options, 50k bought back
    costly = {**p, "conv_shares": 10, "conv_interest": 1_000_000}  # anti-dilutive: excluded
    assert per_share._eps(costly)["diluted_eps"] == pytest.approx(v["diluted_eps"])


def test_budget_variance_label_needs_the_amount():
    dom = DOMAINS.get("finance.budget_variance-v1")
    task = sample_task(dom, 3, 2)
    ref = json.loads(dom.solve(task))
    var = next(k for k in ref if k.startswith("variance_"))
    status = "status_" + var[len("variance_"):]
    s = dom.score(task, json.dumps({**ref, var: ref[var] + 100}))
    assert s.components[status][0] == 0.0 and s.components[var][0] == 0.0
    assert 0 < s.value < 1


def test_bank_reconciliation_sides_agree():
    dom = DOMAINS.get("finance.bank_reconciliation-v1")
    for seed in range(5):
        task = sample_task(dom, seed, 3)
        exp = task.hidden["expected"]
        text = task.prompt[-1]["content"]
        book_end = float(text.split("Book balance at month end: ")[1].split("\n")[0].replace(",", ""))
        assert exp["adjusted_balance"] == pytest.approx(book_end + exp["bank_only_adjustment"]
                                                        + exp["book_error_correction"], abs=0.011)
        assert exp["book_error_correction"] != 0


def test_invoice_accepts_formatted_amounts_and_iso_date():
    dom = DOMAINS.get("finance.invoice-v1")
    task = sample_task(dom, 1, 2)
    ref = json.loads(dom.solve(task))
    styled = {**ref, "total": f"${ref['total']:,.2f}", "vendor": ref["vendor"].upper()}
    assert dom.score(task, json.dumps(styled)).value == 1.0
    assert dom.score(task, json.dumps({**ref, "invoice_date": "01/01/1999"})).value < 1.0
