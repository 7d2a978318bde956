"""Real-tier filing domains over the three statements of one PDF annual report.

- ``finance.pdf_line_items-v1`` — 2/3/4 line items of any statement for one fiscal year; from
  d2 one of them sits on the continuation page of a split table.
- ``finance.pdf_balance_check-v1`` — balance-sheet totals with the checks a correct answer
  satisfies: assets = liabilities + equity; d2 current liabilities + long-term debt = total
  liabilities; d3 cash + receivables + inventories = current assets.
- ``finance.pdf_cash_bridge-v1`` — the cash-flow bridge: operating + investing + financing =
  net change (d1); beginning cash + net change = ending cash (d2); capital expenditures =
  investing cash flow (d3). Signs matter: parentheses are negatives.
- ``finance.pdf_margins-v1`` — gross, operating and net margin (percent, one decimal) and
  revenue; d3 adds the effective tax rate.

Difficulty is the layout of :mod:`.filings_plans` (two years and whole tables; three years
and split tables with the header repeated; split without the header, a footnoted row) and
the asked unit (the filing's at d1, possibly another above).

What they train: driving a document tool — open, find the statement's page, extract the
table, keep the scale and sign straight. Reward: field-level with consistency checks
(:mod:`posttrain.verifiers.fields_checks`). Probes: the shared ones of
:mod:`.filings_tasks` plus ``wrong_year`` (the same fields copied from another fiscal year).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance.filings_plans import Reader, annual_spec, asked_scale, distinct, doc_company, pick_keys
from posttrain.domains.finance.filings_tasks import DocDomain, DocField, DocPlan
from posttrain.verifiers.fields_checks import Check

PATH = "filing.pdf"
POOLS = {"income": ["revenue", "cogs", "gross_profit", "sga", "operating_income", "pretax_income", "net_income"],
         "balance": ["cash", "receivables", "inventory", "total_assets", "payables", "long_debt",
                     "total_liabilities", "retained", "equity"],
         "cashflow": ["cfo", "capex", "cfi", "cff", "net_change"]}
LATE = {"balance": ["payables", "long_debt", "total_liabilities", "retained", "equity"],
        "cashflow": ["cfo", "capex", "cfi", "cff", "net_change"]}


def _draw(rng: random.Random, difficulty: int, which: str, keys: list[str], restate: bool = False):
    """(company, spec, year, other year) whose ``keys`` of ``which`` all differ between the years."""
    for _ in range(60):
        co = doc_company(rng, 3, restate)
        spec = annual_spec(co, rng, difficulty)
        year = spec["years"][0] if difficulty == 1 else rng.choice(spec["years"][:2])
        other = next(y for y in spec["years"] if y != year)
        if distinct(co, which, keys, year, other):
            return co, spec, year, other
    raise RuntimeError("no company with distinct years in 60 draws")  # pragma: no cover - vanishingly rare


def _intro(co, spec) -> str:
    return f"The annual report of {co['name']} for fiscal {spec['years'][0]} is in /work/{PATH}."


def _wrong_year(r: Reader, fields: list[DocField], keys: dict[str, tuple[str, str]], other: int) -> dict:
    return {f.spec.name: r.statement(*keys[f.spec.name], other).value for f in fields}


def line_items(rng: random.Random, difficulty: int) -> DocPlan:
    n = {1: 2, 2: 3, 3: 4}[difficulty]
    co, spec, year, other = _draw(rng, difficulty, "income", ["revenue"])
    keys: dict[str, tuple[str, str]] = {}
    first = "balance" if difficulty >= 2 else rng.choice(list(POOLS))
    for which in [first] + rng.sample(list(POOLS), 3):
        pool = LATE[which] if difficulty >= 2 and not keys and which in LATE else POOLS[which]
        for k in pick_keys(rng, co, which, [k for k in pool if k not in keys], 1, year, other):
            keys[k] = (which, k)
        if len(keys) == n:
            break
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    fields = [r.statement(which, k, year) for k, (which, _) in keys.items()]
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale,
                   traps={"wrong_year": _wrong_year(r, fields, keys, other)})


def balance_check(rng: random.Random, difficulty: int) -> DocPlan:
    names = ["total_assets", "total_liabilities", "equity"] + (["current_liabilities", "long_debt"] if difficulty >= 2 else []) \
        + (["cash", "receivables", "inventory", "current_assets"] if difficulty >= 3 else [])
    co, spec, year, other = _draw(rng, difficulty, "balance", names)
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    keys = {k: ("balance", k) for k in names}
    fields = [r.statement("balance", k, year) for k in names]
    checks = [Check("balance_sheet_balances", {"total_assets": 1, "total_liabilities": -1, "equity": -1})]
    if difficulty >= 2:
        checks.append(Check("liabilities_add_up", {"current_liabilities": 1, "long_debt": 1, "total_liabilities": -1}))
    if difficulty >= 3:
        checks.append(Check("current_assets_add_up", {"cash": 1, "receivables": 1, "inventory": 1, "current_assets": -1}))
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, checks,
                   traps={"wrong_year": _wrong_year(r, fields, keys, other)})


def cash_bridge(rng: random.Random, difficulty: int) -> DocPlan:
    names = ["cfo", "cfi", "cff", "net_change"] + (["cash_begin", "cash_end"] if difficulty >= 2 else []) \
        + (["capex"] if difficulty >= 3 else [])
    co, spec, year, other = _draw(rng, difficulty, "cashflow", names)
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    keys = {k: ("cashflow", k) for k in names}
    fields = [r.statement("cashflow", k, year) for k in names]
    checks = [Check("cash_flows_add_up", {"cfo": 1, "cfi": 1, "cff": 1, "net_change": -1})]
    if difficulty >= 2:
        checks.append(Check("cash_rolls_forward", {"cash_begin": 1, "net_change": 1, "cash_end": -1}))
    if difficulty >= 3:
        checks.append(Check("investing_is_capex", {"cfi": 1, "capex": -1}))
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, checks,
                   traps={"wrong_year": _wrong_year(r, fields, keys, other)})


def _margins(co, spec, year: int) -> dict[str, float]:
    inc = co["income"][str(year)]
    out = {"gross_margin": 100 * inc["gross_profit"] / inc["revenue"],
           "operating_margin": 100 * inc["operating_income"] / inc["revenue"],
           "net_margin": 100 * inc["net_income"] / inc["revenue"]}
    if inc["pretax_income"] > 0:
        out["effective_tax_rate"] = 100 * inc["tax"] / inc["pretax_income"]
    return out


QUESTIONS = {"gross_margin": "Gross profit as a percentage of revenue", "operating_margin":
             "Operating income as a percentage of revenue", "net_margin": "Net income as a percentage of revenue",
             "effective_tax_rate": "Income tax expense as a percentage of income before income taxes"}


def margins(rng: random.Random, difficulty: int) -> DocPlan:
    names = {1: ["gross_margin", "net_margin"], 2: ["gross_margin", "operating_margin", "net_margin"],
             3: ["gross_margin", "operating_margin", "net_margin", "effective_tax_rate"]}[difficulty]
    for _ in range(60):
        co, spec, year, other = _draw(rng, difficulty, "income", ["revenue"])
        now, before = _margins(co, spec, year), _margins(co, spec, other)
        if all(n in now and n in before and abs(now[n] - before[n]) > 0.3 and abs(now[n]) > 1 for n in names):
            break
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    page = r.page("income", "Revenue")
    fields = [r.statement("income", "revenue", year)]
    fields += [DocField(_kit.percent(n), round(now[n], 1), f"{QUESTIONS[n]} for fiscal {year}",
                        ("extract_tables", PATH, page)) for n in names]
    trap = {"revenue": r.statement("income", "revenue", other).value, **{n: round(before[n], 1) for n in names}}
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, traps={"wrong_year": trap})


register_domain(DocDomain("finance.pdf_line_items-v1", line_items,
                          description=("Reading line items of a PDF annual report's statements "
                                       'through a document tool, split tables included.')))
register_domain(DocDomain("finance.pdf_balance_check-v1", balance_check,
                          description=('Extracting balance-sheet totals from a PDF filing so that '
                                       'they reconcile (assets = liabilities + equity).')))
register_domain(DocDomain("finance.pdf_cash_bridge-v1", cash_bridge,
                          description=('Extracting the cash-flow bridge from a PDF filing with signs '
                                       'kept (operating + investing + financing = net change).')))
register_domain(DocDomain("finance.pdf_margins-v1", margins,
                          description=('Computing gross, operating and net margins from a PDF '
                                       "filing's statement of operations.")))
