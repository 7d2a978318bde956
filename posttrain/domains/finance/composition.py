"""Finance domains over a generated filing: segment mix and common-size statements.

- ``finance.segment_mix-v1`` — every segment's share of revenue from the notes; the largest
  segment (a name gated on its share being right); at d3 the fastest-growing segment (gated
  on its growth).
- ``finance.common_size-v1`` — income-statement lines as % of revenue and balance-sheet lines
  as % of total assets (d1 income statement only; both statements above).

Difficulty as in :mod:`.statements`. What they train: reading the notes, expressing lines on a
common base. Not covered: segment eliminations.

Probes (besides the shared ones): every metric for the wrong fiscal year; common-size lines on
the wrong base (kept when it changes every field).
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import LABELS
from posttrain.domains.finance._kit import Ctx, Field, filing_task


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


ID_SEGMENT_MIX = "finance.segment_mix-v1"


def _draw_segment_mix(rng: random.Random, difficulty: int) -> Task:
    def names(c: Ctx) -> list[str]:
        out = [f"{s.lower()}_share_pct" for s in c.co["segments"][c.y]] + ["largest_segment"]
        return out + (["fastest_growing_segment", "fastest_growth_pct"] if difficulty == 3 else [])

    task = filing_task(ID_SEGMENT_MIX, rng, difficulty, ("income", "notes"), _segments, names, prior=difficulty == 3)
    return _gate_leaders(task)


register_domain(_kit.field_domain(ID_SEGMENT_MIX, _draw_segment_mix, """\
Reading segment notes: each segment's share of revenue, the largest and fastest-growing segment.

Every segment's share of revenue from the notes; the largest segment (a name gated on its share
being right); at d3 the fastest-growing segment (gated on its growth).
"""))


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


ID_COMMON_SIZE = "finance.common_size-v1"


def _draw_common_size(rng: random.Random, difficulty: int) -> Task:
    n_is, n_bs = {1: (3, 0), 2: (2, 2), 3: (3, 3)}[difficulty]

    def names(c: Ctx) -> list[str]:
        r = random.Random(c.rng_extra)
        return [f"{i}_pct" for i in r.sample(IS_LINES, n_is) + r.sample(BS_LINES, n_bs)]

    parts = ("income",) if difficulty == 1 else ("income", "balance")
    return filing_task(ID_COMMON_SIZE, rng, difficulty, parts, _common, names, mistakes=("wrong_base",))


register_domain(_kit.field_domain(ID_COMMON_SIZE, _draw_common_size, """\
Common-size analysis: income-statement lines as % of revenue, balance-sheet lines as % of assets.

Income-statement lines as % of revenue and balance-sheet lines as % of total assets (d1 income
statement only; both statements above).
"""))
