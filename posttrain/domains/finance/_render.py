"""Rendering a generated company as a filing: plain-text, markdown or HTML tables, and notes.

What it is: :func:`render_filing` turns :func:`~posttrain.domains.finance._company.make_company`
output into the document a policy reads. Amounts appear as filings print them: thousands
separators, negatives in accounting parentheses, a currency sign on first and total rows, the
scale stated once in the table heading ("in thousands", "in millions").

Guarantees: every amount in a rendered statement is the company's value unless ``overrides``
replaces it (the cross-check domain plants its inconsistency that way); ``long=True`` adds a
management discussion with distractor figures (quarterly revenue, adjusted non-GAAP measures,
backlog) that are never the answer to a question about the statements.

Does not: render charts, footnote markers or XBRL.
"""

from __future__ import annotations

import html
import random
from typing import Any, Mapping

from posttrain.domains.finance._company import BS_ROWS, CF_ROWS, IS_ROWS, TOTALS

STYLES = ("text", "markdown", "html")
TITLES = {"income": "Consolidated Statements of Operations", "balance": "Consolidated Balance Sheets",
          "cashflow": "Consolidated Statements of Cash Flows"}
ROWS = {"income": IS_ROWS, "balance": BS_ROWS, "cashflow": CF_ROWS}


def fmt(v: int, *, sign: bool = False) -> str:
    body = f"{abs(v):,}"
    body = f"({body})" if v < 0 else body
    return f"$ {body}" if sign else body


def _table(title: str, heading: str, header: list[str], rows: list[tuple[str, list[str]]],
           style: str) -> str:
    if style == "markdown":
        lines = [f"### {title}", f"_{heading}_", "", "| " + " | ".join(header) + " |",
                 "|" + "---|" * len(header)]
        lines += ["| " + " | ".join([label] + cells) + " |" for label, cells in rows]
        return "\n".join(lines)
    if style == "html":
        th = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        body = "".join("<tr><td>" + html.escape(label) + "</td>" +
                       "".join(f"<td align=\"right\">{html.escape(c)}</td>" for c in cells) + "</tr>"
                       for label, cells in rows)
        return (f"<h3>{html.escape(title)}</h3>\n<p><i>{html.escape(heading)}</i></p>\n"
                f"<table>\n<tr>{th}</tr>\n{body}\n</table>")
    width = max(len(label) for label, _ in rows) + 2
    cols = [max(len(h), *(len(c[i]) for _, c in rows)) + 2 for i, h in enumerate(header[1:])]
    lines = [title.upper(), f"({heading})", " " * width + "".join(h.rjust(w) for h, w in zip(header[1:], cols))]
    lines += [label.ljust(width) + "".join(c.rjust(w) for c, w in zip(cells, cols)) for label, cells in rows]
    return "\n".join(lines)


def statement(co: dict[str, Any], which: str, style: str,
              overrides: Mapping[tuple[str, str, int], int] | None = None) -> str:
    """One statement table for all of the company's fiscal years (most recent first)."""
    years = sorted(co["years"], reverse=True)
    data = co[which]
    rows = []
    for i, (key, label) in enumerate(ROWS[which]):
        cells = []
        for y in years:
            v = (overrides or {}).get((which, key, y), data[y][key])
            cells.append(fmt(v, sign=i == 0 or key in TOTALS and key in ("total_assets", "liabilities_equity",
                                                                          "net_income", "cash_end")))
        rows.append((label, cells))
    heading = f"in {co['unit']} of U.S. dollars, fiscal years ended December 31"
    return _table(TITLES[which], heading, ["Item"] + [str(y) for y in years], rows, style)


def notes(co: dict[str, Any], style: str) -> str:
    """Notes: shares, segment revenue, debt maturities."""
    years = sorted(co["years"], reverse=True)
    scale = co["unit"]
    share_rows = [("Weighted-average diluted shares", [f"{co['shares'][y]:,}" for y in years])]
    seg_names = list(co["segments"][years[0]])
    seg_rows = [(s, [fmt(co["segments"][y][s]) for y in years]) for s in seg_names]
    mat = sorted(co["maturities"])
    mat_rows = [(str(y) if y < mat[-1] else f"{y} and thereafter", [fmt(co["maturities"][y])]) for y in mat]
    return "\n\n".join([
        "NOTES TO THE CONSOLIDATED FINANCIAL STATEMENTS",
        _table("Note 1. Earnings per share", f"shares in {scale}", ["Item"] + [str(y) for y in years],
               share_rows, style),
        _table("Note 2. Segment information", f"revenue by segment, in {scale} of U.S. dollars",
               ["Segment"] + [str(y) for y in years], seg_rows, style),
        _table("Note 3. Debt", f"scheduled principal repayments of total debt at December 31, {years[0]}, "
               f"in {scale} of U.S. dollars", ["Year", "Amount"], mat_rows, style),
    ])


def discussion(co: dict[str, Any], rng: random.Random) -> str:
    """Management's discussion: prose with distractor figures (never the statements' values)."""
    y = max(co["years"])
    inc = co["income"][y]
    q = [rng.uniform(0.2, 0.3) for _ in range(3)]
    quarters = [round(inc["revenue"] * f) for f in q]
    adj = round(inc["operating_income"] * rng.uniform(1.08, 1.3))
    backlog = round(inc["revenue"] * rng.uniform(0.4, 1.1))
    filler = ["Our results reflect continued investment in capacity and in our workforce.",
              "Supply conditions normalised during the year, although freight costs stayed elevated.",
              "We continue to evaluate acquisitions that complement our existing segments.",
              "Foreign-exchange movements had a modest effect on reported figures.",
              "The board reviews capital allocation, including dividends, every quarter."]
    rng.shuffle(filler)
    parts = [f"MANAGEMENT'S DISCUSSION AND ANALYSIS ({co['name']}, fiscal {y})",
             f"Revenue for the first three quarters of {y} was {fmt(quarters[0])}, {fmt(quarters[1])} and "
             f"{fmt(quarters[2])} ({co['unit']}) respectively. " + filler[0],
             f"Adjusted operating income, a non-GAAP measure that excludes restructuring and "
             f"acquisition-related charges, was {fmt(adj)} {co['unit'][:-1]}. " + filler[1],
             f"Order backlog at year end stood at {fmt(backlog)} {co['unit'][:-1]}. " + " ".join(filler[2:])]
    return "\n\n".join(parts)


def render_filing(co: dict[str, Any], rng: random.Random, style: str, *, parts: tuple[str, ...],
                  long: bool = False, overrides: Mapping[tuple[str, str, int], int] | None = None) -> str:
    """The filing text: a cover line, the asked statements (and notes), optionally the discussion."""
    years = co["years"]
    head = (f"{co['name']} — Annual report, fiscal years {years[0]}–{years[-1]}. "
            f"All amounts in {co['unit']} of U.S. dollars unless stated otherwise.")
    blocks = [head]
    if long:
        blocks.append(discussion(co, rng))
    for p in parts:
        blocks.append(notes(co, style) if p == "notes" else statement(co, p, style, overrides))
    return "\n\n".join(blocks)
