"""The PDF engine of the real-tier filings: lay blocks out on pages, then draw them with fpdf2.

What it is: a filing is a list of blocks — headings, prose paragraphs, ruled tables (a title,
a scale note such as "(in thousands of U.S. dollars)", a header row, body rows, footnotes),
page breaks and ``fill`` blocks (prose up to a given number of free lines, which is how a
generator puts a table near the bottom of a page so that it splits). :func:`paginate` places
every block on letter-size pages with fixed line heights, splitting a table across pages with
its title marked "(continued)" and its header row repeated or not (``Table.repeat_header``);
:func:`render_pdf` draws the pages (Helvetica, ruled cells that pdfplumber's line strategy
reads back as tables, "Page N of M" footers).

Guarantees:
- pagination is our own (fpdf2's automatic page break is off), so :class:`Layout` knows on
  which page each table row landed *before* anything is drawn: a reference trajectory can
  name the page to read, and it is exact by construction;
- the bytes are a pure function of the blocks and the title: the creation date and every
  metadata field are fixed, so the same task gives the same PDF bytes (a test checks it);
- text is Latin-1 (the core fonts' encoding): other characters are replaced, never raised on.

Does not: hyphenate, wrap table cells (a long label is cut with an ellipsis), embed fonts or
draw images. Generation costs about 5 ms a page on an idle core.
"""

from __future__ import annotations

import datetime
import textwrap
from dataclasses import dataclass, field
from typing import Iterator, Sequence

PAGE_W, PAGE_H = 612.0, 792.0  # US letter, points
MARGIN = 54.0
TOP, BOTTOM = 60.0, 736.0
LINE, ROW, HEAD = 12.0, 14.0, 18.0
WRAP = 112  # characters per prose line at 9 pt Helvetica across the text width
LABEL_W = 236.0
FIXED_DATE = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class Table:
    """A ruled table; ``rows`` hold the label first, then one cell per header column."""

    id: str
    title: str
    note: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    footnotes: tuple[str, ...] = ()
    repeat_header: bool = True


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "para" | "table" | "break" | "fill"
    text: str = ""
    table: Table | None = None
    lines_left: int = 0  # for "fill": prose until this many free lines remain on the page
    id: str = ""  # a paragraph's name: Layout.block_pages records the pages it spans


@dataclass(frozen=True)
class Item:
    """One drawn thing on a page: a text line (``style`` heading/para/note/small) or a row."""

    y: float
    style: str
    text: str = ""
    cells: tuple[str, ...] = ()
    bold: bool = False


@dataclass
class Layout:
    """Pages of items, and where each table (and each of its rows, by label) landed (1-based)."""

    pages: list[list[Item]] = field(default_factory=lambda: [[]])
    table_pages: dict[str, list[int]] = field(default_factory=dict)
    row_page: dict[str, dict[str, int]] = field(default_factory=dict)
    block_pages: dict[str, list[int]] = field(default_factory=dict)

    @property
    def page_count(self) -> int:
        return len(self.pages)


def heading(text: str) -> Block:
    return Block("heading", text)


def para(text: str, id: str = "") -> Block:
    return Block("para", text, id=id)


def table(t: Table) -> Block:
    return Block("table", table=t)


def page_break() -> Block:
    return Block("break")


def fill(lines_left: int, text: str) -> Block:
    return Block("fill", text, lines_left=lines_left)


class _Cursor:
    def __init__(self, layout: Layout):
        self.layout, self.y = layout, TOP

    @property
    def page(self) -> int:
        return len(self.layout.pages)

    def free(self, h: float) -> bool:
        return self.y + h <= BOTTOM

    def new_page(self) -> None:
        if self.layout.pages[-1]:
            self.layout.pages.append([])
        self.y = TOP

    def put(self, item_h: float, **kw) -> None:
        if not self.free(item_h):
            self.new_page()
        self.layout.pages[-1].append(Item(self.y, **kw))
        self.y += item_h


def _lines(text: str) -> list[str]:
    return textwrap.wrap(text, WRAP) or [""]


def _place_table(cur: _Cursor, t: Table) -> None:
    # keep the title, note, header and two rows together; the rest may run onto later pages
    if not cur.free(HEAD + LINE + 3 * ROW):
        cur.new_page()
    cur.put(HEAD, style="heading", text=t.title, bold=True)
    cur.put(LINE, style="note", text=t.note)
    cur.put(ROW, style="row", cells=t.header, bold=True)
    pages = [cur.page]
    rows = cur.layout.row_page.setdefault(t.id, {})
    for r in t.rows:
        if not cur.free(ROW):
            cur.new_page()
            pages.append(cur.page)
            cur.put(LINE, style="note", text=f"{t.title} (continued)")
            if t.repeat_header:
                cur.put(ROW, style="row", cells=t.header, bold=True)
        cur.put(ROW, style="row", cells=r, bold=r[0].startswith("Total"))
        rows.setdefault(r[0], cur.page)
    notes = [line for note in t.footnotes for line in textwrap.wrap(note, WRAP + 8)]
    if notes and not cur.free(len(notes) * (LINE - 1)):
        cur.new_page()  # the footnotes stay together, on one page
    for line in notes:
        cur.put(LINE - 1, style="small", text=line)
    if notes:
        cur.layout.block_pages[f"{t.id}:footnotes"] = [cur.page]
    cur.layout.table_pages[t.id] = pages
    cur.y += LINE


def paginate(blocks: Sequence[Block]) -> Layout:
    """Place ``blocks`` on pages (see the module docstring)."""
    layout = Layout()
    cur = _Cursor(layout)
    for b in blocks:
        if b.kind == "break":
            cur.new_page()
        elif b.kind == "heading":
            if not cur.free(HEAD + 2 * LINE):
                cur.new_page()
            cur.put(HEAD, style="heading", text=b.text, bold=True)
        elif b.kind == "para":
            spans, lines = [], _lines(b.text)
            if b.id and not cur.free(len(lines) * LINE):
                cur.new_page()  # a named paragraph stays on one page: the reference reads that page
            for line in lines:
                cur.put(LINE, style="para", text=line)
                spans += [cur.page] if cur.page not in spans else []
            if b.id:
                layout.block_pages[b.id] = spans
            cur.y += LINE / 2
        elif b.kind == "fill":
            words = _cycle_lines(b.text)
            while (BOTTOM - cur.y) / ROW > b.lines_left + 1:
                cur.put(LINE, style="para", text=next(words))
        elif b.kind == "table" and b.table is not None:
            _place_table(cur, b.table)
    return layout


def _cycle_lines(text: str) -> Iterator[str]:
    lines = _lines(text)
    while True:
        yield from lines


def _latin1(text: str) -> str:
    return text.encode("latin-1", "replace").decode("latin-1")


def _col_widths(n: int) -> list[float]:
    rest = (PAGE_W - 2 * MARGIN - LABEL_W) / max(1, n - 1)
    return [LABEL_W] + [rest] * (n - 1)


def _draw_row(pdf, item: Item) -> None:
    widths = _col_widths(len(item.cells))
    pdf.set_font("Helvetica", "B" if item.bold else "", 8.5)
    pdf.set_xy(MARGIN, item.y)
    for i, (w, c) in enumerate(zip(widths, item.cells)):
        text = _latin1(c)
        while pdf.get_string_width(text) > w - 4 and len(text) > 4:
            text = text[:-4] + "..."
        pdf.cell(w, ROW, text, border=1, align="L" if i == 0 else "R")


def render_pdf(layout: Layout, title: str, author: str = "posttrain synthetic filings") -> bytes:
    """The PDF bytes of ``layout`` (deterministic: fixed date and metadata)."""
    from fpdf import FPDF  # the documents extra; imported where needed (DESIGN.md §2)

    pdf = FPDF(format="letter", unit="pt")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(_latin1(title))
    pdf.set_author(author)
    pdf.set_creator("posttrain")
    n = layout.page_count
    for number, items in enumerate(layout.pages, start=1):
        pdf.add_page()
        for it in items:
            if it.style == "row":
                _draw_row(pdf, it)
                continue
            size = {"heading": 11.5, "note": 8.5, "small": 7.5}.get(it.style, 9.0)
            pdf.set_font("Helvetica", "B" if it.bold else ("I" if it.style == "note" else ""), size)
            pdf.text(MARGIN, it.y + LINE - 3, _latin1(it.text))
        pdf.set_font("Helvetica", "", 7.5)
        pdf.text(MARGIN, PAGE_H - 30, _latin1(f"{title} - Page {number} of {n}"))
    return bytes(pdf.output())
