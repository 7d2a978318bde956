"""The persistent work queue: items, leases, results and statistics in one SQLite file.

An item moves ``queued -> running -> done`` or ends ``failed`` with a reason:

- ``enqueue`` is idempotent by ``key`` (re-planning after a crash never duplicates work);
- ``claim(worker, lease_s)`` atomically takes the highest-priority, oldest ready item and
  counts an attempt; a claim not renewed (``heartbeat``) before its lease ends is re-queued
  by the next ``claim`` — that is how a crashed worker's item is retried — and failed once it
  has used ``max_attempts`` (``min_priority`` limits a claim to items at least that urgent);
- ``recover()`` ends every running lease at once: the restart of the one process that owns
  a run (the async loop's trainer) takes back what its dead predecessor held;
- ``complete``/``fail``/``heartbeat``/``save_checkpoint`` are *fenced* by the claim (worker
  and attempt): a worker that lost its lease cannot overwrite the item another worker now
  holds, so a slow or resurrected worker never produces a duplicate;
- a completed item gets a sequence number; ``results(after_seq)`` replays completions in
  order (the curriculum's statistics are rebuilt from them after a crash, see
  ``scheduler.py``) and ``ack`` marks results the consumer has made durable;
- ``put_state``/``get_state`` keep named JSON blobs (curriculum state, planner counters),
  optionally written in the same transaction as new items.
- other modules keep their own tables in the same file through ``transaction()`` and
  ``connection()`` (``ledger.py``: the async loop's task outcomes).

Guarantees: every enqueued item ends ``done`` or ``failed`` (with a reason) exactly once;
every write is one transaction (WAL journal, ``synchronous=FULL`` by default, so a
committed write survives a crash of the process or the machine); any number of threads or processes may
share the file. Not covered: the bodies of results must be JSON and modest in size (store
trajectories elsewhere if they are large); time comes from ``clock`` (wall time by default,
so leases survive a restart).
"""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from posttrain.core.errors import SchedulerError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
  id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, payload TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,
  worker TEXT, lease_until REAL, not_before REAL NOT NULL DEFAULT 0,
  created REAL NOT NULL, updated REAL NOT NULL,
  checkpoint TEXT, result TEXT, reason TEXT, last_error TEXT,
  seq INTEGER, acked INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS items_ready ON items (state, priority DESC, id);
CREATE INDEX IF NOT EXISTS items_seq ON items (seq);
CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLS = "id, key, payload, priority, attempts, worker, checkpoint, created"


@dataclass(frozen=True)
class WorkItem:
    """A claimed item. ``attempt`` and ``worker`` are the fencing token of the claim."""

    id: int
    key: str
    payload: dict[str, Any]
    priority: int
    attempt: int
    worker: str
    checkpoint: Any = None
    created: float = 0.0


@dataclass(frozen=True)
class Result:
    """A completed item's result, in completion order (``seq``)."""

    seq: int
    id: int
    key: str
    payload: dict[str, Any]
    result: dict[str, Any]
    acked: bool


class WorkStore:
    """SQLite-backed queue shared by threads and processes (one connection per thread)."""

    def __init__(self, path: str | Path, *, max_attempts: int = 3,
                 clock: Callable[[], float] = time.time, synchronous: str = "FULL"):
        self.path = str(path)
        self.max_attempts = max_attempts
        self.clock = clock
        self._sync = synchronous
        self._local = threading.local()
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn().executescript(_SCHEMA)

    # ----------------------------------------------------------------- plumbing
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._sync}")
            self._local.conn = conn
        return conn

    def _tx(self):
        return _Transaction(self._conn())

    def transaction(self):
        """``with store.transaction() as conn:`` — one write transaction, for tables kept in
        the same file by other modules (``ledger.py``)."""
        return self._tx()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (reads of such tables)."""
        return self._conn()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ----------------------------------------------------------------- enqueue
    def enqueue(self, key: str, payload: dict[str, Any], priority: int = 0,
                max_attempts: int | None = None) -> bool:
        """Add an item; False (and nothing changes) when ``key`` was enqueued before."""
        return self.enqueue_many([(key, payload, priority)], max_attempts=max_attempts) == 1

    def enqueue_many(self, items: Iterable[tuple[str, dict[str, Any], int]], *,
                     state: dict[str, Any] | None = None, max_attempts: int | None = None) -> int:
        """Add items (and optionally named state) in one transaction; returns how many were new."""
        now = self.clock()
        rows = [(k, json.dumps(p), int(pr), max_attempts or self.max_attempts, now, now)
                for k, p, pr in items]
        with self._tx() as c:
            before = c.total_changes
            c.executemany("INSERT OR IGNORE INTO items (key, payload, priority, state, max_attempts,"
                          " created, updated) VALUES (?, ?, ?, 'queued', ?, ?, ?)", rows)
            added = c.total_changes - before
            for name, value in (state or {}).items():
                _put(c, name, value)
        return added

    # ----------------------------------------------------------------- claiming
    def claim(self, worker: str, lease_s: float, *, min_priority: int | None = None) -> WorkItem | None:
        """Atomically take the next ready item (highest priority, then oldest), or None.

        ``min_priority``: only items at least this urgent (a consumer that wants only the
        work it has asked for so far, e.g. the async loop's window of steps)."""
        now = self.clock()
        floor = -(2 ** 63) if min_priority is None else int(min_priority)
        with self._tx() as c:
            _expire(c, now)
            row = c.execute(f"SELECT {_COLS} FROM items WHERE state = 'queued' AND not_before <= ?"
                            " AND priority >= ? ORDER BY priority DESC, id LIMIT 1", (now, floor)).fetchone()
            if row is None:
                return None
            c.execute("UPDATE items SET state = 'running', attempts = attempts + 1, worker = ?,"
                      " lease_until = ?, updated = ? WHERE id = ?", (worker, now + lease_s, now, row[0]))
        return WorkItem(id=row[0], key=row[1], payload=json.loads(row[2]), priority=row[3],
                        attempt=row[4] + 1, worker=worker,
                        checkpoint=json.loads(row[6]) if row[6] is not None else None, created=row[7])

    def requeue_expired(self) -> int:
        """Re-queue (or fail, past max attempts) every running item whose lease has ended."""
        with self._tx() as c:
            return _expire(c, self.clock())

    def recover(self) -> int:
        """End every running item's lease now; returns how many were re-queued or failed.

        For the one process that owns a run, when it restarts after a crash: nothing of its
        own runs yet, so every ``running`` item belonged to the dead process. Each spends
        the attempt, exactly as an expired lease does."""
        now = self.clock()
        with self._tx() as c:
            c.execute("UPDATE items SET lease_until = ? WHERE state = 'running'", (now - 1.0,))
            return _expire(c, now)

    def _fenced(self, c: sqlite3.Connection, sql: str, args: tuple, item: WorkItem) -> bool:
        cur = c.execute(sql + " WHERE id = ? AND state = 'running' AND attempts = ? AND worker = ?",
                        args + (item.id, item.attempt, item.worker))
        return cur.rowcount == 1

    def heartbeat(self, item: WorkItem, lease_s: float) -> bool:
        """Extend the lease; False when the claim was lost (stop working on it)."""
        now = self.clock()
        with self._tx() as c:
            return self._fenced(c, "UPDATE items SET lease_until = ?, updated = ?",
                                (now + lease_s, now), item)

    def save_checkpoint(self, item: WorkItem, data: Any) -> bool:
        """Persist an episode's progress; a retry of the item starts from it."""
        with self._tx() as c:
            return self._fenced(c, "UPDATE items SET checkpoint = ?, updated = ?",
                                (json.dumps(data), self.clock()), item)

    # ----------------------------------------------------------------- outcomes
    def complete(self, item: WorkItem, result: dict[str, Any],
                 state: dict[str, Any] | None = None) -> int:
        """Mark done with its result (and optional named state, same transaction).

        Returns the completion's sequence number (> 0), or 0 when the claim was lost: the
        result is discarded and the current holder's stands.
        """
        with self._tx() as c:
            seq = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM items").fetchone()[0]
            ok = self._fenced(c, "UPDATE items SET state = 'done', result = ?, seq = ?, updated = ?,"
                              " lease_until = NULL", (json.dumps(result), seq, self.clock()), item)
            if ok:
                for name, value in (state or {}).items():
                    _put(c, name, value)
            return seq if ok else 0

    def fail(self, item: WorkItem, reason: str, *, retryable: bool, backoff_s: float = 0.0,
             max_attempts: int | None = None) -> str:
        """Record a failed attempt: ``'queued'`` (retry after backoff), ``'failed'`` or ``'lost'``.

        ``max_attempts`` (the caller's limit) can only lower the item's own limit.
        """
        now = self.clock()
        with self._tx() as c:
            row = c.execute("SELECT max_attempts FROM items WHERE id = ?", (item.id,)).fetchone()
            if row is None:
                raise SchedulerError(f"no work item with id {item.id}")
            limit = row[0] if max_attempts is None else min(row[0], max_attempts)
            if retryable and item.attempt < limit:
                ok = self._fenced(c, "UPDATE items SET state = 'queued', worker = NULL, lease_until = NULL,"
                                  " not_before = ?, last_error = ?, updated = ?",
                                  (now + backoff_s, reason, now), item)
                return "queued" if ok else "lost"
            final = reason if not retryable else f"{reason} (after {item.attempt} attempts)"
            ok = self._fenced(c, "UPDATE items SET state = 'failed', reason = ?, last_error = ?,"
                              " lease_until = NULL, updated = ?", (final, reason, now), item)
            return "failed" if ok else "lost"

    def release(self, item: WorkItem) -> bool:
        """Give an item back without spending its attempt (shutdown, drain)."""
        with self._tx() as c:
            return self._fenced(c, "UPDATE items SET state = 'queued', attempts = attempts - 1,"
                                " worker = NULL, lease_until = NULL, updated = ?", (self.clock(),), item)

    def cancel(self, key: str, reason: str = "cancelled") -> bool:
        """Fail a queued or running item for good (a running holder's later writes are fenced off)."""
        with self._tx() as c:
            cur = c.execute("UPDATE items SET state = 'failed', reason = ?, worker = NULL,"
                            " lease_until = NULL, updated = ? WHERE key = ? AND state IN"
                            " ('queued', 'running')", (reason, self.clock(), key))
            return cur.rowcount == 1

    def fail_stale(self, older_than_s: float) -> int:
        """Fail queued items waiting longer than ``older_than_s`` (the queue timeout)."""
        now = self.clock()
        with self._tx() as c:
            return c.execute("UPDATE items SET state = 'failed', reason = 'queue timeout', updated = ?"
                             " WHERE state = 'queued' AND created < ?", (now, now - older_than_s)).rowcount

    # ----------------------------------------------------------------- reading
    def counts(self) -> dict[str, int]:
        rows = self._conn().execute("SELECT state, COUNT(*) FROM items GROUP BY state").fetchall()
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        out.update(dict(rows))
        return out

    def item(self, key: str) -> dict[str, Any] | None:
        """Every column of one item (for inspection and tests)."""
        c = self._conn()
        row = c.execute("SELECT * FROM items WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in c.execute("SELECT * FROM items LIMIT 0").description], row))

    def failures(self) -> list[tuple[str, str]]:
        return self._conn().execute("SELECT key, reason FROM items WHERE state = 'failed'"
                                    " ORDER BY id").fetchall()

    def results(self, after_seq: int = 0, *, unacked_only: bool = False,
                limit: int | None = None) -> list[Result]:
        sql = ("SELECT seq, id, key, payload, result, acked FROM items WHERE state = 'done'"
               " AND seq > ?" + (" AND acked = 0" if unacked_only else "") + " ORDER BY seq")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._conn().execute(sql, (after_seq,)).fetchall()
        return [Result(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]), bool(r[5])) for r in rows]

    def ack(self, item_ids: Iterable[int]) -> None:
        ids = [(int(i),) for i in item_ids]
        with self._tx() as c:
            c.executemany("UPDATE items SET acked = 1 WHERE id = ? AND state = 'done'", ids)

    def put_state(self, name: str, value: Any) -> None:
        with self._tx() as c:
            _put(c, name, value)

    def get_state(self, name: str, default: Any = None) -> Any:
        row = self._conn().execute("SELECT value FROM state WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row is not None else default


def _put(c: sqlite3.Connection, name: str, value: Any) -> None:
    c.execute("INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET"
              " value = excluded.value", (name, json.dumps(value)))


def _expire(c: sqlite3.Connection, now: float) -> int:
    # An expired lease is an infrastructure failure of the worker: it spends the attempt.
    failed = c.execute("UPDATE items SET state = 'failed', worker = NULL, lease_until = NULL,"
                       " reason = 'lease expired (worker lost) after ' || attempts || ' attempts',"
                       " updated = ? WHERE state = 'running' AND lease_until < ?"
                       " AND attempts >= max_attempts", (now, now)).rowcount
    queued = c.execute("UPDATE items SET state = 'queued', worker = NULL, lease_until = NULL,"
                       " last_error = 'lease expired', updated = ? WHERE state = 'running'"
                       " AND lease_until < ?", (now, now)).rowcount
    return failed + queued


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error): one writer at a time."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


class WorkStoreCheckpoints:
    """Episode checkpoints (:mod:`posttrain.rollout.checkpoints`) as named state of a
    :class:`WorkStore` file (opened by path, so every producer process can use it; picklable
    by its path)."""

    PREFIX = "episodes/"

    def __init__(self, path: str):
        self.path = path
        self._store: Any = None

    def _open(self) -> "WorkStore":
        if self._store is None:
            self._store = WorkStore(self.path)
        return self._store

    def save(self, key: str, blob: bytes) -> None:
        self._open().put_state(self.PREFIX + key, base64.b64encode(blob).decode("ascii"))

    def load(self, key: str) -> bytes | None:
        got = self._open().get_state(self.PREFIX + key)
        return base64.b64decode(got) if got else None

    def drop(self, key: str) -> None:
        self._open().put_state(self.PREFIX + key, None)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path, self._store = state["path"], None
