"""Finance domains over the three statements: line-item extraction, ratios, growth.

- ``finance.extract-v1`` — read line items (any statement, any year) and report them in the
  asked unit, which above d1 may differ from the filing's (scale normalisation).
- ``finance.ratios-v1`` — margins, liquidity, leverage, coverage, returns on averages and a
  cross-statement free-cash-flow margin, each defined in the prompt.
- ``finance.growth-v1`` — year-over-year growth, absolute change and (d3) compound growth.

Difficulty: d1 one short statement (plain text or markdown), two years, the filing's unit; d2
all three statements and notes, two years, any table style (text, markdown, HTML), another unit
possible; d3 three years, a management discussion full of distractor figures (quarterly
revenue, non-GAAP measures, backlog), mostly HTML, more fields.

What they train: reading tables in three formats, keeping scale and sign straight, simple
arithmetic on extracted values. Not covered: restatements, fiscal years not ending in December,
per-share and segment figures (see :mod:`.checks` and :mod:`.per_share`).

Probes (besides the shared ones of :mod:`._kit`): the value of the wrong year for every field.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import LABELS, unit_multiplier
from posttrain.domains.finance._render import TITLES

ITEMS = {"income": ["revenue", "cogs", "gross_profit", "sga", "operating_income", "interest", "tax", "net_income"],
         "balance": ["cash", "receivables", "inventory", "total_assets", "payables", "long_debt",
                     "total_liabilities", "retained", "equity"],
         "cashflow": ["cfo", "capex", "cfi", "dividends", "cff", "net_change"]}


ID_EXTRACT = "finance.extract-v1"


def _draw_extract(rng: random.Random, difficulty: int) -> Task:
    which = rng.choice(list(ITEMS))
    co, doc, lay = _kit.company_and_doc(rng, difficulty, (which,))
    pool = [(s, i) for s in (lay["parts"] if difficulty > 1 else (which,)) if s in ITEMS for i in ITEMS[s]]
    n = {1: 2, 2: 3, 3: 4}[difficulty]
    mult = unit_multiplier(co)
    scale = _kit.asked_scale(rng, mult, difficulty)
    specs, exp, alt, qs = [], {}, {}, {}
    for s, item in rng.sample(pool, n):
        year = rng.choice(co["years"])
        other = next(y for y in co["years"] if y != year)
        name = f"{item}_{year}"
        if co[s][year][item] == 0 or name in exp or co[s][other][item] == co[s][year][item]:
            continue
        specs.append(_kit.amount(name, scale))
        exp[name] = co[s][year][item] * mult / scale
        alt[name] = co[s][other][item] * mult / scale
        qs[name] = f"{LABELS[item]}, fiscal {year} ({TITLES[s]})"
    if not specs:  # every pick was zero or duplicate: fall back to revenue, never zero
        y = co["years"][-1]
        specs, exp = [_kit.amount(f"revenue_{y}", scale)], {f"revenue_{y}": co["income"][y]["revenue"] * mult / scale}
        alt, qs = {}, {f"revenue_{y}": f"Revenue, fiscal {y}"}
    task = _kit.build_task(ID_EXTRACT, difficulty, doc, qs, specs, exp, scale=scale)
    task.hidden["alternates"] = alt
    return task


register_domain(_kit.field_domain(ID_EXTRACT, _draw_extract, """\
Reading financial statements: extracting line items in the asked unit and scale.

Read line items (any statement, any year) and report them in the asked unit, which above d1 may
differ from the filing's (scale normalisation).
"""))


def _avg(co: dict, item: str, year: int) -> float:
    return (co["balance"][year][item] + co["balance"][year - 1][item]) / 2


RATIOS = {  # name -> (kind, definition, function(co, year), needs prior-year balance)
    "gross_margin_pct": ("percent", "gross profit / revenue x 100",
                         lambda c, y: 100 * c["income"][y]["gross_profit"] / c["income"][y]["revenue"], False),
    "operating_margin_pct": ("percent", "operating income / revenue x 100",
                             lambda c, y: 100 * c["income"][y]["operating_income"] / c["income"][y]["revenue"], False),
    "net_margin_pct": ("percent", "net income / revenue x 100",
                       lambda c, y: 100 * c["income"][y]["net_income"] / c["income"][y]["revenue"], False),
    "effective_tax_rate_pct": ("percent", "income tax expense / income before income taxes x 100",
                               lambda c, y: 100 * c["income"][y]["tax"] / c["income"][y]["pretax_income"], False),
    "interest_coverage": ("ratio", "operating income / interest expense",
                          lambda c, y: c["income"][y]["operating_income"] / c["income"][y]["interest"], False),
    "current_ratio": ("ratio", "total current assets / total current liabilities",
                      lambda c, y: c["balance"][y]["current_assets"] / c["balance"][y]["current_liabilities"], False),
    "debt_to_equity": ("ratio", "(short-term debt + long-term debt) / total shareholders' equity",
                       lambda c, y: (c["balance"][y]["short_debt"] + c["balance"][y]["long_debt"])
                       / c["balance"][y]["equity"], False),
    "fcf_margin_pct": ("percent", "(net cash provided by operating activities + capital expenditures, "
                       "which are negative) / revenue x 100",
                       lambda c, y: 100 * (c["cashflow"][y]["cfo"] + c["cashflow"][y]["capex"]) / c["income"][y]["revenue"],
                       False),
    "roe_pct": ("percent", "net income / average of opening and closing total shareholders' equity x 100",
                lambda c, y: 100 * c["income"][y]["net_income"] / _avg(c, "equity", y), True),
    "asset_turnover": ("ratio", "revenue / average of opening and closing total assets",
                       lambda c, y: c["income"][y]["revenue"] / _avg(c, "total_assets", y), True),
}
EASY_RATIOS = ["gross_margin_pct", "operating_margin_pct", "net_margin_pct", "effective_tax_rate_pct"]


def _ratio_spec(name: str) -> Any:
    return _kit.percent(name) if RATIOS[name][0] == "percent" else _kit.ratio(name)


ID_RATIOS = "finance.ratios-v1"


def _draw_ratios(rng: random.Random, difficulty: int) -> Task:
    co, doc, lay = _kit.company_and_doc(rng, difficulty, ("income",))
    pool = list(EASY_RATIOS if difficulty == 1 else RATIOS)
    rng.shuffle(pool)
    want = {1: 2, 2: 3, 3: 4}[difficulty]
    specs, exp, alt, qs = [], {}, {}, {}
    for nm in pool:
        kind, definition, fn, needs_prior = RATIOS[nm]
        choices = co["years"][1:] if needs_prior else co["years"]
        y = rng.choice(choices)
        try:
            v, o = fn(co, y), fn(co, next(x for x in co["years"] if x != y))
        except ZeroDivisionError:
            continue
        if abs(v) < 0.5 or len(specs) == want:  # near-zero values would reward an all-zero answer
            continue
        key = f"{nm}_{y}"
        specs.append(replace(_ratio_spec(nm), name=key))
        exp[key] = round(v, 6)
        qs[key] = f"{nm.replace('_pct', '').replace('_', ' ')} for fiscal {y}, defined as {definition}"
        if abs(o - v) > 0.1:
            alt[key] = round(o, 6)
    task = _kit.build_task(ID_RATIOS, difficulty, doc, qs, specs, exp, scale=None)
    task.hidden["alternates"] = alt
    return task


register_domain(_kit.field_domain(ID_RATIOS, _draw_ratios, """\
Computing defined financial ratios (margins, leverage, coverage, returns) from the statements.

Margins, liquidity, leverage, coverage, returns on averages and a cross-statement free-cash-flow
margin, each defined in the prompt.
"""))


GROWTH_ITEMS = [("income", "revenue"), ("income", "net_income"), ("income", "operating_income"),
                ("balance", "total_assets"), ("balance", "equity"), ("cashflow", "cfo")]


ID_GROWTH = "finance.growth-v1"


def _draw_growth(rng: random.Random, difficulty: int) -> Task:
    pool = GROWTH_ITEMS[:3] if difficulty == 1 else GROWTH_ITEMS
    co, doc, lay = _kit.company_and_doc(rng, difficulty, ("income",))
    mult = unit_multiplier(co)
    scale = _kit.asked_scale(rng, mult, difficulty)
    ys = co["years"]
    specs, exp, qs = [], {}, {}
    picks = rng.sample(pool, {1: 1, 2: 2, 3: 2}[difficulty])
    for s, item in picks:
        y0, y1 = ys[-2], ys[-1]
        a, b = co[s][y0][item], co[s][y1][item]
        if a == 0:
            continue
        g = f"{item}_growth_pct_{y1}"
        specs.append(_kit.percent(g))
        exp[g] = round(100 * (b - a) / abs(a), 6)
        qs[g] = f"growth of {LABELS[item].lower()} from fiscal {y0} to {y1}, (new - old) / |old| x 100"
        c = f"{item}_change_{y1}"
        specs.append(_kit.amount(c, scale))
        exp[c] = (b - a) * mult / scale
        qs[c] = f"change in {LABELS[item].lower()} from fiscal {y0} to {y1} (new - old)"
        if abs(exp[g]) < 0.5 or b == a:  # a near-zero change would reward an all-zero answer
            specs, _ = specs[:-2], [exp.pop(g), exp.pop(c), qs.pop(g), qs.pop(c)]
    if not specs:
        y0, y1 = ys[-2], ys[-1]
        a, b = co["income"][y0]["revenue"], co["income"][y1]["revenue"]
        specs, exp = [_kit.amount(f"revenue_change_{y1}", scale)], {f"revenue_change_{y1}": (b - a) * mult / scale}
        qs = {f"revenue_change_{y1}": f"change in revenue from fiscal {y0} to {y1} (new - old)"}
    a, b = co["income"][ys[0]]["revenue"], co["income"][ys[-1]]["revenue"]
    if difficulty == 3 and abs(b / a - 1) > 0.02:
        k = f"revenue_cagr_pct_{ys[0]}_{ys[-1]}"
        specs.append(_kit.percent(k))
        exp[k] = round(100 * ((b / a) ** (1 / (len(ys) - 1)) - 1), 6)
        qs[k] = f"compound annual growth rate of revenue from fiscal {ys[0]} to {ys[-1]}, in percent"
    return _kit.build_task(ID_GROWTH, difficulty, doc, qs, specs, exp, scale=scale)


register_domain(_kit.field_domain(ID_GROWTH, _draw_growth, """\
Growth analysis from the statements: year-over-year growth, absolute change, (d3) CAGR.
"""))
