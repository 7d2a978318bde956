"""Run an untrusted SQL query read-only against an in-memory SQLite database and compare results.

Guarantees of :func:`run_query`:
- exactly one statement, and only reads: an authorizer allows SELECT, reading columns,
  (recursive) CTEs and a list of pure functions; writes, ATTACH, PRAGMA, transactions,
  ``load_extension`` and blob/random generators are denied;
- bounded work: a progress handler aborts after ``max_steps`` VM steps or ``max_seconds``
  of wall time; SQLite's length limits cap any single string/blob; at most ``max_rows`` rows
  are fetched (more is an error, not a truncation, so a "return everything" query fails);
- total: any failure is returned as ``QueryResult.error`` text, never raised.

:func:`compare_results` compares two results as multisets of rows (or as sequences when the
question asks for an order) after normalising numbers (floats rounded to 2 decimals; 3.0 == 3).
Column names are ignored; the column count and order must match.

Does not: protect a database file (callers build in-memory databases only), or judge SQL style.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                    getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
_DENIED_FUNCTIONS = {"randomblob", "zeroblob", "load_extension", "random", "readfile", "writefile",
                     "edit", "fts3_tokenizer", "sqlite_compileoption_get", "sqlite_offset"}
MAX_SQL_CHARS = 4000


@dataclass(frozen=True)
class QueryResult:
    rows: tuple[tuple[Any, ...], ...] = ()
    ncols: int = 0
    error: str | None = None
    steps: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


def _authorizer(action: int, arg1: Any, arg2: Any, dbname: Any, source: Any) -> int:
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect(build: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """A fresh in-memory database filled by ``build`` (trusted code, run before any lock-down)."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    build(conn)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100_000)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS * 2)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 50)
    conn.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 200)
    return conn


def clean_sql(text: str) -> str | None:
    """The query without surrounding whitespace, code fences and one trailing ';'; None if too long."""
    t = (text or "").strip()
    if t.startswith("```"):
        t = t.strip("`")
        if t.lower().startswith("sql"):
            t = t[3:]
        t = t.strip()
    if t.endswith(";"):
        t = t[:-1].rstrip()
    if not t or len(t) > MAX_SQL_CHARS:
        return None
    return t


def run_query(conn: sqlite3.Connection, sql: str, *, max_rows: int = 500, max_steps: int = 5_000_000,
              max_seconds: float = 2.0) -> QueryResult:
    """Execute one read-only statement under the limits above; errors become ``QueryResult.error``."""
    q = clean_sql(sql)
    if q is None:
        return QueryResult(error="empty or over-long query")
    if ";" in q:
        return QueryResult(error="only one statement is allowed")
    ticks = [0]
    deadline = time.monotonic() + max_seconds

    def progress() -> int:
        ticks[0] += 1
        return 1 if ticks[0] * 1000 > max_steps or time.monotonic() > deadline else 0

    conn.set_authorizer(_authorizer)
    conn.set_progress_handler(progress, 1000)
    try:
        cur = conn.execute(q)
        if cur.description is None:
            return QueryResult(error="not a query returning rows")
        rows = cur.fetchmany(max_rows + 1)
        if len(rows) > max_rows:
            return QueryResult(error=f"more than {max_rows} rows")
        return QueryResult(rows=tuple(tuple(r) for r in rows), ncols=len(cur.description), steps=ticks[0] * 1000)
    except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
        msg = "query exceeded its time/step budget" if "interrupt" in str(exc).lower() else str(exc)
        return QueryResult(error=f"{type(exc).__name__}: {msg}"[:300])
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        r = round(v, 2)
        return int(r) if r.is_integer() else r
    if isinstance(v, bytes):
        return v.hex()
    return v


def normalize_rows(rows: tuple[tuple[Any, ...], ...]) -> list[tuple[Any, ...]]:
    return [tuple(_norm(v) for v in r) for r in rows]


@dataclass(frozen=True)
class Comparison:
    value: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


def compare_results(got: QueryResult, want: QueryResult, *, ordered: bool,
                    order_credit: float = 0.5) -> Comparison:
    """1.0 when equal; ``order_credit`` when only the asked order is wrong; else 0.0."""
    if not got.ok:
        return Comparison(0.0, f"query failed: {got.error}")
    if not want.ok:
        raise ValueError(f"reference query failed: {want.error}")
    if got.ncols != want.ncols:
        return Comparison(0.0, f"{got.ncols} columns, expected {want.ncols}")
    g, w = normalize_rows(got.rows), normalize_rows(want.rows)
    same_bag = Counter(map(repr, g)) == Counter(map(repr, w))
    if not same_bag:
        return Comparison(0.0, f"different rows ({len(g)} returned, {len(w)} expected)")
    if ordered and list(map(repr, g)) != list(map(repr, w)):
        return Comparison(order_credit, "right rows in the wrong order")
    return Comparison(1.0, "same result")
