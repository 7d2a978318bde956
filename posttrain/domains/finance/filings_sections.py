"""The content of a PDF filing: statements, notes and prose as blocks for :mod:`.filings_pdf`.

What it is: :func:`filing_blocks` turns a *document spec* (plain JSON: a generated company
from :func:`~posttrain.domains.finance._company.make_company` round-tripped through JSON, so
its years are string keys, plus layout options) into the blocks of an annual report; and
:func:`build_layout` / :func:`build_pdf` paginate and draw it (the bytes cached per spec).

Spec options: ``years`` (the fiscal years shown, most recent first), ``split`` (``none``:
tables start high on a page; ``repeat``/``bare``: the balance sheet and cash-flow statement
start near the bottom of a page and continue on the next, with the header row repeated or
not), ``footnote`` (a footnoted SG&A row: restructuring charges), ``notes`` (segment, debt
and share tables), ``note_scale`` (a scale for the notes other than the statements'),
``restated`` (the income-statement column of that year shows ``company["restated"]`` and a
restatement note is added; ``restatement_table`` says whether the note tabulates the change),
``long_pages`` (0, or the number of pages of risk factors, discussion and policies to add),
``prose_seed`` (the prose's own seed).

Guarantees: every amount drawn in a statement is the company's value in the filing's unit
(or the restated value, where asked); the notes' scale note names their own scale; the same
spec gives the same blocks, layout and bytes. Does not: tie out a restated year's balance
sheet and cash flows (a restatement filing shows the income statement and balance sheet only).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from typing import Any, Mapping

from posttrain.domains.finance._company import BS_ROWS, CF_ROWS, IS_ROWS, TOTALS
from posttrain.domains.finance._render import TITLES, fmt
from posttrain.domains.finance.filings_pdf import (
    Block, Layout, Table, fill, heading, page_break, paginate, para, render_pdf, table,
)
from posttrain.domains.finance.filings_prose import discussion, section

ROWS = {"income": IS_ROWS, "balance": BS_ROWS, "cashflow": CF_ROWS}
SIGNED = {"revenue", "total_assets", "liabilities_equity", "net_income", "cash_end"}
FOOTNOTE = "sga"
NOTE_SCALES = {"thousands": 1e3, "millions": 1e6}


def label(which: str, key: str, spec: Mapping[str, Any]) -> str:
    """The row label as drawn (the footnoted row carries its marker)."""
    text = dict(ROWS[which])[key]
    return f"{text} (1)" if spec.get("footnote") and which == "income" and key == FOOTNOTE else text


def shown_value(co: Mapping[str, Any], spec: Mapping[str, Any], which: str, key: str, year: int) -> int:
    """The amount the statement shows for ``year`` (the restated one where the spec restates it)."""
    if which == "income" and spec.get("restated") == year:
        return int(co["restated"]["income"][key])
    return int(co[which][str(year)][key])


def _header(spec: Mapping[str, Any]) -> tuple[str, ...]:
    return ("(fiscal year)",) + tuple(f"{y} (as restated)" if spec.get("restated") == y else str(y)
                                      for y in spec["years"])


def statement_table(co: Mapping[str, Any], spec: Mapping[str, Any], which: str) -> Table:
    rows = []
    for i, (key, _) in enumerate(ROWS[which]):
        cells = [fmt(shown_value(co, spec, which, key, y), sign=i == 0 or key in SIGNED) for y in spec["years"]]
        rows.append((label(which, key, spec), *cells))
    notes: tuple[str, ...] = ()
    if spec.get("footnote") and which == "income":
        parts = [f"{fmt(co['extras'][str(y)]['restructuring'])} in fiscal {y}" for y in spec["years"]]
        notes = (f"(1) Includes restructuring charges of {' and '.join(parts)} (in {co['unit']}).",)
    return Table(which, TITLES[which], f"(in {co['unit']} of U.S. dollars, fiscal years ended December 31)",
                 _header(spec), tuple(rows), notes, repeat_header=spec.get("split") != "bare")


def _note_amount(co: Mapping[str, Any], spec: Mapping[str, Any], v: int) -> str:
    """A notes amount in the notes' scale (one decimal when the notes use a larger unit)."""
    scale = spec.get("note_scale") or co["unit"]
    k = NOTE_SCALES[co["unit"]] / NOTE_SCALES[scale]
    return fmt(round(v * k)) if k >= 1 else f"{v * k:,.1f}"


def note_tables(co: Mapping[str, Any], spec: Mapping[str, Any]) -> list[Block]:
    scale = spec.get("note_scale") or co["unit"]
    years = spec["years"]
    segs = sorted(co["segments"][str(years[0])])
    seg_rows = tuple((s, *[_note_amount(co, spec, co["segments"][str(y)][s]) for y in years]) for s in segs)
    seg_rows += (("Total segment revenue", *[_note_amount(co, spec, co["income"][str(y)]["revenue"])
                                              for y in years]),)
    mats = sorted(co["maturities"], key=int)
    mat_rows = tuple((m if m != mats[-1] else f"{m} and thereafter", _note_amount(co, spec, co["maturities"][m]))
                     for m in mats)
    share_rows = (("Weighted-average diluted shares", *[f"{co['shares'][str(y)]:,}" for y in years]),)
    return [
        heading("Note 2. Segment information"),
        para(f"{co['name']} reports {len(segs)} operating segments. Segment revenue is presented below."),
        table(Table("segments", "Revenue by segment", f"(in {scale} of U.S. dollars)",
                    ("Segment",) + tuple(str(y) for y in years), seg_rows)),
        heading("Note 3. Debt"),
        para("Scheduled principal repayments of total debt (short-term and long-term) are as follows."),
        table(Table("debt", f"Debt maturities at December 31, {years[0]}", f"(in {scale} of U.S. dollars)",
                    ("Year", "Principal"), mat_rows)),
        heading("Note 4. Earnings per share"),
        table(Table("shares", "Diluted shares", f"(shares in {co['unit']})",
                    ("Item",) + tuple(str(y) for y in years), share_rows)),
    ]


def restatement_note(co: Mapping[str, Any], spec: Mapping[str, Any]) -> list[Block]:
    y = spec["restated"]
    before, after = co["income"][str(y)], co["restated"]["income"]
    blocks = [heading("Note 5. Restatement of previously issued financial statements"),
              para(f"During fiscal {spec['years'][0]} the company identified an error in the timing of revenue "
                   f"recognition on certain multi-year contracts. The consolidated statement of operations for "
                   f"fiscal {y} has been restated to correct it.")]
    if spec.get("restatement_table"):
        rows = tuple((dict(IS_ROWS)[k], fmt(before[k]), fmt(after[k] - before[k]), fmt(after[k]))
                     for k in ("revenue", "operating_income", "net_income"))
        blocks.append(table(Table("restatement", f"Effect of the restatement on fiscal {y}",
                                  f"(in {co['unit']} of U.S. dollars)",
                                  ("Line item", "As previously reported", "Adjustment", "As restated"), rows)))
    return blocks


def _long_sections(co: Mapping[str, Any], rng: random.Random, pages: int, year: int) -> tuple[list, list]:
    """(front matter before the statements, policies after them): about ``pages`` pages of prose."""
    paras = pages * 10
    front = [heading("Item 1. Business")] + [para(p) for p in section(co, rng, "general", paras // 5)]
    front += [heading("Item 1A. Risk factors")] + [para(p) for p in section(co, rng, "risks", 2 * paras // 5)]
    front += [heading("Item 7. Management's discussion and analysis")]
    front += [para(p) for p in discussion(co, rng, year) + section(co, rng, "general", paras // 10)]
    back = [heading("Note 1. Summary of significant accounting policies")]
    back += [para(p) for p in section(co, rng, "policies", paras - 7 * paras // 10)]
    return front, back


def _other_notes(co: Mapping[str, Any], year: int) -> list[Block]:
    ex = co["extras"][str(year)]
    return [heading("Note 6. Commitments and contingencies"),
            para(f"The company is party to legal proceedings arising in the ordinary course of business. At "
                 f"December 31, {year} it had recorded a litigation accrual of {fmt(ex['litigation'])} "
                 f"(in {co['unit']}), which management considers adequate.", id="litigation"),
            heading("Note 7. Employees"),
            para(f"At December 31, {year} the company had {ex['employees']:,} full-time employees.", id="employees")]


def filing_blocks(spec: Mapping[str, Any]) -> list[Block]:
    """The blocks of the annual report the spec describes (see the module docstring)."""
    co, years = spec["company"], spec["years"]
    rng = random.Random(spec.get("prose_seed", 0))
    blocks = [heading(f"{co['name']} - Annual report for fiscal {years[0]}"),
              para(f"Consolidated financial statements for the fiscal years {years[-1]} to {years[0]}. All amounts "
                   f"are in {co['unit']} of U.S. dollars unless a table states otherwise.")]
    front, back = _long_sections(co, rng, spec["long_pages"], years[0]) if spec.get("long_pages") else ([], [])
    blocks += front
    blocks += [page_break(), heading("Item 8. Financial statements")]
    filler = " ".join(section(co, rng, "general", 1))
    parts = spec.get("parts", ["income", "balance", "cashflow"])
    for which in parts:
        if spec.get("split") in ("repeat", "bare") and which != parts[0]:
            blocks.append(fill(rng.randint(5, 8), filler))
        blocks.append(table(statement_table(co, spec, which)))
    blocks += back
    if spec.get("notes"):
        blocks += note_tables(co, spec)
    if spec.get("restated"):
        blocks += restatement_note(co, spec)
    if spec.get("long_pages"):
        blocks += _other_notes(co, years[0])
    return blocks


def spec_key(spec: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=64)
def _layout_of(key: str, text: str) -> Layout:
    return paginate(filing_blocks(json.loads(text)))


@functools.lru_cache(maxsize=32)
def _pdf_of(key: str, text: str) -> bytes:
    spec = json.loads(text)
    return render_pdf(_layout_of(key, text), f"{spec['company']['name']} annual report {spec['years'][0]}")


def build_layout(spec: Mapping[str, Any]) -> Layout:
    text = json.dumps(spec, sort_keys=True)
    return _layout_of(spec_key(spec), text)


def build_pdf(spec: Mapping[str, Any]) -> bytes:
    """The PDF bytes of the spec (cached per spec in this process)."""
    text = json.dumps(spec, sort_keys=True)
    return _pdf_of(spec_key(spec), text)
