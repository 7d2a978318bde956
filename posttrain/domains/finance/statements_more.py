"""Finance domains over a generated filing: cash flow, working capital, segments and
common-size statements.

- ``finance.free_cash_flow-v1`` — free cash flow (operating cash flow + capital expenditures)
  and capex / D&A (d1); FCF conversion of net income and FCF after dividends (d2); cumulative
  FCF over every year shown (d3).
- ``finance.working_capital_change-v1`` — operating working capital (receivables +
  inventories - payables - accrued liabilities) from two balance sheets, its change and the
  cash-flow effect (the negative of the change); d3 also the prior year's change.
- ``finance.segment_mix-v1`` — every segment's share of revenue from the notes; the largest
  segment (a name gated on its share being right); at d3 the fastest-growing segment (gated
  on its growth).
- ``finance.common_size-v1`` — income-statement lines as % of revenue and balance-sheet lines
  as % of total assets (d1 income statement only; both statements above).

Difficulty as in :mod:`.statements`. What they train: cross-statement arithmetic, reading the
notes, signs on the cash-flow statement (capex and dividends are printed negative). Not
covered: acquisitions in capex, special dividends, segment eliminations.

Probes (besides the shared ones): every metric for the wrong fiscal year; cash counted as
working capital; capex added instead of subtracted; common-size lines on the wrong base (each kept when it changes every field).
"""

from __future__ import annotations

import random
from dataclasses import replace

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import LABELS
from posttrain.domains.finance._fieldtask import Field, FieldDomain
from posttrain.domains.finance._filingtask import Ctx, filing_task


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


@register_domain
class FreeCashFlow(FieldDomain):
    """Free cash flow and its uses (see the module docstring)."""

    id = "finance.free_cash_flow-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        names = {1: ["fcf", "capex_to_da"], 2: ["fcf", "fcf_conversion_pct", "fcf_after_dividends"],
                 3: ["fcf", "fcf_conversion_pct", "fcf_after_dividends", "cumulative_fcf"]}[difficulty]
        return filing_task(self.id, rng, difficulty, ("cashflow",), _fcf, names, mistakes=("capex_added",))


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


@register_domain
class WorkingCapitalChange(FieldDomain):
    """Working-capital change from two balance sheets (see the module docstring)."""

    id = "finance.working_capital_change-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        names = {1: ["owc_end", "owc_change"], 2: ["owc_end", "owc_begin", "owc_change", "cash_flow_effect"],
                 3: ["owc_end", "owc_change", "cash_flow_effect", "owc_change_prior"]}[difficulty]
        if difficulty < 3:  # prior=True: the year whose prior balance sheet is on the page
            return filing_task(self.id, rng, difficulty, ("balance",), _wc, names, prior=True,
                               mistakes=("cash_included",))
        last = lambda c, m: _wc(replace(c, y=c.co["years"][-1]), m)  # noqa: E731 (needs two priors on the page)
        return filing_task(self.id, rng, difficulty, ("balance",), last, names, mistakes=("cash_included",))


def _segments(c: Ctx, mistake: str | None) -> dict[str, Field]:
    seg, rev = c.co["segments"][c.y], c.v("income", "revenue")
    out = {f"{s.lower()}_share_pct": Field(_kit.percent(f"{s.lower()}_share_pct"), 100 * r / rev,
                                           f"{s} segment revenue as a percent of total revenue, fiscal {c.y}")
           for s, r in seg.items()}
    out["largest_segment"] = Field(_kit.choice("largest_segment"), max(seg, key=seg.get),
                                   f"the name of the segment with the most revenue in fiscal {c.y}")
    prev = c.co["segments"].get(c.y - 1)
    if prev:
        growth = {s: 100 * (seg[s] - prev[s]) / prev[s] for s in seg}
        top = max(growth, key=growth.get)
        out["fastest_growing_segment"] = Field(_kit.choice("fastest_growing_segment"), top,
                                               f"the segment whose revenue grew fastest (in percent) from fiscal "
                                               f"{c.y - 1} to {c.y}")
        out["fastest_growth_pct"] = Field(_kit.percent("fastest_growth_pct"), growth[top],
                                          "that segment's revenue growth in percent")
    return out


@register_domain
class SegmentMix(FieldDomain):
    """Segment shares of revenue and the leaders (see the module docstring)."""

    id = "finance.segment_mix-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        def names(c: Ctx) -> list[str]:
            out = [f"{s.lower()}_share_pct" for s in c.co["segments"][c.y]] + ["largest_segment"]
            return out + (["fastest_growing_segment", "fastest_growth_pct"] if difficulty == 3 else [])

        task = filing_task(self.id, rng, difficulty, ("income", "notes"), _segments, names, prior=difficulty == 3)
        return _gate_leaders(task)


def _gate_leaders(task: Task) -> Task:
    """Gate each leader name on the figure that identifies it (guessing a name earns nothing)."""
    exp = task.hidden["expected"]
    gates = {"largest_segment": f"{exp['largest_segment'].lower()}_share_pct"}
    if "fastest_growing_segment" in exp:
        gates["fastest_growing_segment"] = "fastest_growth_pct"
    task.hidden["gates"] = gates
    return task


IS_LINES = ["cogs", "gross_profit", "sga", "rnd", "da", "operating_income", "interest", "tax", "net_income"]
BS_LINES = ["cash", "receivables", "inventory", "ppe", "goodwill", "current_liabilities", "long_debt", "equity"]


def _common(c: Ctx, mistake: str | None) -> dict[str, Field]:
    rev, ta = c.v("income", "revenue"), c.v("balance", "total_assets")
    swap = mistake == "wrong_base"
    out = {f"{i}_pct": Field(_kit.percent(f"{i}_pct"), 100 * c.v("income", i) / (ta if swap else rev),
                             f"{LABELS[i]} as a percent of revenue, fiscal {c.y}") for i in IS_LINES}
    out.update({f"{i}_pct": Field(_kit.percent(f"{i}_pct"), 100 * c.v("balance", i) / (rev if swap else ta),
                                  f"{LABELS[i]} as a percent of total assets, end of fiscal {c.y}") for i in BS_LINES})
    return out


@register_domain
class CommonSize(FieldDomain):
    """Common-size income statement and balance sheet lines (see the module docstring)."""

    id = "finance.common_size-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n_is, n_bs = {1: (3, 0), 2: (2, 2), 3: (3, 3)}[difficulty]

        def names(c: Ctx) -> list[str]:
            r = random.Random(c.rng_extra)
            return [f"{i}_pct" for i in r.sample(IS_LINES, n_is) + r.sample(BS_LINES, n_bs)]

        parts = ("income",) if difficulty == 1 else ("income", "balance")
        return filing_task(self.id, rng, difficulty, parts, _common, names, mistakes=("wrong_base",))
