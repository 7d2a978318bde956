"""Document tools: open a PDF in the sandbox's /work, read a page, search it, extract tables.

What it is: :func:`document_tools` gives four tools over the documents a task placed in the
sandbox — ``open_document`` (page count and a one-line outline per page), ``read_page`` (a
page's text), ``search_document`` (case-insensitive matches: page numbers and snippets) and
``extract_tables`` (the ruled tables of one page, row by row, through pdfplumber). Text comes
from pypdf (about 10 ms a page; pdfplumber's text is ~20x slower and a search reads every
page), tables from pdfplumber (its line strategy reads ruled cells back as rows).

Where the parsing runs, and why on the host: the tools read the file's bytes *from the
sandbox* (the policy's view of /work) but parse them in this process. (1) The documents are
posttrain's own output, and a tool opens a document only when the SHA-256 of the bytes it
read equals the one registered for that path when the task's sandbox was set up: a file the
policy replaced or crafted (through another tool) is refused, never parsed, so the host
parser only ever sees bytes posttrain generated. (2) The sandbox's interpreter is the system
Python, without pdfplumber or pypdf. (3) A parse is cached per SHA-256, so the tenth call on a
60-page filing costs milliseconds instead of a fresh interpreter and a full parse.

Guarantees: the arguments are schema-checked (``path`` one of the registered documents,
``page`` an integer from 1, ``query`` 2-120 characters) and checked again against the
document (a page past the end is an error); every failure — a missing or changed file, a
page out of range, a parse error — is a ``ToolResult`` with ``ok`` False, never an
exception; every output is capped (``max_chars``, default 6000) with a note saying what was
cut. Does not: OCR images, read encrypted PDFs, or parse documents it was not given.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from typing import Any, Mapping

from .result import ToolResult
from .schema import function_spec

MAX_BYTES = 16 << 20
MAX_HITS = 12
_CACHE: "OrderedDict[str, ParsedDocument]" = OrderedDict()
_CACHE_SIZE = 16
_LOCK = threading.Lock()


class ParsedDocument:
    """One PDF's pages: text and tables parsed lazily, each page at most once."""

    def __init__(self, data: bytes):
        import pypdf  # the documents extra (DESIGN.md §2: heavy imports where needed)

        self.data = data
        self._reader = pypdf.PdfReader(io.BytesIO(data))
        self.pages = len(self._reader.pages)
        self._text: dict[int, str] = {}
        self._tables: dict[int, list] = {}
        self._lock = threading.Lock()

    def text(self, page: int) -> str:
        with self._lock:
            if page not in self._text:
                self._text[page] = self._reader.pages[page - 1].extract_text() or ""
            return self._text[page]

    def tables(self, page: int) -> list[list[list[str | None]]]:
        import pdfplumber

        with self._lock:
            if page not in self._tables:
                with pdfplumber.open(io.BytesIO(self.data), pages=[page]) as pdf:
                    self._tables[page] = pdf.pages[0].extract_tables()
            return self._tables[page]


def parsed(data: bytes) -> ParsedDocument:
    """The parse of ``data``, shared by every env of this process (LRU by SHA-256)."""
    key = hashlib.sha256(data).hexdigest()
    with _LOCK:
        doc = _CACHE.get(key)
        if doc is not None:
            _CACHE.move_to_end(key)
            return doc
    doc = ParsedDocument(data)
    with _LOCK:
        _CACHE[key] = doc
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return doc


def cap(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters of this {what} cut; narrow the request]"


class DocumentStore:
    """The documents of one episode: path (relative to /work) → SHA-256 of the bytes placed there."""

    def __init__(self, documents: Mapping[str, str]):
        self.documents = dict(documents)

    def load(self, sandbox: Any, path: str) -> ParsedDocument | ToolResult:
        want = self.documents.get(path)
        if want is None:
            return ToolResult.error(f"no document {path!r}; documents: {sorted(self.documents)}", kind="refused")
        try:
            data = sandbox.read_file(path, max_bytes=MAX_BYTES)
        except Exception as exc:  # absent, a link, too large: an observation
            return ToolResult.error(f"cannot read {path}: {type(exc).__name__}: {exc}"[:300], kind="tool_error")
        if hashlib.sha256(data).hexdigest() != want:
            return ToolResult.error(f"{path} is not the document this task provided (it was changed); "
                                    "refusing to parse it", kind="refused")
        try:
            return parsed(data)
        except Exception as exc:  # a parser failure is the policy's observation too
            return ToolResult.error(f"cannot parse {path}: {type(exc).__name__}: {exc}"[:300], kind="tool_error")

    def page_of(self, doc: ParsedDocument, page: int) -> ToolResult | None:
        if not 1 <= page <= doc.pages:
            return ToolResult.error(f"page {page} is out of range: the document has {doc.pages} pages",
                                    kind="invalid_arguments")
        return None


def _path_schema(store: DocumentStore) -> dict:
    return {"type": "string", "enum": sorted(store.documents), "description": "The document's path in /work."}


_PAGE = {"type": "integer", "minimum": 1, "maximum": 100000, "description": "1-based page number."}


class _DocTool:
    def __init__(self, store: DocumentStore, max_chars: int):
        self.store, self.max_chars = store, max_chars

    def _open(self, sandbox: Any, path: str, page: int | None = None):
        doc = self.store.load(sandbox, path)
        if isinstance(doc, ToolResult):
            return doc
        if page is not None:
            bad = self.store.page_of(doc, int(page))
            if bad is not None:
                return bad
        return doc


class OpenDocumentTool(_DocTool):
    name = "open_document"

    def __init__(self, store: DocumentStore, max_chars: int = 6000):
        super().__init__(store, max_chars)
        self.spec = function_spec(self.name, "Open a PDF: its page count and the first line of every page.",
                                  {"path": _path_schema(store)}, ["path"])

    def __call__(self, sandbox: Any, path: str) -> ToolResult:
        doc = self._open(sandbox, path)
        if isinstance(doc, ToolResult):
            return doc
        lines = [f"{path}: {doc.pages} pages"]
        for p in range(1, doc.pages + 1):
            first = next((ln.strip() for ln in doc.text(p).splitlines() if ln.strip()), "")
            lines.append(f"page {p}: {first[:80]}")
        return ToolResult(cap("\n".join(lines), self.max_chars, "outline"), True, {"path": path, "pages": doc.pages})


class ReadPageTool(_DocTool):
    name = "read_page"

    def __init__(self, store: DocumentStore, max_chars: int = 6000):
        super().__init__(store, max_chars)
        self.spec = function_spec(self.name, "The text of one page of a PDF.",
                                  {"path": _path_schema(store), "page": _PAGE}, ["path", "page"])

    def __call__(self, sandbox: Any, path: str, page: int) -> ToolResult:
        doc = self._open(sandbox, path, page)
        if isinstance(doc, ToolResult):
            return doc
        text = doc.text(page)
        return ToolResult(cap(f"[{path}, page {page} of {doc.pages}]\n{text}", self.max_chars, "page"), True,
                          {"path": path, "page": page, "chars": len(text)})


class SearchDocumentTool(_DocTool):
    name = "search_document"

    def __init__(self, store: DocumentStore, max_chars: int = 6000):
        super().__init__(store, max_chars)
        self.spec = function_spec(
            self.name, f"Case-insensitive search of a PDF's text: page numbers and snippets (at most {MAX_HITS}).",
            {"path": _path_schema(store), "query": {"type": "string", "minLength": 2, "maxLength": 120}},
            ["path", "query"])

    def __call__(self, sandbox: Any, path: str, query: str) -> ToolResult:
        doc = self._open(sandbox, path)
        if isinstance(doc, ToolResult):
            return doc
        q = " ".join(query.lower().split())
        if len(q) < 2:
            return ToolResult.error("the query needs at least 2 non-space characters", kind="invalid_arguments")
        hits, total, where = [], 0, []
        for p in range(1, doc.pages + 1):
            flat = " ".join(doc.text(p).split())
            low, at = flat.lower(), flat.lower().find(q)
            while at >= 0:
                total += 1
                where += [p] if p not in where else []
                if len(hits) < MAX_HITS:
                    hits.append(f"page {p}: ...{flat[max(0, at - 60):at + len(q) + 60]}...")
                at = low.find(q, at + len(q))
        head = f"{total} match(es) for {query!r} in {path}" + (f" (first {MAX_HITS} shown)" if total > MAX_HITS else "")
        return ToolResult(cap("\n".join([head] + hits), self.max_chars, "result"), True,
                          {"path": path, "matches": total, "pages": where})


class ExtractTablesTool(_DocTool):
    name = "extract_tables"

    def __init__(self, store: DocumentStore, max_chars: int = 6000):
        super().__init__(store, max_chars)
        self.spec = function_spec(self.name, "The ruled tables on one page of a PDF, one row per line, "
                                  "cells separated by ' | '.", {"path": _path_schema(store), "page": _PAGE},
                                  ["path", "page"])

    def __call__(self, sandbox: Any, path: str, page: int) -> ToolResult:
        doc = self._open(sandbox, path, page)
        if isinstance(doc, ToolResult):
            return doc
        tables = doc.tables(page)
        if not tables:
            return ToolResult(f"no table on page {page} of {path}", True, {"path": path, "page": page, "tables": 0})
        parts = []
        for i, t in enumerate(tables, start=1):
            rows = [" | ".join("" if c is None else " ".join(str(c).split()) for c in row) for row in t]
            parts.append(f"table {i} ({len(t)} rows):\n" + "\n".join(rows))
        return ToolResult(cap("\n\n".join(parts), self.max_chars, "table output"), True,
                          {"path": path, "page": page, "tables": len(tables)})


def document_tools(documents: Mapping[str, str], max_chars: int = 6000) -> list:
    """The four document tools over ``documents`` (path in /work → SHA-256 of its bytes)."""
    store = DocumentStore(documents)
    return [OpenDocumentTool(store, max_chars), ReadPageTool(store, max_chars),
            SearchDocumentTool(store, max_chars), ExtractTablesTool(store, max_chars)]
