"""Finance domains over a generated filing: free cash flow and working-capital change.

- ``finance.free_cash_flow-v1`` — free cash flow (operating cash flow + capital expenditures)
  and capex / D&A (d1); FCF conversion of net income and FCF after dividends (d2); cumulative
  FCF over every year shown (d3).
- ``finance.working_capital_change-v1`` — operating working capital (receivables +
  inventories - payables - accrued liabilities) from two balance sheets, its change and the
  cash-flow effect (the negative of the change); d3 also the prior year's change.

Difficulty as in :mod:`.statements`. What they train: cross-statement arithmetic, signs on the
cash-flow statement (capex and dividends are printed negative). Not covered: acquisitions in
capex, special dividends.

Probes (besides the shared ones): every metric for the wrong fiscal year; cash counted as
working capital; capex added instead of subtracted (each kept when it changes every field).
"""

from __future__ import annotations

import random
from dataclasses import replace

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import Ctx, Field, filing_task


def _fcf(c: Ctx, mistake: str | None) -> dict[str, Field]:
    def fcf(y: int) -> int:
        capex = c.v("cashflow", "capex", y)
        return c.v("cashflow", "cfo", y) + (-capex if mistake == "capex_added" else capex)

    f, div = fcf(c.y), c.v("cashflow", "dividends")
    return {
        "fcf": Field(c.amt("fcf"), f * c.k, f"free cash flow for fiscal {c.y}: net cash provided by operating "
                     "activities + capital expenditures (printed negative)"),
        "capex_to_da": Field(_kit.ratio("capex_to_da"), -c.v("cashflow", "capex") / c.v("cashflow", "da"),
                             f"capital expenditures (as a positive amount) / depreciation and amortization, fiscal {c.y}"),
        "fcf_conversion_pct": Field(_kit.percent("fcf_conversion_pct"), 100 * f / c.v("cashflow", "net_income"),
                                    f"free cash flow / net income x 100, fiscal {c.y}"),
        "fcf_after_dividends": Field(c.amt("fcf_after_dividends"), (f + div) * c.k,
                                     f"free cash flow less dividends paid, fiscal {c.y}"),
        "cumulative_fcf": Field(c.amt("cumulative_fcf"), sum(fcf(y) for y in c.co["years"]) * c.k,
                                "free cash flow summed over every fiscal year shown"),
    }


ID_FREE_CASH_FLOW = "finance.free_cash_flow-v1"


def _draw_free_cash_flow(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["fcf", "capex_to_da"], 2: ["fcf", "fcf_conversion_pct", "fcf_after_dividends"],
             3: ["fcf", "fcf_conversion_pct", "fcf_after_dividends", "cumulative_fcf"]}[difficulty]
    return filing_task(ID_FREE_CASH_FLOW, rng, difficulty, ("cashflow",), _fcf, names, mistakes=("capex_added",))


register_domain(_kit.field_domain(ID_FREE_CASH_FLOW, _draw_free_cash_flow, """\
Computing free cash flow and its uses from a generated cash-flow statement.

Free cash flow (operating cash flow + capital expenditures) and capex / D&A (d1); FCF conversion
of net income and FCF after dividends (d2); cumulative FCF over every year shown (d3).
"""))


def _owc(c: Ctx, y: int, mistake: str | None) -> int:
    b = c.co["balance"][y]
    extra = b["cash"] if mistake == "cash_included" else 0
    return b["receivables"] + b["inventory"] - b["payables"] - b["accrued"] + extra


def _wc(c: Ctx, mistake: str | None) -> dict[str, Field]:
    end, begin, before = (_owc(c, c.y - i, mistake) for i in range(3))
    owc = "operating working capital (accounts receivable + inventories - accounts payable - accrued liabilities)"
    return {
        "owc_end": Field(c.amt("owc_end"), end * c.k, f"{owc} at the end of fiscal {c.y}"),
        "owc_begin": Field(c.amt("owc_begin"), begin * c.k, f"the same at the end of fiscal {c.y - 1}"),
        "owc_change": Field(c.amt("owc_change"), (end - begin) * c.k,
                            f"change in operating working capital during fiscal {c.y} (end - beginning)"),
        "cash_flow_effect": Field(c.amt("cash_flow_effect"), (begin - end) * c.k,
                                  f"effect of that change on operating cash flow in fiscal {c.y} (an increase in "
                                  "working capital uses cash: negative)"),
        "owc_change_prior": Field(c.amt("owc_change_prior"), (begin - before) * c.k,
                                  f"change in operating working capital during fiscal {c.y - 1}"),
    }


ID_WORKING_CAPITAL_CHANGE = "finance.working_capital_change-v1"


def _draw_working_capital_change(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["owc_end", "owc_change"], 2: ["owc_end", "owc_begin", "owc_change", "cash_flow_effect"],
             3: ["owc_end", "owc_change", "cash_flow_effect", "owc_change_prior"]}[difficulty]
    if difficulty < 3:  # prior=True: the year whose prior balance sheet is on the page
        return filing_task(ID_WORKING_CAPITAL_CHANGE, rng, difficulty, ("balance",), _wc, names, prior=True,
                           mistakes=("cash_included",))
    last = lambda c, m: _wc(replace(c, y=c.co["years"][-1]), m)  # noqa: E731 (needs two priors on the page)
    return filing_task(ID_WORKING_CAPITAL_CHANGE, rng, difficulty, ("balance",), last, names, mistakes=("cash_included",))


register_domain(_kit.field_domain(ID_WORKING_CAPITAL_CHANGE, _draw_working_capital_change, """\
Computing the change in operating working capital and its cash-flow effect from two balance sheets.

Operating working capital (receivables + inventories - payables - accrued liabilities) from two
balance sheets, its change and the cash-flow effect (the negative of the change); d3 also the
prior year's change.
"""))
