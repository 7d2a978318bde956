"""Finance domains over time-value instruments: loans, project cash flows, bonds, fixed assets, leases.

- ``finance.loan_amortization-v1`` — level-payment loan: the payment, lifetime interest and
  (d2+) one row of the amortisation schedule (interest part, principal part, balance after);
  d3 adds quarterly/semi-annual payment frequencies and interest paid to date.
- ``finance.npv_irr-v1`` — a project's cash flows: NPV, payback (d1); IRR and an accept/reject
  decision gated on the NPV (d2); profitability index and discounted payback (d3).
- ``finance.bond_pricing-v1`` — price and current yield from a market yield (d1 annual
  coupons; d2 semi-annual, premium/discount gated on the price); d3 gives a quoted price and
  asks the yield to maturity and Macaulay duration.
- ``finance.depreciation-v1`` — year-k depreciation, accumulated depreciation and book value:
  straight-line (d1); double-declining balance or sum-of-the-years'-digits (d2); units of
  production too (d3).
- ``finance.lease-v1`` — lessee accounting: the lease liability as the present value of the
  payments (arrears at d1, arrears or advance above), year-1 interest, closing liability,
  right-of-use amortisation, and (d3, with initial direct costs) total year-1 expense.

What they train: discounting and annuity arithmetic, schedules, root finding (IRR, YTM) within
tolerance (IRR/YTM ±0.06 points, amounts 0.1 %). Not covered: day-count conventions, clean vs
dirty bond prices, tax depreciation tables, lease modifications, variable payments.

Probes (besides the shared ones of :mod:`._kit`): complete answers computed with a typical
mistake — the annual rate used per period, simple interest, undiscounted cash flows,
discounting from period 1, coupon and yield swapped, annual compounding of semi-annual bonds,
salvage ignored, declining balance on the depreciable base, payment timing swapped, an
undiscounted lease — each kept only when every field is wrong.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import build, days, fields_from, money, pick

FREQ = {1: "annual", 2: "semi-annual", 4: "quarterly", 12: "monthly"}
ADV = {1: "annually", 2: "semi-annually", 4: "quarterly", 12: "monthly"}


def _loan(p: dict, mistake: str | None = None) -> dict[str, float]:
    n, f = p["years"] * p["freq"], p["freq"]
    i = p["rate"] / 100 / (1 if mistake == "rate_not_divided" else f)
    pay = p["principal"] * i / (1 - (1 + i) ** -n)
    if mistake == "simple_interest":
        pay = p["principal"] * (1 + p["rate"] / 100 * p["years"]) / n
    bal, to_date = float(p["principal"]), 0.0
    for _ in range(p["k"]):
        interest = bal * i
        bal -= pay - interest
        to_date += interest
    return {"payment": pay, "total_interest": pay * n - p["principal"], "interest_portion": interest,
            "principal_portion": pay - interest, "balance_after": bal, "interest_to_date": to_date}


ID_LOAN_AMORTIZATION = "finance.loan_amortization-v1"


def _draw_loan_amortization(rng: random.Random, difficulty: int) -> Task:
    freq = 12 if difficulty < 3 else rng.choice([12, 4, 2])
    years = rng.randint(2, 30)
    p = {"principal": rng.randint(20, 900) * 500, "rate": rng.randint(250, 1200) / 100, "years": years,
         "freq": freq, "k": rng.randint(2, years * freq - 1)}
    v = _loan(p)
    names = {1: ["payment", "total_interest"], 2: ["payment", "interest_portion", "principal_portion", "balance_after"],
             3: ["payment", "interest_portion", "principal_portion", "balance_after", "interest_to_date"]}[difficulty]
    k = p["k"]
    table = {"payment": (money, "the level payment per period"),
             "total_interest": (money, "total interest paid over the life of the loan"),
             "interest_portion": (money, f"the interest part of payment number {k}"),
             "principal_portion": (money, f"the principal part of payment number {k}"),
             "balance_after": (money, f"the outstanding balance right after payment number {k}"),
             "interest_to_date": (money, f"total interest paid in payments 1 through {k}")}
    doc = (f"Loan agreement summary\nPrincipal: ${p['principal']:,}\nNominal annual interest rate: {p['rate']}%, "
           f"compounded {ADV[freq]}\n"
           f"Payments: {FREQ[freq]}, level, at the end of each period\nTerm: {years} years "
           f"({years * freq} payments)\nThe periodic rate is the annual rate divided by the number of payments per year.")
    return _kit.scenario_task(ID_LOAN_AMORTIZATION, difficulty, doc, _loan,
                              p, table, names, ("rate_not_divided", "simple_interest"))


register_domain(_kit.field_domain(ID_LOAN_AMORTIZATION, _draw_loan_amortization, """\
Loan amortisation: the level payment, lifetime interest and a row of the schedule.

Level-payment loan: the payment, lifetime interest and (d2+) one row of the amortisation
schedule (interest part, principal part, balance after); d3 adds quarterly/semi-annual payment
frequencies and interest paid to date.
"""))


def _irr(flows: list[float]) -> float:
    f = lambda r: sum(c / (1 + r) ** t for t, c in enumerate(flows))  # noqa: E731
    lo, hi = -0.9, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def _payback(flows: list[float]) -> float:
    cum = flows[0]
    for t, c in enumerate(flows[1:], start=1):
        if cum + c >= 0:
            return t - 1 + (-cum) / c
        cum += c
    return float(len(flows))


def _project(flows: list[float], r: float, mistake: str | None = None) -> dict[str, float | str]:
    shift = 1 if mistake == "discount_from_1" else 0
    pv = [c / (1 + r) ** (t + shift) for t, c in enumerate(flows)]
    if mistake == "undiscounted":
        pv = list(flows)
    npv = sum(pv)
    return {"npv": npv, "irr_pct": 100 * _irr(flows), "payback_years": _payback(flows),
            "profitability_index": sum(pv[1:]) / -pv[0], "discounted_payback_years": _payback(pv),
            "decision": "accept" if npv > 0 else "reject"}


ID_NPV_IRR = "finance.npv_irr-v1"


def _draw_npv_irr(rng: random.Random, difficulty: int) -> Task:
    while True:
        inv = rng.randint(20, 500) * 1000
        n = rng.randint(3, 4 + 2 * difficulty)
        flows = [-inv] + [rng.randint(10, 45) * inv // 100 for _ in range(n)]
        r = rng.randint(4, 16) / 100
        v = _project(flows, r)
        if abs(v["npv"]) > 0.03 * inv and sum(flows) > 0.1 * inv and v["payback_years"] < n:
            break
    names = {1: ["npv", "payback_years"], 2: ["npv", "irr_pct", "payback_years", "decision"],
             3: ["npv", "irr_pct", "profitability_index", "discounted_payback_years", "decision"]}[difficulty]
    if difficulty == 3 and v["npv"] <= 0:  # a discounted payback exists only when NPV > 0
        names[3] = "payback_years"
    table = {"npv": (money, f"net present value at a {r:.0%} discount rate (year-0 flow undiscounted)"),
             "irr_pct": (_kit.percent, "internal rate of return, in percent"),
             "payback_years": (days, "simple payback period in years, interpolating within the year"),
             "profitability_index": (_kit.ratio, "present value of the year 1+ flows / initial investment"),
             "discounted_payback_years": (days, "discounted payback period in years, interpolating within the year"),
             "decision": (_kit.choice, "accept or reject the project by the NPV rule")}
    rows = "\n".join(f"Year {t}: {'(' + format(-c, ',') + ')' if c < 0 else format(c, ',')}"
                     for t, c in enumerate(flows))
    doc = (f"Capital project appraisal. Expected cash flows in U.S. dollars (year 0 is today; later flows arrive "
           f"at year end; parentheses are outflows):\n{rows}\nThe company's cost of capital is {r:.0%}.")
    traps = {m: pick(_project(flows, r, m), names) for m in ("undiscounted", "discount_from_1")}
    for t in traps.values():
        t.pop("decision", None)
    return build(ID_NPV_IRR, difficulty, doc, fields_from(v, table, names), scale=1.0, traps=traps,
                 gates={"decision": "npv"} if "decision" in names else None)


register_domain(_kit.field_domain(ID_NPV_IRR, _draw_npv_irr, """\
Capital budgeting from a project's cash flows: NPV, IRR, payback, profitability index.

A project's cash flows: NPV, payback (d1); IRR and an accept/reject decision gated on the NPV
(d2); profitability index and discounted payback (d3).
"""))


def _bond(p: dict, mistake: str | None = None) -> dict[str, float | str]:
    f = 1 if mistake == "annual_compounding" else p["freq"]
    c, y = (p["yield"], p["coupon"]) if mistake == "swapped" else (p["coupon"], p["yield"])
    n, face = p["years"] * f, p["face"]
    cf = [face * c / 100 / f] * n
    cf[-1] += face
    pvs = [x / (1 + y / 100 / f) ** (t + 1) for t, x in enumerate(cf)]
    price = sum(pvs)
    return {"price": price, "current_yield_pct": 100 * face * c / 100 / price,
            "premium_or_discount": "premium" if price > face else "discount", "ytm_pct": y,
            "macaulay_duration_years": sum((t + 1) / f * x for t, x in enumerate(pvs)) / price}


ID_BOND_PRICING = "finance.bond_pricing-v1"


def _draw_bond_pricing(rng: random.Random, difficulty: int) -> Task:
    coupon = rng.randint(4, 36) / 4
    yld = coupon
    while abs(yld - coupon) < 0.5:
        yld = rng.randint(4, 44) / 4 if difficulty < 3 else round(rng.uniform(1, 11), 2)
    p = {"face": rng.choice([1000, 1000, 100, 5000]), "coupon": coupon, "yield": yld,
         "years": rng.randint(2, 30), "freq": 1 if difficulty == 1 else rng.choice([1, 2, 2])}
    v = _bond(p)
    base = (f"Bond terms: face value ${p['face']:,}; coupon rate {coupon}% per year, paid {ADV[p['freq']]}"
            f"; {p['years']} years to maturity; the next coupon is one full period away.\n")
    if difficulty < 3:
        doc = base + f"The market yield (nominal annual, compounded at the coupon frequency) is {yld}%."
        names = ["price", "current_yield_pct"] + (["premium_or_discount"] if difficulty == 2 else [])
    else:
        doc = base + f"The bond is quoted at ${v['price']:,.4f}."
        names = ["ytm_pct", "current_yield_pct", "macaulay_duration_years"]
    table = {"price": (money, "the bond's price in dollars"),
             "current_yield_pct": (_kit.percent, "current yield: annual coupon / price, in percent"),
             "premium_or_discount": (_kit.choice, "whether the bond trades at a premium or a discount to face"),
             "ytm_pct": (_kit.percent, "yield to maturity, nominal annual (compounded at the coupon frequency), "
                         "in percent"),
             "macaulay_duration_years": (days, "Macaulay duration in years")}
    traps = {m: pick(_bond(p, m), names) for m in ("annual_compounding", "swapped")}
    traps["par"] = {n: (p["face"] if n == "price" else "none" if n == "premium_or_discount" else p["coupon"])
                    for n in names}
    return build(ID_BOND_PRICING, difficulty, doc, fields_from(v, table, names), scale=1.0, traps=traps,
                 gates={"premium_or_discount": "price"} if difficulty == 2 else None)


register_domain(_kit.field_domain(ID_BOND_PRICING, _draw_bond_pricing, """\
Bond pricing: price, current yield, yield to maturity and Macaulay duration.

Price and current yield from a market yield (d1 annual coupons; d2 semi-annual, premium/discount
gated on the price); d3 gives a quoted price and asks the yield to maturity and Macaulay
duration.
"""))


def _depreciation(p: dict, mistake: str | None = None) -> dict[str, float]:
    cost, salvage, life, method = p["cost"], p["salvage"], p["life"], p["method"]
    if mistake == "ignore_salvage":
        salvage = 0
    base, bv, acc, dep = cost - salvage, float(cost), 0.0, 0.0
    for t in range(1, p["k"] + 1):
        if method == "straight-line":
            dep = base / life
        elif method == "double-declining balance":
            dep = min((bv - (salvage if mistake == "ddb_on_base" else 0)) * 2 / life, bv - salvage)
        elif method == "sum-of-the-years'-digits":
            dep = base * (life - t + 1) / (life * (life + 1) / 2)
        else:
            dep = base * p["units"][t - 1] / p["total_units"]
        bv -= dep
        acc += dep
    return {"depreciation": dep, "accumulated_depreciation": acc, "book_value": bv}


ID_DEPRECIATION = "finance.depreciation-v1"
METHODS = ["straight-line", "double-declining balance", "sum-of-the-years'-digits", "units-of-production"]


def _draw_depreciation(rng: random.Random, difficulty: int) -> Task:
    methods = METHODS[: {1: 1, 2: 3, 3: 4}[difficulty]]
    while True:
        life = rng.randint(3, 10)
        cost = rng.randint(10, 500) * 1000
        total = rng.randint(20, 200) * 1000
        units = [rng.randint(5, 30) * total // (100 * life) * 4 for _ in range(life)]
        p = {"cost": cost, "salvage": cost * rng.randint(5, 20) // 100, "life": life, "k": rng.randint(1, life),
             "method": rng.choice(methods), "total_units": total, "units": units}
        v = _depreciation(p)
        if v["depreciation"] > 0.01 * cost and v["book_value"] > 0:
            break
    k = p["k"]
    doc = (f"Fixed-asset register entry: machine bought at the start of year 1 for ${cost:,}; estimated salvage "
           f"value ${p['salvage']:,}; useful life {life} years. Method: {p['method']}.")
    if p["method"] == "double-declining balance":
        doc += " Rate = 2 / life applied to the opening book value; book value never goes below salvage."
    if difficulty == 3:
        doc += (f"\nEstimated lifetime output: {total:,} units. Units produced by year: "
                + ", ".join(f"year {t + 1}: {u:,}" for t, u in enumerate(units)) + ".")
    names = ["depreciation", "accumulated_depreciation", "book_value"][: 2 if difficulty == 1 else 3]
    table = {"depreciation": (money, f"depreciation expense for year {k}"),
             "accumulated_depreciation": (money, f"accumulated depreciation at the end of year {k}"),
             "book_value": (money, f"net book value at the end of year {k}")}
    traps = {m: pick(_depreciation(p, m), names) for m in ("ignore_salvage", "ddb_on_base")}
    traps["straight_line_always"] = pick(_depreciation({**p, "method": "straight-line"}), names)
    return build(ID_DEPRECIATION, difficulty, doc, fields_from(v, table, names), scale=1.0, traps=traps)


register_domain(_kit.field_domain(ID_DEPRECIATION, _draw_depreciation, """\
Depreciation by method (straight-line, declining balance, sum-of-years, units): year-k charge and book value.

Year-k depreciation, accumulated depreciation and book value: straight-line (d1); double-
declining balance or sum-of-the-years'-digits (d2); units of production too (d3).
"""))


def _lease(p: dict, mistake: str | None = None) -> dict[str, float]:
    advance = p["advance"] != (mistake == "timing_swapped")
    r, n, pay = p["rate"] / 100, p["term"], p["payment"]
    liab = pay * n if mistake == "undiscounted" else pay * (1 - (1 + r) ** -n) / r * ((1 + r) if advance else 1)
    interest = r * (liab - pay) if advance else r * liab
    rou = liab + p["idc"]
    return {"lease_liability": liab, "interest_year1": interest, "liability_end_year1": liab + interest - pay,
            "rou_amortization": rou / n, "total_expense_year1": interest + rou / n}


ID_LEASE = "finance.lease-v1"


def _draw_lease(rng: random.Random, difficulty: int) -> Task:
    p = {"payment": rng.randint(5, 400) * 1000, "term": rng.randint(3, 12), "rate": rng.randint(30, 95) / 10,
         "advance": difficulty > 1 and rng.random() < 0.5,
         "idc": rng.randint(1, 20) * 500 if difficulty == 3 else 0}
    v = _lease(p)
    doc = (f"Lease contract (lessee): {p['term']} annual payments of ${p['payment']:,}, each due at the "
           f"{'start' if p['advance'] else 'end'} of the lease year; the first lease year starts on the "
           f"commencement date. The rate implicit in the lease is {p['rate']}% per year. The right-of-use asset is "
           f"amortised straight-line over the lease term with no residual value.")
    if p["idc"]:
        doc += f" Initial direct costs of ${p['idc']:,} are added to the right-of-use asset."
    names = {1: ["lease_liability", "interest_year1"],
             2: ["lease_liability", "interest_year1", "liability_end_year1", "rou_amortization"],
             3: ["lease_liability", "interest_year1", "liability_end_year1", "rou_amortization",
                 "total_expense_year1"]}[difficulty]
    table = {"lease_liability": (money, "the lease liability at commencement (present value of the payments)"),
             "interest_year1": (money, "interest expense on the lease liability in year 1"),
             "liability_end_year1": (money, "the lease liability at the end of year 1"),
             "rou_amortization": (money, "annual amortisation of the right-of-use asset"),
             "total_expense_year1": (money, "total year-1 lease expense: interest plus amortisation")}
    return _kit.scenario_task(ID_LEASE, difficulty, doc, _lease, p, table, names, ("timing_swapped", "undiscounted"))


register_domain(_kit.field_domain(ID_LEASE, _draw_lease, """\
Lessee lease accounting: the lease liability, interest, right-of-use amortisation.

Lessee accounting: the lease liability as the present value of the payments (arrears at d1,
arrears or advance above), year-1 interest, closing liability, right-of-use amortisation, and
(d3, with initial direct costs) total year-1 expense.
"""))
