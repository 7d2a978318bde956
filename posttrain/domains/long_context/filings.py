"""Long-context real-tier domains: questions over a 30-60 page PDF annual report.

The report (:mod:`posttrain.domains.finance.filings_sections` with ``long_pages``) has a
business section, risk factors and a management's discussion full of distractor figures
(quarterly revenue, an adjusted non-GAAP operating income, backlog) before the statements,
and accounting policies, segment, debt, contingency and employee notes after them. Pages:
32-34 at d1, 43-44 at d2, 56-57 at d3 (measured over 10 seeds; tests pin >= 30).

- ``long_context.filing_needle-v1`` — facts stated once, deep in the notes: the litigation
  accrual (prose), the headcount (prose, a count), from d2 the debt due next year (a notes
  table), at d3 the revenue of one segment. The reference searches for the phrases, then
  reads the hit pages.
- ``long_context.filing_statements-v1`` — statement figures of the latest year from the same
  report, whose discussion states look-alike figures (adjusted operating income): revenue,
  operating income, net income, total assets, total liabilities and equity (checked: assets =
  liabilities + equity), from d2 operating/investing/financing cash flows and the net change
  (checked: they add up); the statements are split across pages (header repeated at d2, not
  at d3).

What they train: navigating a long document with search and an outline instead of reading it
whole, and ignoring figures that look like the answer. Reward and probes as in
:mod:`posttrain.domains.finance.filings_tasks` (field-level with consistency checks; wrong
scale, padded candidates, the prior year's figures).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.domains.finance._company import unit_multiplier
from posttrain.domains.finance.filings_plans import Reader, annual_spec, asked_scale, distinct, doc_company
from posttrain.domains.finance.filings_tasks import DocDomain, DocField, DocPlan
from posttrain.verifiers.fields import FieldSpec
from posttrain.verifiers.fields_checks import Check

PATH = "annual_report.pdf"
LONG_PAGES = {1: 24, 2: 32, 3: 42}


def _long_company(rng: random.Random, difficulty: int, keys: list[str], which: str):
    for _ in range(60):
        co = doc_company(rng, 3)
        spec = annual_spec(co, rng, difficulty, notes=True, long_pages=LONG_PAGES[difficulty])
        year, other = spec["years"][0], spec["years"][1]
        if distinct(co, which, keys, year, other):
            return co, spec, year, other
    raise RuntimeError("no suitable company in 60 draws")  # pragma: no cover


def _intro(co, spec) -> str:
    return (f"The annual report of {co['name']} for fiscal {spec['years'][0]} is in /work/{PATH}. It is long: "
            "use the outline and search rather than reading every page.")


def needle(rng: random.Random, difficulty: int) -> DocPlan:
    co, spec, year, _ = _long_company(rng, difficulty, ["revenue"], "income")
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    ex = co["extras"][str(year)]
    fields = [r.text_amount(ex["litigation"], r.layout.block_pages["litigation"][0], "litigation_accrual",
                            f"The litigation accrual recorded at December 31, {year}"),
              DocField(FieldSpec("employees", "count"), ex["employees"],
                       f"Number of full-time employees at December 31, {year}",
                       ("read_page", PATH, r.layout.block_pages["employees"][0]))]
    searches = [(PATH, "litigation accrual"), (PATH, "full-time employees")]
    if difficulty >= 2:
        first = min(co["maturities"], key=int)
        fields.append(r.note_amount("debt", first, co["maturities"][first], "debt_due_next_year",
                                    f"Principal of total debt due in {first} (debt note)"))
        searches.append((PATH, "Debt maturities"))
    if difficulty >= 3:
        seg = sorted(co["segments"][str(year)])[0]
        fields.append(r.note_amount("segments", seg, co["segments"][str(year)][seg], f"segment_{seg.lower()}",
                                    f"Revenue of the {seg} segment for fiscal {year}"))
        searches.append((PATH, "Revenue by segment"))
    unit = unit_multiplier(co)
    as_printed = {"litigation_accrual": ex["litigation"] * unit / scale * 1000, "employees": ex["employees"] + 1000}
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, searches=searches,
                   traps={"off_scale": as_printed})


BALANCE = ["total_assets", "total_liabilities", "equity"]
CASH = ["cfo", "cfi", "cff", "net_change"]


def statements(rng: random.Random, difficulty: int) -> DocPlan:
    co, spec, year, other = _long_company(rng, difficulty, ["revenue", "operating_income", "net_income"], "income")
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    keys = [("income", k) for k in ("revenue", "operating_income", "net_income")] + [("balance", k) for k in BALANCE]
    checks = [Check("balance_sheet_balances", {"total_assets": 1, "total_liabilities": -1, "equity": -1})]
    if difficulty >= 2:
        keys += [("cashflow", k) for k in CASH]
        checks.append(Check("cash_flows_add_up", {"cfo": 1, "cfi": 1, "cff": 1, "net_change": -1}))
    fields = [r.statement(which, k, year) for which, k in keys]
    wrong = {k: r.statement(which, k, other).value for which, k in keys}
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, checks,
                   searches=[(PATH, "Consolidated Statements of Operations")], traps={"wrong_year": wrong})


register_domain(DocDomain("long_context.filing_needle-v1", needle, family="long_context", max_turns=10,
                          description=('Finding facts stated once deep in the notes of a 30-60 page '
                                       'PDF annual report, with search and an outline.')))
register_domain(DocDomain("long_context.filing_statements-v1", statements, family="long_context", max_turns=10,
                          description=('Reading statement figures from a 30-60 page PDF report whose '
                                       'discussion states look-alike figures.')))
