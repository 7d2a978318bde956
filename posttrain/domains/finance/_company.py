"""A generated company: three linked financial statements and notes that always tie out.

What it is: :func:`make_company` draws a fictional company's income statement, balance sheet
and cash-flow statement for ``years`` fiscal years (plus the prior balance sheet the first
cash-flow year starts from), and the notes (shares, segments, debt maturities, dividends).

Guarantees: all amounts are integers in the filing's display unit (thousands or millions);
double entry holds every year — total assets equal total liabilities plus equity, the
cash-flow statement's ending cash equals the balance sheet's cash, the cash-flow statement
starts from the income statement's net income, and retained earnings roll forward by net
income less dividends; segment revenues sum to revenue and debt maturities to total debt.
Deterministic given the ``random.Random``.

Does not: model taxes on losses, leases, minority interests or multiple share classes.
"""

from __future__ import annotations

import random
from typing import Any

NAMES = ["Arden Robotics", "Belvane Foods", "Corvid Logistics", "Dunmore Textiles", "Elstree Media",
         "Fenwick Materials", "Galloway Health", "Harrow Semiconductors", "Ilford Energy",
         "Juniper Retail", "Kestrel Aerospace", "Larkspur Software", "Marlow Chemicals"]
SEGMENTS = ["Industrial", "Consumer", "Services", "Software", "Healthcare", "Energy", "Retail"]

IS_ROWS = [("revenue", "Revenue"), ("cogs", "Cost of revenue"), ("gross_profit", "Gross profit"),
           ("sga", "Selling, general and administrative"), ("rnd", "Research and development"),
           ("da", "Depreciation and amortization"), ("operating_income", "Operating income"),
           ("interest", "Interest expense"), ("pretax_income", "Income before income taxes"),
           ("tax", "Income tax expense"), ("net_income", "Net income")]
BS_ROWS = [("cash", "Cash and cash equivalents"), ("receivables", "Accounts receivable"),
           ("inventory", "Inventories"), ("current_assets", "Total current assets"),
           ("ppe", "Property, plant and equipment, net"), ("goodwill", "Goodwill"),
           ("total_assets", "Total assets"), ("payables", "Accounts payable"),
           ("accrued", "Accrued liabilities"), ("short_debt", "Short-term debt"),
           ("current_liabilities", "Total current liabilities"), ("long_debt", "Long-term debt"),
           ("total_liabilities", "Total liabilities"), ("common_stock", "Common stock and paid-in capital"),
           ("retained", "Retained earnings"), ("equity", "Total shareholders' equity"),
           ("liabilities_equity", "Total liabilities and shareholders' equity")]
CF_ROWS = [("net_income", "Net income"), ("da", "Depreciation and amortization"),
           ("d_receivables", "Change in accounts receivable"), ("d_inventory", "Change in inventories"),
           ("d_payables", "Change in accounts payable"), ("d_accrued", "Change in accrued liabilities"),
           ("cfo", "Net cash provided by operating activities"), ("capex", "Capital expenditures"),
           ("cfi", "Net cash used in investing activities"), ("debt_net", "Net borrowings (repayments) of debt"),
           ("dividends", "Dividends paid"), ("cff", "Net cash from financing activities"),
           ("net_change", "Net change in cash"), ("cash_begin", "Cash at beginning of year"),
           ("cash_end", "Cash at end of year")]
TOTALS = {"gross_profit", "operating_income", "pretax_income", "net_income", "current_assets",
          "total_assets", "current_liabilities", "total_liabilities", "equity", "liabilities_equity",
          "cfo", "cfi", "cff", "net_change", "cash_end"}
LABELS = {k: v for rows in (IS_ROWS, BS_ROWS, CF_ROWS) for k, v in rows}


def _income(rng: random.Random, rev: int) -> dict[str, int]:
    cogs = round(rev * rng.uniform(0.42, 0.72))
    sga, rnd = round(rev * rng.uniform(0.08, 0.18)), round(rev * rng.uniform(0.0, 0.08))
    da = round(rev * rng.uniform(0.02, 0.06))
    op = rev - cogs - sga - rnd - da
    interest = round(rev * rng.uniform(0.003, 0.02))
    pretax = op - interest
    tax = max(0, round(pretax * rng.choice([0.19, 0.21, 0.25, 0.28])))
    return {"revenue": rev, "cogs": cogs, "gross_profit": rev - cogs, "sga": sga, "rnd": rnd,
            "da": da, "operating_income": op, "interest": interest, "pretax_income": pretax,
            "tax": tax, "net_income": pretax - tax}


def _opening(rng: random.Random, rev: int) -> dict[str, int]:
    b = {"cash": round(rev * rng.uniform(0.08, 0.2)), "receivables": round(rev * rng.uniform(0.1, 0.18)),
         "inventory": round(rev * rng.uniform(0.06, 0.15)), "ppe": round(rev * rng.uniform(0.3, 0.7)),
         "goodwill": round(rev * rng.uniform(0.0, 0.25)), "payables": round(rev * rng.uniform(0.06, 0.12)),
         "accrued": round(rev * rng.uniform(0.03, 0.07)), "short_debt": round(rev * rng.uniform(0.02, 0.08)),
         "long_debt": round(rev * rng.uniform(0.1, 0.4)), "retained": round(rev * rng.uniform(0.1, 0.3))}
    assets = b["cash"] + b["receivables"] + b["inventory"] + b["ppe"] + b["goodwill"]
    liab = b["payables"] + b["accrued"] + b["short_debt"] + b["long_debt"]
    b["common_stock"] = max(round(rev * 0.05), assets - liab - b["retained"])
    b["cash"] += b["common_stock"] + b["retained"] + liab - assets  # the plug keeps year 0 balanced
    return _with_totals(b)


def _with_totals(b: dict[str, int]) -> dict[str, int]:
    b["current_assets"] = b["cash"] + b["receivables"] + b["inventory"]
    b["total_assets"] = b["current_assets"] + b["ppe"] + b["goodwill"]
    b["current_liabilities"] = b["payables"] + b["accrued"] + b["short_debt"]
    b["total_liabilities"] = b["current_liabilities"] + b["long_debt"]
    b["equity"] = b["common_stock"] + b["retained"]
    b["liabilities_equity"] = b["total_liabilities"] + b["equity"]
    return b


def _next_year(rng: random.Random, prev: dict[str, int], inc: dict[str, int]) -> tuple[dict, dict]:
    rev = inc["revenue"]
    b = dict(prev)
    for k, lo, hi in (("receivables", 0.1, 0.18), ("inventory", 0.06, 0.15), ("payables", 0.06, 0.12),
                      ("accrued", 0.03, 0.07)):
        b[k] = round(rev * rng.uniform(lo, hi))
    capex = round(inc["da"] * rng.uniform(0.8, 1.8))
    b["ppe"] = prev["ppe"] + capex - inc["da"]
    dividends = round(max(0, inc["net_income"]) * rng.choice([0.0, 0.2, 0.3, 0.4]))
    b["short_debt"] = round(rev * rng.uniform(0.02, 0.08))
    b["long_debt"] = max(0, prev["long_debt"] + round(rev * rng.uniform(-0.05, 0.05)))
    cf = {"net_income": inc["net_income"], "da": inc["da"],
          "d_receivables": prev["receivables"] - b["receivables"],
          "d_inventory": prev["inventory"] - b["inventory"],
          "d_payables": b["payables"] - prev["payables"], "d_accrued": b["accrued"] - prev["accrued"],
          "capex": -capex, "dividends": -dividends}
    cf["cfo"] = sum(cf[k] for k in ("net_income", "da", "d_receivables", "d_inventory", "d_payables", "d_accrued"))
    cash = prev["cash"] + cf["cfo"] - capex - dividends + (b["short_debt"] + b["long_debt"]
                                                           - prev["short_debt"] - prev["long_debt"])
    floor = round(rev * 0.03)
    if cash < floor:  # borrow long-term rather than show negative cash
        b["long_debt"] += floor - cash
    cf["debt_net"] = b["short_debt"] + b["long_debt"] - prev["short_debt"] - prev["long_debt"]
    cf["cfi"], cf["cff"] = -capex, cf["debt_net"] - dividends
    cf["net_change"] = cf["cfo"] + cf["cfi"] + cf["cff"]
    cf["cash_begin"], cf["cash_end"] = prev["cash"], prev["cash"] + cf["net_change"]
    b["cash"] = cf["cash_end"]
    b["retained"] = prev["retained"] + inc["net_income"] - dividends
    return _with_totals(b), cf


def make_company(rng: random.Random, years: int) -> dict[str, Any]:
    """A company with ``years`` fiscal years of statements; see the module docstring."""
    unit = rng.choice(["thousands", "millions"])
    rev = rng.randint(40_000, 900_000) if unit == "thousands" else rng.randint(800, 60_000)
    first = rng.randint(2014, 2021)
    fy = list(range(first, first + years))
    bs = {first - 1: _opening(rng, rev)}
    inc, cfs = {}, {}
    for y in fy:
        rev = round(rev * rng.uniform(0.88, 1.3))
        inc[y] = _income(rng, rev)
        bs[y], cfs[y] = _next_year(rng, bs[y - 1], inc[y])
    base = rng.randint(20, 400) * (100 if unit == "thousands" else 1)
    shares = {y: round(base * (1 + 0.02 * i + rng.uniform(-0.02, 0.02))) for i, y in enumerate(fy)}
    segs = rng.sample(SEGMENTS, rng.randint(2, 4))
    seg_rev = {}
    for y in fy:
        cuts = sorted(rng.sample(range(1, inc[y]["revenue"]), len(segs) - 1))
        bounds = [0] + cuts + [inc[y]["revenue"]]
        seg_rev[y] = {s: bounds[i + 1] - bounds[i] for i, s in enumerate(segs)}
    last = fy[-1]
    total_debt = bs[last]["short_debt"] + bs[last]["long_debt"]
    maturities = {last + 1: bs[last]["short_debt"]}
    rest = bs[last]["long_debt"]
    for k in range(2, 6):
        part = rest if k == 5 else round(rest * rng.uniform(0.1, 0.4))
        maturities[last + k] = part
        rest -= part
    assert sum(maturities.values()) == total_debt
    return {"name": rng.choice(NAMES), "unit": unit, "years": fy, "income": inc, "balance": bs,
            "cashflow": cfs, "shares": shares, "segments": seg_rev, "maturities": maturities}


def value(co: dict[str, Any], statement: str, item: str, year: int) -> int:
    """One reported amount (display units)."""
    return int(co[statement][year][item])


def unit_multiplier(co: dict[str, Any]) -> float:
    return 1e3 if co["unit"] == "thousands" else 1e6
