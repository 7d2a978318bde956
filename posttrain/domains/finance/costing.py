"""Cost and accounting-rule domains: break-even, inventory costing, currency translation, tax.

- ``finance.breakeven-v1`` — cost-volume-profit: contribution margin, break-even units
  (rounded up) and (d2) units for a target profit, break-even revenue and margin of safety;
  d3 a three-product sales mix (weighted contribution margin per unit of mix).
- ``finance.inventory_costing-v1`` — a period's purchases and sales: cost of goods sold and
  ending inventory under periodic FIFO (d1), LIFO too (d2), weighted average and FIFO gross
  profit (d3).
- ``finance.fx_translation-v1`` — a foreign subsidiary's statements translated by the current-
  rate method: income at the average rate (d1); assets at the closing rate, capital at the
  historical rate and the cumulative translation adjustment as the balancing figure (d2);
  dividends at their own date's rate and rates quoted in either direction (d3).
- ``finance.tax_rate-v1`` — income-tax expense from a reconciliation note: statutory rate,
  non-deductible expenses, (d2) tax-exempt income and credits, (d3) temporary differences
  splitting the expense into current and deferred; the effective tax rate.

What they train: applying an accounting rule exactly as stated, layer bookkeeping, rate
direction. Not covered: perpetual inventory systems, lower-of-cost-or-market, the temporal
translation method, valuation allowances.

Probes (besides the shared ones of :mod:`._kit`): break-even on price or on variable cost
alone; FIFO and LIFO swapped; a simple (unweighted) average cost; rates inverted; every line at
the closing rate; tax at the statutory rate on book income; a credit taken as a deduction —
each kept only when every field is wrong.
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import count, money


def _cvp(p: dict, mistake: str | None = None) -> dict[str, float]:
    price = sum(m * pr for m, pr, _ in p["mix"]) / sum(m for m, _, _ in p["mix"])
    var = sum(m * vc for m, _, vc in p["mix"]) / sum(m for m, _, _ in p["mix"])
    cm = {"price_only": price, "variable_only": var}.get(mistake or "", price - var)
    be = p["fixed"] / cm
    return {"cm_per_unit": cm, "cm_ratio_pct": 100 * cm / price, "breakeven_units": math.ceil(be - 1e-9),
            "units_for_target": math.ceil((p["fixed"] + p["target"]) / cm - 1e-9), "breakeven_revenue": be * price,
            "margin_of_safety_pct": 100 * (p["expected"] - be) / p["expected"]}


ID_BREAKEVEN = "finance.breakeven-v1"


def _draw_breakeven(rng: random.Random, difficulty: int) -> Task:
    n = 3 if difficulty == 3 else 1
    mix = []
    for _ in range(n):
        price = rng.randint(10, 400) + rng.choice([0, 0.5, 0.99])
        mix.append((rng.randint(1, 5), price, round(price * rng.uniform(0.3, 0.8), 2)))
    p = {"mix": mix, "fixed": rng.randint(20, 900) * 1000, "target": rng.randint(5, 200) * 1000}
    p["expected"] = math.ceil(_cvp({**p, "expected": 1})["breakeven_units"] * rng.uniform(1.15, 1.8))
    v = _cvp(p)
    if n == 1:
        doc = (f"Product economics: selling price ${mix[0][1]:,.2f} per unit; variable cost ${mix[0][2]:,.2f} per "
               f"unit; fixed costs ${p['fixed']:,} per year.")
    else:
        rows = "\n".join(f"  {nm}: price ${pr:,.2f}, variable cost ${vc:,.2f}, mix weight {m}"
                         for nm, (m, pr, vc) in zip("ABC", mix))
        doc = (f"Three products sold in a fixed unit mix (weights are units per mix):\n{rows}\nShared fixed costs "
               f"${p['fixed']:,} per year. Work in units of product (all three together) at the weighted averages.")
    doc += f"\nTarget operating profit ${p['target']:,}; expected sales {p['expected']:,} units."
    names = {1: ["cm_per_unit", "cm_ratio_pct", "breakeven_units"],
             2: ["breakeven_units", "units_for_target", "breakeven_revenue", "margin_of_safety_pct"],
             3: ["cm_per_unit", "breakeven_units", "breakeven_revenue", "margin_of_safety_pct"]}[difficulty]
    table = {"cm_per_unit": (money, "contribution margin per unit (weighted average for a mix)"),
             "cm_ratio_pct": (_kit.percent, "contribution margin ratio, in percent"),
             "breakeven_units": (count, "break-even sales in units, rounded up to a whole unit"),
             "units_for_target": (count, "units needed for the target operating profit, rounded up"),
             "breakeven_revenue": (money, "break-even revenue in dollars (from the unrounded break-even units)"),
             "margin_of_safety_pct": (_kit.percent, "margin of safety: (expected units - unrounded break-even "
                                      "units) / expected units x 100")}
    return _kit.scenario_task(ID_BREAKEVEN, difficulty, doc, _cvp, p, table, names, ("price_only", "variable_only"))


register_domain(_kit.field_domain(ID_BREAKEVEN, _draw_breakeven, """\
Cost-volume-profit analysis: contribution margin, break-even units and revenue, margin of safety.

Cost-volume-profit: contribution margin, break-even units (rounded up) and (d2) units for a
target profit, break-even revenue and margin of safety; d3 a three-product sales mix (weighted
contribution margin per unit of mix).
"""))


def _layers(p: dict, order: str) -> tuple[float, float]:
    """(COGS, ending inventory) under periodic FIFO / LIFO / weighted or simple average."""
    layers = [(p["u0"], p["c0"])] + p["buys"]
    units = sum(u for u, _ in layers)
    total = sum(u * c for u, c in layers)
    if order in ("wavg", "simple"):
        avg = total / units if order == "wavg" else sum(c for _, c in layers) / len(layers)
        return p["sold"] * avg, (units - p["sold"]) * avg if order == "wavg" else total - p["sold"] * avg
    left, cogs = p["sold"], 0.0
    for u, c in (layers if order == "fifo" else layers[::-1]):
        take = min(u, left)
        cogs, left = cogs + take * c, left - take
    return cogs, total - cogs


def _inventory(p: dict, mistake: str | None = None) -> dict[str, float]:
    fifo, lifo = ("lifo", "fifo") if mistake == "swapped" else ("fifo", "lifo")
    wa = "simple" if mistake == "simple_average" else "wavg"
    (cf, ef), (cl, el), (cw, ew) = _layers(p, fifo), _layers(p, lifo), _layers(p, wa)
    return {"cogs_fifo": cf, "ending_inventory_fifo": ef, "cogs_lifo": cl, "ending_inventory_lifo": el,
            "cogs_weighted_average": cw, "ending_inventory_weighted_average": ew, "gross_profit_fifo": p["revenue"] - cf}


ID_INVENTORY_COSTING = "finance.inventory_costing-v1"


def _draw_inventory_costing(rng: random.Random, difficulty: int) -> Task:
    c0 = c = rng.randint(500, 5000) / 100
    trend = rng.choice([1, -1])
    buys = []
    for _ in range(rng.randint(2, 2 + 2 * difficulty)):
        c = round(c * (1 + trend * rng.uniform(0.03, 0.15)), 2)
        buys.append((rng.randint(2, 60) * 10, c))
    p = {"u0": rng.randint(1, 40) * 10, "c0": c0, "buys": buys}
    avail = p["u0"] + sum(u for u, _ in buys)
    sold = rng.randint(avail // 3, avail * 9 // 10)
    parts = sorted(rng.sample(range(1, sold), min(sold - 1, rng.randint(1, 2 + difficulty))))
    sales = [b - a for a, b in zip([0] + parts, parts + [sold])]
    prices = [round(p["c0"] * rng.uniform(1.3, 2.2), 2) for _ in sales]
    p.update(sold=sold, revenue=sum(s * pr for s, pr in zip(sales, prices)))
    events = [f"Purchase: {u:,} units at ${uc:,.2f}" for u, uc in buys]
    events += [f"Sale: {s:,} units at ${pr:,.2f} each" for s, pr in zip(sales, prices)]
    order = list(range(len(events)))
    rng.shuffle(order)
    doc = (f"Inventory record for the quarter (periodic system; the events below are listed in no particular "
           f"order, but purchases were received in the order listed among themselves: "
           + ", ".join(f"${uc:,.2f}" for _, uc in buys) + ").\n"
           f"Beginning inventory: {p['u0']:,} units at ${p['c0']:,.2f}\n" + "\n".join(events[i] for i in order))
    names = {1: ["cogs_fifo", "ending_inventory_fifo"], 2: ["cogs_fifo", "cogs_lifo", "ending_inventory_lifo"],
             3: ["cogs_fifo", "cogs_lifo", "cogs_weighted_average", "ending_inventory_weighted_average",
                 "gross_profit_fifo"]}[difficulty]
    label = {"fifo": "FIFO", "lifo": "LIFO", "weighted_average": "weighted-average cost (periodic)"}
    table = {f"{k}_{m}": (money, f"{'cost of goods sold' if k == 'cogs' else 'ending inventory'} under {label[m]}")
             for k in ("cogs", "ending_inventory") for m in label}
    table["gross_profit_fifo"] = (money, "sales revenue minus FIFO cost of goods sold")
    return _kit.scenario_task(ID_INVENTORY_COSTING, difficulty, doc, _inventory,
                              p, table, names, ("swapped", "simple_average"))


register_domain(_kit.field_domain(ID_INVENTORY_COSTING, _draw_inventory_costing, """\
Inventory costing: COGS and ending inventory under periodic FIFO, LIFO and weighted average.

A period's purchases and sales: cost of goods sold and ending inventory under periodic FIFO
(d1), LIFO too (d2), weighted average and FIFO gross profit (d3).
"""))


def _fx(p: dict, mistake: str | None = None) -> dict[str, float]:
    r = {k: (1 / x if mistake == "inverted" else x) for k, x in p["usd_per_fc"].items()}
    if mistake == "all_closing":
        r = {k: r["closing"] for k in r}
    ni = p["revenue"] - p["expenses"]
    assets, liab = p["assets"], p["assets"] - p["capital"] - ni + p["dividends"]
    cta = (assets - liab) * r["closing"] - p["capital"] * r["historical"] - ni * r["average"] + p["dividends"] * r["dividend"]
    return {"revenue_usd": p["revenue"] * r["average"], "net_income_usd": ni * r["average"],
            "total_assets_usd": assets * r["closing"], "liabilities_usd": liab * r["closing"], "cta": cta}


ID_FX_TRANSLATION = "finance.fx_translation-v1"
CURRENCIES = {"EUR": (0.95, 1.25), "GBP": (1.15, 1.45), "CHF": (1.0, 1.2), "CAD": (0.7, 0.82), "AUD": (0.62, 0.78)}


def _draw_fx_translation(rng: random.Random, difficulty: int) -> Task:
    cur = rng.choice(sorted(CURRENCIES))
    lo, hi = CURRENCIES[cur]
    rates = {}
    while len(set(rates.values())) < 4:
        rates = {k: round(rng.uniform(lo, hi), 4) for k in ("historical", "average", "closing", "dividend")}
    rev = rng.randint(200, 9000) * 1000
    p = {"usd_per_fc": rates, "revenue": rev, "expenses": round(rev * rng.uniform(0.6, 0.92)),
         "capital": rng.randint(50, 2000) * 1000, "dividends": 0}
    ni = p["revenue"] - p["expenses"]
    if difficulty == 3:
        p["dividends"] = round(ni * rng.choice([0.2, 0.3, 0.5]))
    p["assets"] = p["capital"] + ni - p["dividends"] + rng.randint(100, 5000) * 1000
    v = _fx(p)

    def quote(k: str) -> str:
        if difficulty == 3 and rng.random() < 0.5:
            return f"1 USD = {1 / rates[k]:.6f} {cur}"
        return f"1 {cur} = {rates[k]:.4f} USD"

    lines = [f"Subsidiary (functional currency {cur}), first year of operations, amounts in {cur}:",
             f"  Revenue {p['revenue']:,}; expenses {p['expenses']:,}"]
    if difficulty > 1:
        lines.append(f"  Total assets at year end {p['assets']:,}; share capital issued at formation {p['capital']:,};"
                     " all other equity is this year's net income" + (" less dividends" if p["dividends"] else "")
                     + "; the rest is liabilities")
    if p["dividends"]:
        lines.append(f"  Dividends declared and paid to the parent: {p['dividends']:,} ({quote('dividend')} "
                     "on the payment date)")
    lines += [f"Rates: average for the year {quote('average')}; closing {quote('closing')}; at formation "
              f"{quote('historical')}.",
              "Translate by the current-rate method: income and expenses at the average rate, assets and "
              "liabilities at the closing rate, share capital at the historical rate, dividends at the rate on "
              "their date; the cumulative translation adjustment (CTA) balances equity."]
    names = {1: ["revenue_usd", "net_income_usd"], 2: ["total_assets_usd", "net_income_usd", "cta"],
             3: ["total_assets_usd", "liabilities_usd", "net_income_usd", "cta"]}[difficulty]
    table = {"revenue_usd": (money, "revenue in U.S. dollars"),
             "net_income_usd": (money, "net income in U.S. dollars"),
             "total_assets_usd": (money, "total assets in U.S. dollars"),
             "liabilities_usd": (money, "total liabilities in U.S. dollars"),
             "cta": (money, "the cumulative translation adjustment in U.S. dollars (a gain is positive)")}
    return _kit.scenario_task(ID_FX_TRANSLATION, difficulty, "\n".join(lines), _fx,
                              p, table, names, ("inverted", "all_closing"))


register_domain(_kit.field_domain(ID_FX_TRANSLATION, _draw_fx_translation, """\
Currency translation of a subsidiary's statements by the current-rate method (CTA as the plug).

A foreign subsidiary's statements translated by the current-rate method: income at the average
rate (d1); assets at the closing rate, capital at the historical rate and the cumulative
translation adjustment as the balancing figure (d2); dividends at their own date's rate and
rates quoted in either direction (d3).
"""))


def _tax(p: dict, mistake: str | None = None) -> dict[str, float]:
    rate = p["rate"] / 100
    base = p["pretax"] + p["nondeductible"] - p["exempt"]
    if mistake == "statutory_only":
        base = p["pretax"]
    credit = p["credit"]
    if mistake == "credit_as_deduction":
        base, credit = base - p["credit"], 0
    expense = rate * base - credit
    return {"tax_expense": expense, "effective_tax_rate_pct": 100 * expense / p["pretax"],
            "current_tax": expense - rate * p["temporary"], "deferred_tax": rate * p["temporary"]}


ID_TAX_RATE = "finance.tax_rate-v1"


def _draw_tax_rate(rng: random.Random, difficulty: int) -> Task:
    pretax = rng.randint(500, 90000) * 1000
    p = {"pretax": pretax, "rate": rng.choice([19, 21, 24, 25, 28, 30]),
         "nondeductible": pretax * rng.randint(1, 8) // 100, "exempt": 0, "credit": 0, "temporary": 0}
    lines = [f"Income before income taxes: ${pretax:,}", f"Statutory income-tax rate: {p['rate']}%",
             f"Non-deductible expenses included in book income (fines, entertainment): ${p['nondeductible']:,}"]
    if difficulty > 1:
        p["exempt"] = pretax * rng.randint(1, 6) // 100
        p["credit"] = pretax * rng.randint(1, 4) // 100
        lines += [f"Tax-exempt municipal bond interest included in book income: ${p['exempt']:,}",
                  f"Research tax credit (reduces tax, not income): ${p['credit']:,}"]
    if difficulty == 3:
        p["temporary"] = pretax * rng.randint(2, 10) // 100
        lines.append(f"Tax depreciation exceeds book depreciation this year by ${p['temporary']:,} (a temporary "
                     "difference: it lowers the tax payable now and creates a deferred tax liability)")
    doc = "Note 9. Income taxes\n" + "\n".join(lines)
    names = {1: ["tax_expense", "effective_tax_rate_pct"], 2: ["tax_expense", "effective_tax_rate_pct"],
             3: ["tax_expense", "effective_tax_rate_pct", "current_tax", "deferred_tax"]}[difficulty]
    table = {"tax_expense": (money, "total income-tax expense for the year (current plus deferred)"),
             "effective_tax_rate_pct": (_kit.percent, "total income-tax expense / income before income taxes x 100"),
             "current_tax": (money, "current tax expense (payable for this year)"),
             "deferred_tax": (money, "deferred tax expense")}
    return _kit.scenario_task(ID_TAX_RATE, difficulty, doc, _tax,
                              p, table, names, ("statutory_only", "credit_as_deduction"))


register_domain(_kit.field_domain(ID_TAX_RATE, _draw_tax_rate, """\
Income-tax accounting: tax expense, current/deferred split and the effective rate from a reconciliation.

Income-tax expense from a reconciliation note: statutory rate, non-deductible expenses, (d2)
tax-exempt income and credits, (d3) temporary differences splitting the expense into current and
deferred; the effective tax rate.
"""))
