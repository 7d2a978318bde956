"""Building blocks of the filing plans: a document company, its spec per difficulty, fields.

What it is: :func:`doc_company` (a generated company as JSON, plus the figures only the PDF
filings print: restructuring charges, a litigation accrual, a headcount, and optionally a
restated year), :func:`annual_spec` (the document spec of :mod:`.filings_sections` for a
difficulty), :class:`Reader` (asked amounts of a statement, note or footnote with the page the
reference reads them from, in the asked unit) and :func:`distinct` (a field set whose values
all differ from another year's, so the wrong-year trap is fully wrong).

Difficulty of an annual filing: d1 two fiscal years, tables whole, answers in the filing's
unit; d2 three years, the balance sheet and cash-flow statement split across pages with the
header row repeated, answers possibly in another unit; d3 the same split without the header
on the continuation page (the columns must be carried over), a footnoted row, another unit
more often.

Guarantees: deterministic given the rng; every amount a field asks for is non-zero.
Does not: decide which fields a domain asks (each domain module does).
"""

from __future__ import annotations

import json
import random
from typing import Any, Mapping, Sequence

from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import make_company, unit_multiplier
from posttrain.domains.finance.filings_sections import NOTE_SCALES, build_layout, label, shown_value
from posttrain.domains.finance.filings_tasks import DocField

QUESTION = {"revenue": "Revenue", "cogs": "Cost of revenue", "gross_profit": "Gross profit",
            "sga": "Selling, general and administrative expense", "operating_income": "Operating income",
            "interest": "Interest expense", "pretax_income": "Income before income taxes",
            "tax": "Income tax expense", "net_income": "Net income", "cash": "Cash and cash equivalents",
            "receivables": "Accounts receivable", "inventory": "Inventories",
            "current_assets": "Total current assets", "total_assets": "Total assets",
            "payables": "Accounts payable", "current_liabilities": "Total current liabilities",
            "long_debt": "Long-term debt", "total_liabilities": "Total liabilities",
            "retained": "Retained earnings", "equity": "Total shareholders' equity",
            "cfo": "Net cash provided by operating activities", "capex": "Capital expenditures (negative)",
            "cfi": "Net cash used in investing activities (negative when cash was used)",
            "cff": "Net cash from financing activities", "net_change": "Net change in cash",
            "cash_begin": "Cash at the beginning of the year", "cash_end": "Cash at the end of the year"}


def doc_company(rng: random.Random, years: int, restate: bool = False) -> dict[str, Any]:
    """A company as JSON (string year keys) with the PDF-only figures (see the module docstring)."""
    co = json.loads(json.dumps(make_company(rng, years)))
    co["extras"] = {str(y): {"restructuring": max(1, round(co["income"][str(y)]["sga"] * rng.uniform(0.03, 0.12))),
                             "litigation": max(1, round(co["income"][str(y)]["revenue"] * rng.uniform(0.002, 0.02))),
                             "employees": rng.randint(300, 40000)} for y in co["years"]}
    if restate:
        y = co["years"][-2]
        inc = dict(co["income"][str(y)])
        delta = round(inc["revenue"] * rng.choice([-1, 1]) * rng.uniform(0.01, 0.04)) or 1
        rate = inc["tax"] / inc["pretax_income"] if inc["pretax_income"] > 0 else 0.21
        dtax = round(delta * rate)
        for k in ("revenue", "gross_profit", "operating_income", "pretax_income"):
            inc[k] += delta
        inc["tax"] += dtax
        inc["net_income"] += delta - dtax
        co["restated"] = {"year": y, "income": inc}
    return co


def annual_spec(co: Mapping[str, Any], rng: random.Random, difficulty: int, **extra: Any) -> dict[str, Any]:
    years = sorted(co["years"], reverse=True)[:2 if difficulty <= 1 else 3]
    spec = {"company": co, "years": years, "split": {1: "none", 2: "repeat"}.get(difficulty, "bare"),
            "footnote": difficulty >= 3, "notes": False, "long_pages": 0, "prose_seed": rng.randrange(1 << 30)}
    spec.update(extra)
    return spec


def asked_scale(co: Mapping[str, Any], rng: random.Random, difficulty: int) -> float:
    return _kit.asked_scale(rng, unit_multiplier(co), difficulty) if difficulty >= 2 else unit_multiplier(co)


class Reader:
    """Fields read from one filing (``path``) in the asked unit ``scale``."""

    def __init__(self, path: str, spec: Mapping[str, Any], scale: float):
        self.path, self.spec, self.scale = path, spec, scale
        self.co = spec["company"]
        self.k = unit_multiplier(self.co) / scale
        self.layout = build_layout(spec)

    def page(self, table_id: str, row: str) -> int:
        return self.layout.row_page[table_id][row]

    def statement(self, which: str, key: str, year: int, name: str | None = None, *,
                  question: str | None = None) -> DocField:
        value = shown_value(self.co, self.spec, which, key, year) * self.k
        q = question or f"{QUESTION.get(key, key)} for fiscal {year}"
        return DocField(_kit.amount(name or key, self.scale), value, q,
                        ("extract_tables", self.path, self.page(which, label(which, key, self.spec))))

    def note_amount(self, table_id: str, row: str, raw: int, name: str, question: str) -> DocField:
        """An amount of a notes table (drawn in the notes' scale; asked in ``scale``)."""
        note_scale = NOTE_SCALES[self.spec.get("note_scale") or self.co["unit"]]
        shown = raw * unit_multiplier(self.co) / note_scale
        shown = round(shown) if note_scale <= unit_multiplier(self.co) else round(shown, 1)
        return DocField(_kit.amount(name, self.scale), shown * note_scale / self.scale, question,
                        ("extract_tables", self.path, self.page(table_id, row)))

    def text_amount(self, raw: int, page: int, name: str, question: str) -> DocField:
        """An amount stated in prose or a footnote (read with read_page)."""
        return DocField(_kit.amount(name, self.scale), raw * self.k, question, ("read_page", self.path, page))


def distinct(co: Mapping[str, Any], which: str, keys: Sequence[str], year: int, other: int) -> bool:
    """Every key non-zero in ``year`` and different in ``other`` (so a wrong-year copy misses all)."""
    a, b = co[which][str(year)], co[which][str(other)]
    return all(a[k] != 0 and abs(a[k] - b[k]) > 0.002 * abs(a[k]) for k in keys)


def pick_keys(rng: random.Random, co: Mapping[str, Any], which: str, pool: Sequence[str], n: int,
              year: int, other: int) -> list[str]:
    """``n`` keys of ``pool`` that pass :func:`distinct` for (year, other); fewer when too few do."""
    good = [k for k in pool if distinct(co, which, [k], year, other)]
    return rng.sample(good, min(n, len(good)))
