"""Finance analysis domains over a generated filing: liquidity, working-capital efficiency,
DuPont decomposition, EBITDA reconciliation and leverage.

- ``finance.liquidity-v1`` — quick ratio and working capital (d1); current, quick and cash
  ratios (d2); all of them plus the change in the quick ratio from the prior year (d3).
- ``finance.efficiency-v1`` — days sales outstanding, days inventory outstanding, days payables
  outstanding and the cash conversion cycle (365-day year); ending balances at d1-d2,
  averages of opening and closing balances at d3.
- ``finance.dupont-v1`` — ROE decomposed: net margin x asset turnover x equity multiplier
  (d1-d2, ending balances; d2 adds ROA); five factors at d3 (tax burden, interest burden,
  EBIT margin, asset turnover, equity multiplier) on average balances.
- ``finance.ebitda-v1`` — EBITDA rebuilt from operating income and D&A (d1, with its
  margin); net debt and net debt / EBITDA (d2); EBITDA interest coverage and a bottom-up
  reconciliation from net income (d3: the same figure reached from the other end).

Difficulty as in :mod:`.statements` (d1 the needed statements only, d2 all statements in
any table style and possibly another unit, d3 three years, a distractor discussion, HTML).
What they train: picking the right lines across statements, averages, composite metrics.
Not covered: leases in net debt, adjusted (non-GAAP) EBITDA, seasonal working capital.

Probes (besides the shared ones): every metric for the wrong fiscal year; and, where the
whole answer changes, the classic slips: inventory kept in the quick ratio, a 360-day year,
the equity multiplier inverted, EBITDA without adding D&A back.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import Ctx, Field, filing_task


def _liquidity(c: Ctx, mistake: str | None) -> dict[str, Field]:
    def q(y: int) -> float:
        quick = c.v("balance", "cash", y) + c.v("balance", "receivables", y)
        if mistake == "inventory_in_quick":
            quick += c.v("balance", "inventory", y)
        return quick / c.v("balance", "current_liabilities", y)

    ca, cl = c.v("balance", "current_assets"), c.v("balance", "current_liabilities")
    prev = c.y - 1
    return {
        "current_ratio": Field(_kit.ratio("current_ratio"), ca / cl, f"current ratio at the end of fiscal {c.y}: "
                               "total current assets / total current liabilities"),
        "quick_ratio": Field(_kit.ratio("quick_ratio"), q(c.y), f"quick ratio at the end of fiscal {c.y}: "
                             "(cash and cash equivalents + accounts receivable) / total current liabilities"),
        "cash_ratio": Field(_kit.ratio("cash_ratio"), c.v("balance", "cash") / cl,
                            f"cash ratio at the end of fiscal {c.y}: cash and cash equivalents / total current liabilities"),
        "working_capital": Field(c.amt("working_capital"), (ca - cl) * c.k,
                                 f"working capital at the end of fiscal {c.y}: total current assets - total current "
                                 "liabilities"),
        "quick_ratio_change": Field(_kit.ratio("quick_ratio_change"),
                                    q(c.y) - q(prev) if prev in c.co["years"] else 0.0,
                                    f"change in the quick ratio from fiscal {prev} to {c.y} (new - old)"),
    }


ID_LIQUIDITY = "finance.liquidity-v1"


def _draw_liquidity(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["quick_ratio", "working_capital"], 2: ["current_ratio", "quick_ratio", "cash_ratio"],
             3: ["current_ratio", "quick_ratio", "cash_ratio", "working_capital", "quick_ratio_change"]}[difficulty]
    return filing_task(ID_LIQUIDITY, rng, difficulty, ("balance",), _liquidity, names, prior=difficulty == 3,
                       mistakes=("inventory_in_quick",))


register_domain(_kit.field_domain(ID_LIQUIDITY, _draw_liquidity, """\
Liquidity analysis from a balance sheet: current, quick and cash ratios, working capital.

Quick ratio and working capital (d1); current, quick and cash ratios (d2); all of them plus the
change in the quick ratio from the prior year (d3).
"""))


def _bal(c: Ctx, item: str, average: bool) -> float:
    now = c.v("balance", item)
    return (now + c.v("balance", item, c.y - 1)) / 2 if average else now


def _efficiency(c: Ctx, mistake: str | None, average: bool) -> dict[str, Field]:
    n = 360 if mistake == "days_360" else 365
    rev, cogs = c.v("income", "revenue"), c.v("income", "cogs")
    dso = _bal(c, "receivables", average) / rev * n
    dio = _bal(c, "inventory", average) / cogs * n
    dpo = _bal(c, "payables", average) / cogs * n
    basis = "the average of opening and closing" if average else "year-end"
    return {
        "dso": Field(_kit.ratio("dso"), dso, f"days sales outstanding, fiscal {c.y}: {basis} accounts receivable / "
                     "revenue x 365"),
        "dio": Field(_kit.ratio("dio"), dio, f"days inventory outstanding, fiscal {c.y}: {basis} inventories / cost "
                     "of revenue x 365"),
        "dpo": Field(_kit.ratio("dpo"), dpo, f"days payables outstanding, fiscal {c.y}: {basis} accounts payable / "
                     "cost of revenue x 365"),
        "ccc": Field(_kit.ratio("ccc"), dso + dio - dpo, f"cash conversion cycle, fiscal {c.y}: DSO + DIO - DPO"),
    }


ID_EFFICIENCY = "finance.efficiency-v1"


def _draw_efficiency(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["dso", "dio"], 2: ["dso", "dio", "dpo", "ccc"], 3: ["dso", "dio", "dpo", "ccc"]}[difficulty]
    avg = difficulty == 3
    return filing_task(ID_EFFICIENCY, rng, difficulty, ("income", "balance"),
                       lambda c, m: _efficiency(c, m, avg), names, prior=avg, mistakes=("days_360",),
                       extra=lambda c: "Give day counts rounded to two decimals.\n")


register_domain(_kit.field_domain(ID_EFFICIENCY, _draw_efficiency, """\
Working-capital efficiency: DSO, DIO, DPO and the cash conversion cycle.

Days sales outstanding, days inventory outstanding, days payables outstanding and the cash
conversion cycle (365-day year); ending balances at d1-d2, averages of opening and closing
balances at d3.
"""))


def _dupont(c: Ctx, mistake: str | None, average: bool) -> dict[str, Field]:
    rev, ni = c.v("income", "revenue"), c.v("income", "net_income")
    ebit, pretax = c.v("income", "operating_income"), c.v("income", "pretax_income")
    ta, eq = _bal(c, "total_assets", average), _bal(c, "equity", average)
    em = eq / ta if mistake == "multiplier_inverted" else ta / eq
    basis = "average of opening and closing" if average else "year-end"
    f = {
        "net_margin_pct": (_kit.percent, 100 * ni / rev, "net income / revenue x 100"),
        "asset_turnover": (_kit.ratio, rev / ta, f"revenue / {basis} total assets"),
        "equity_multiplier": (_kit.ratio, em, f"{basis} total assets / {basis} total shareholders' equity"),
        "roe_pct": (_kit.percent, 100 * ni / eq, f"net income / {basis} total shareholders' equity x 100"),
        "roa_pct": (_kit.percent, 100 * ni / ta, f"net income / {basis} total assets x 100"),
        "tax_burden": (_kit.ratio, ni / pretax, "net income / income before income taxes"),
        "interest_burden": (_kit.ratio, pretax / ebit, "income before income taxes / operating income (EBIT)"),
        "ebit_margin_pct": (_kit.percent, 100 * ebit / rev, "operating income / revenue x 100"),
    }
    return {n: Field(s(n), v, f"fiscal {c.y}: {q}") for n, (s, v, q) in f.items()}


ID_DUPONT = "finance.dupont-v1"


def _draw_dupont(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["net_margin_pct", "asset_turnover", "equity_multiplier", "roe_pct"],
             2: ["net_margin_pct", "asset_turnover", "equity_multiplier", "roe_pct", "roa_pct"],
             3: ["tax_burden", "interest_burden", "ebit_margin_pct", "asset_turnover", "equity_multiplier",
                 "roe_pct"]}[difficulty]
    avg = difficulty == 3
    return filing_task(ID_DUPONT, rng, difficulty, ("income", "balance"), lambda c, m: _dupont(c, m, avg), names,
                       prior=avg, mistakes=("multiplier_inverted",))


register_domain(_kit.field_domain(ID_DUPONT, _draw_dupont, """\
DuPont analysis: return on equity decomposed into its three or five factors.

ROE decomposed: net margin x asset turnover x equity multiplier (d1-d2, ending balances; d2 adds
ROA); five factors at d3 (tax burden, interest burden, EBIT margin, asset turnover, equity
multiplier) on average balances.
"""))


def _ebitda(c: Ctx, mistake: str | None, bottom_up: bool) -> dict[str, Field]:
    da = 0 if mistake == "no_addback" else c.v("income", "da")
    e = c.v("income", "operating_income") + da
    debt = c.v("balance", "short_debt") + c.v("balance", "long_debt")
    net_debt = debt - c.v("balance", "cash")
    how = ("net income + income tax expense + interest expense + depreciation and amortization" if bottom_up
           else "operating income + depreciation and amortization")
    return {
        "ebitda": Field(c.amt("ebitda"), e * c.k, f"EBITDA for fiscal {c.y}: {how}"),
        "ebitda_margin_pct": Field(_kit.percent("ebitda_margin_pct"), 100 * e / c.v("income", "revenue"),
                                   f"EBITDA / revenue x 100, fiscal {c.y}"),
        "net_debt": Field(c.amt("net_debt"), net_debt * c.k, f"net debt at the end of fiscal {c.y}: short-term debt "
                          "+ long-term debt - cash and cash equivalents"),
        "net_debt_to_ebitda": Field(_kit.ratio("net_debt_to_ebitda"), net_debt / e, f"net debt / EBITDA, fiscal {c.y}"),
        "ebitda_interest_coverage": Field(_kit.ratio("ebitda_interest_coverage"), e / c.v("income", "interest"),
                                          f"EBITDA / interest expense, fiscal {c.y}"),
    }


ID_EBITDA = "finance.ebitda-v1"


def _draw_ebitda(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["ebitda", "ebitda_margin_pct"], 2: ["ebitda", "net_debt", "net_debt_to_ebitda"],
             3: ["ebitda", "ebitda_margin_pct", "net_debt", "net_debt_to_ebitda", "ebitda_interest_coverage"]}
    parts = ("income",) if difficulty == 1 else ("income", "balance")
    return filing_task(ID_EBITDA, rng, difficulty, parts, lambda c, m: _ebitda(c, m, difficulty == 3),
                       names[difficulty], mistakes=("no_addback",))


register_domain(_kit.field_domain(ID_EBITDA, _draw_ebitda, """\
EBITDA: rebuilding it from operating income or net income, net debt and leverage.

EBITDA rebuilt from operating income and D&A (d1, with its margin); net debt and net debt /
EBITDA (d2); EBITDA interest coverage and a bottom-up reconciliation from net income (d3: the
same figure reached from the other end).
"""))
