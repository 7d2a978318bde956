"""Per-share finance domains: dividends from a filing, and basic/diluted EPS from share notes.

- ``finance.dividends-v1`` — over a generated filing (cash-flow statement and share notes):
  dividends paid and dividends per share (d1); payout ratio and dividend yield at a stated
  year-end share price (d2); sustainable growth rate (ROE on year-end equity x retention
  ratio) and the payout of free cash flow (d3).
- ``finance.eps_dilution-v1`` — a share-capital note: shares at the start of the year,
  issuances and buybacks dated within the year (time-weighted), preferred dividends, stock
  options (treasury-stock method at the average market price) and (d3) a convertible bond
  (if-converted method, after-tax interest added back, included only when dilutive).
  Asks the weighted-average share count, basic EPS and (d2+) diluted EPS.

What they train: share-count arithmetic, per-share figures, the sign of dividends on a
cash-flow statement. Not covered: stock splits, participating securities, two-class EPS,
contingently issuable shares.

Probes (besides the shared ones): wrong fiscal year (dividends); year-end shares used instead
of the weighted average, preferred dividends not deducted, options added at their full count
(EPS) — each kept when it changes every field.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import Ctx, Field, filing_task
from posttrain.verifiers.fields import FieldSpec


def _price(c: Ctx) -> float:
    """A year-end share price giving a 1-6 % yield (drawn from the task's own random number)."""
    dps = -c.v("cashflow", "dividends") / c.co["shares"][c.y]
    return round(dps / (0.01 + 0.05 * c.rng_extra), 2)


def _dividends(c: Ctx, mistake: str | None) -> dict[str, Field]:
    div, ni = -c.v("cashflow", "dividends"), c.v("cashflow", "net_income")
    shares = c.co["shares"][c.y] * (1000 if mistake == "shares_scale" else 1)
    dps = div / shares
    fcf = c.v("cashflow", "cfo") + c.v("cashflow", "capex")
    if fcf <= 0 or ni <= 0:  # the ratios below mean nothing then: redraw (filing_task skips on this)
        raise ZeroDivisionError("non-positive free cash flow or earnings")
    payout = 100 * div / ni
    y = c.y
    return {
        "dividends_paid": Field(c.amt("dividends_paid"), div * c.k, f"dividends paid in fiscal {y}, as a positive amount"),
        "dividends_per_share": Field(_kit.ratio("dividends_per_share"), dps, f"dividends paid / weighted-average "
                                     f"diluted shares, fiscal {y}, in U.S. dollars per share"),
        "payout_ratio_pct": Field(_kit.percent("payout_ratio_pct"), payout, f"dividends paid / net income x 100, fiscal {y}"),
        "dividend_yield_pct": Field(_kit.percent("dividend_yield_pct"), 100 * dps / _price(c),
                                    f"dividends per share / year-end share price x 100, fiscal {y}"),
        "sustainable_growth_pct": Field(_kit.percent("sustainable_growth_pct"),
                                        100 * ni / c.v("balance", "equity") * (1 - payout / 100),
                                        f"sustainable growth rate: (net income / year-end total shareholders' equity) x "
                                        f"(1 - payout ratio) x 100, fiscal {y}"),
        "fcf_payout_pct": Field(_kit.percent("fcf_payout_pct"), 100 * div / fcf, f"dividends paid / free cash flow "
                                "(operating cash flow + capital expenditures) x 100, fiscal {y}"),
    }


ID_DIVIDENDS = "finance.dividends-v1"


def _draw_dividends(rng: random.Random, difficulty: int) -> Task:
    names = {1: ["dividends_paid", "dividends_per_share"],
             2: ["dividends_per_share", "payout_ratio_pct", "dividend_yield_pct"],
             3: ["dividends_per_share", "payout_ratio_pct", "dividend_yield_pct", "sustainable_growth_pct",
                 "fcf_payout_pct"]}[difficulty]
    parts = ("cashflow", "notes")
    extra = None if difficulty == 1 else (
        lambda c: f"Market data: the share price at the end of fiscal {c.y} was ${_price(c):,.2f}.\n")
    return filing_task(ID_DIVIDENDS, rng, difficulty, parts, _dividends, names, mistakes=("shares_scale",), extra=extra)


register_domain(_kit.field_domain(ID_DIVIDENDS, _draw_dividends, """\
Dividend analysis from a filing: dividends per share, payout ratio, yield, sustainable growth.

Over a generated filing (cash-flow statement and share notes): dividends paid and dividends per
share (d1); payout ratio and dividend yield at a stated year-end share price (d2); sustainable
growth rate (ROE on year-end equity x retention ratio) and the payout of free cash flow (d3).
"""))


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def _eps(p: dict, mistake: str | None = None) -> dict[str, float]:
    w = lambda m: (12 - m) / 12  # noqa: E731 (months outstanding from the first day of month index m)
    waso = p["s0"] + p["issued"] * w(p["m_issue"]) - p["bought"] * w(p["m_buy"])
    if mistake == "year_end_shares":
        waso = p["s0"] + p["issued"] - p["bought"]
    earn = p["ni"] - (0 if mistake == "ignore_preferred" else p["pref"])
    basic = earn / waso
    opt = p["options"] if mistake == "options_full" else p["options"] * (1 - p["strike"] / p["avg_price"])
    num, den = earn, waso + opt
    if p["conv_shares"]:
        addback = p["conv_interest"] * (1 - p["tax"])
        if addback / p["conv_shares"] < num / den:  # dilutive only
            num, den = num + addback, den + p["conv_shares"]
    return {"weighted_avg_shares": waso, "basic_eps": basic, "diluted_eps": min(num / den, basic)}


ID_EPS_DILUTION = "finance.eps_dilution-v1"


def _draw_eps_dilution(rng: random.Random, difficulty: int) -> Task:
    s0 = rng.randint(20, 900) * 100_000
    p = {"s0": s0, "issued": rng.randint(5, 30) * s0 // 100, "m_issue": rng.randint(1, 11),
         "bought": rng.randint(2, 10) * s0 // 100 if difficulty > 1 else 0, "m_buy": rng.randint(1, 11),
         "ni": s0 * rng.randint(50, 900) // 100, "pref": 0, "options": 0, "strike": 10.0, "avg_price": 20.0,
         "conv_shares": 0, "conv_interest": 0, "tax": rng.choice([0.21, 0.25, 0.3])}
    lines = [f"Shares outstanding on January 1: {s0:,}",
             f"Issued for cash on {MONTHS[p['m_issue']]} 1: {p['issued']:,} shares",
             f"Net income for the year: ${p['ni']:,}"]
    if difficulty > 1:
        p["pref"] = p["ni"] * rng.randint(3, 15) // 100
        p["options"] = s0 * rng.randint(3, 12) // 100
        p["strike"] = float(rng.randint(5, 60))
        p["avg_price"] = round(p["strike"] * rng.uniform(1.2, 2.5), 2)
        lines += [f"Repurchased on {MONTHS[p['m_buy']]} 1: {p['bought']:,} shares",
                  f"Preferred dividends declared: ${p['pref']:,}",
                  f"Stock options outstanding all year: {p['options']:,}, exercise price ${p['strike']:.2f}; "
                  f"average market price of the shares during the year ${p['avg_price']:.2f}"]
    if difficulty == 3:
        face = rng.randint(10, 200) * 100_000
        p["conv_interest"] = face * rng.randint(2, 8) // 100
        p["conv_shares"] = s0 * rng.randint(2, 15) // 100
        lines.append(f"Convertible bonds outstanding all year: ${face:,} face value, interest expense "
                     f"${p['conv_interest']:,}, convertible into {p['conv_shares']:,} shares; tax rate "
                     f"{p['tax']:.0%}")
    doc = ("Note 12. Share capital and earnings per share (fiscal year = calendar year)\n" + "\n".join(lines)
           + "\nUse the treasury-stock method for options and the if-converted method for convertible debt; "
             "exclude anti-dilutive securities.")
    names = ["weighted_avg_shares", "basic_eps"] + (["diluted_eps"] if difficulty > 1 else [])
    table = {"weighted_avg_shares": (lambda n: FieldSpec(n, "amount", 1.0, 1.0, rel_tol=1e-4),
                                     "weighted-average common shares outstanding for the year"),
             "basic_eps": (_kit.ratio, "basic earnings per share in dollars"),
             "diluted_eps": (_kit.ratio, "diluted earnings per share in dollars")}
    return _kit.scenario_task(ID_EPS_DILUTION, difficulty, doc, _eps,
                              p, table, names, ("year_end_shares", "ignore_preferred", "options_full"), scale=None)


register_domain(_kit.field_domain(ID_EPS_DILUTION, _draw_eps_dilution, """\
Earnings per share from a share note: weighted-average shares, basic and diluted EPS.

A share-capital note: shares at the start of the year, issuances and buybacks dated within the
year (time-weighted), preferred dividends, stock options (treasury-stock method at the average
market price) and (d3) a convertible bond (if-converted method, after-tax interest added back,
included only when dilutive). Asks the weighted-average share count, basic EPS and (d2+) diluted
EPS.
"""))
