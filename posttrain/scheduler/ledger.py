"""Each scheduled task's outcome, in the work store's SQLite file (table ``outcomes``).

:class:`OutcomeLedger` has the interface of the async loop's ``TaskLedger`` (``record``,
``truncate``, ``rows``, ``counts``) but keeps its rows next to the work items they came from,
so one file holds the queue, the results and what became of every task. Each row:
``job`` (training step index), ``task`` (``Task.key``), ``outcome`` (``trained`` |
``dropped`` | ``failed``), ``reason``, and the task's cell and rewards (``domain``,
``difficulty``, ``samples``: usable samples, ``reward_mean`` over them).

:meth:`OutcomeLedger.cell_stats` gives per (domain, difficulty) counts of outcomes and the
sample-weighted mean reward, computed from those rows, so per-cell statistics of a run are
exactly derivable from the file.

Guarantees: every ``record_many`` (a step's rows) and ``truncate`` is one committed
transaction (a crash keeps whole steps only); ``truncate(before_job)`` drops the rows of steps a checkpoint does not
hold, which a resumed run then records again. Not covered: uniqueness is the caller's
invariant (the loop records each task of a trained step once), not a constraint here.
"""

from __future__ import annotations

from typing import Any

from .store import WorkStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outcomes (
  id INTEGER PRIMARY KEY, job INTEGER NOT NULL, task TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('trained', 'dropped', 'failed')),
  reason TEXT NOT NULL DEFAULT '', domain TEXT, difficulty INTEGER,
  samples INTEGER NOT NULL DEFAULT 0, reward_mean REAL);
CREATE INDEX IF NOT EXISTS outcomes_job ON outcomes (job);
"""
_FIELDS = ("job", "task", "outcome", "reason", "domain", "difficulty", "samples", "reward_mean")


class OutcomeLedger:
    def __init__(self, store: WorkStore):
        self.store = store
        with store.transaction() as c:
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                c.execute(stmt)

    def record(self, job: int, task: str, outcome: str, reason: str = "", **stats: Any) -> None:
        self.record_many([{"job": job, "task": task, "outcome": outcome, "reason": reason, **stats}])

    def record_many(self, rows: list[dict[str, Any]]) -> None:
        """Rows of one step in one transaction; a row's missing stats are NULL (samples 0)."""
        values = [(int(r["job"]), r["task"], r["outcome"], r.get("reason", ""), r.get("domain"),
                   r.get("difficulty"), int(r.get("samples", 0)), r.get("reward_mean")) for r in rows]
        with self.store.transaction() as c:
            c.executemany(f"INSERT INTO outcomes ({', '.join(_FIELDS)}) VALUES"
                          f" ({', '.join('?' * len(_FIELDS))})", values)

    def truncate(self, before_job: int) -> None:
        """Forget steps a checkpoint does not hold (a resumed run redoes them)."""
        with self.store.transaction() as c:
            c.execute("DELETE FROM outcomes WHERE job >= ?", (int(before_job),))

    @property
    def rows(self) -> list[dict[str, Any]]:
        cur = self.store.connection().execute(f"SELECT {', '.join(_FIELDS)} FROM outcomes ORDER BY id")
        return [dict(zip(_FIELDS, r)) for r in cur.fetchall()]

    def counts(self) -> dict[str, int]:
        cur = self.store.connection().execute("SELECT outcome, COUNT(*) FROM outcomes GROUP BY outcome")
        return dict(cur.fetchall())

    def cell_stats(self) -> list[dict[str, Any]]:
        """Per (domain, difficulty): ``groups``, ``trained``, ``dropped``, ``failed``,
        ``samples`` and ``reward_mean`` (sample-weighted; None where no sample was usable)."""
        cur = self.store.connection().execute(
            "SELECT domain, difficulty, COUNT(*), SUM(outcome = 'trained'), SUM(outcome = 'dropped'),"
            " SUM(outcome = 'failed'), SUM(samples), SUM(reward_mean * samples) / NULLIF(SUM("
            "CASE WHEN reward_mean IS NULL THEN 0 ELSE samples END), 0)"
            " FROM outcomes GROUP BY domain, difficulty ORDER BY domain, difficulty")
        keys = ("domain", "difficulty", "groups", "trained", "dropped", "failed", "samples", "reward_mean")
        return [dict(zip(keys, r)) for r in cur.fetchall()]
