"""SQL domains and the read-only result verifier: reference 1.0 on hidden databases, exploits
(whole table, hard-coded sample answer, writes, pragma, attach, runaway queries) at 0."""

from __future__ import annotations

import time

import pytest

import posttrain.domains.sql  # noqa: F401  (registers the domains)
from posttrain.domains.base import DOMAINS, sample_task
from posttrain.domains.math_ext._selfcheck import check_domain_quick
from posttrain.domains.sql._kit import open_db, run_on_seed
from posttrain.verifiers.sqlresult import QueryResult, compare_results, connect, run_query

IDS = sorted(i for i in DOMAINS.ids() if i.startswith("sql."))


def test_family_size():
    assert len(IDS) >= 15


@pytest.mark.parametrize("dom_id", IDS)
def test_self_check(dom_id):
    assert check_domain_quick(DOMAINS.get(dom_id), range(3)) == []


@pytest.mark.parametrize("dom_id", IDS)
def test_hidden_databases_differ_from_public(dom_id):
    dom = DOMAINS.get(dom_id)
    t = sample_task(dom, 5, 2)
    assert t.public["db_seed"] not in t.hidden["db_seeds"]
    assert "db_seeds" not in t.public_view()["public"]
    pub = run_on_seed(t.public["db_seed"], dom.solve(t))
    assert all(run_on_seed(s, dom.solve(t)).rows != pub.rows for s in t.hidden["db_seeds"])


def test_wrong_query_scores_zero_and_order_gets_half():
    dom = DOMAINS.get("sql.order_limit-v1")
    t = sample_task(dom, 0, 1)
    ref = dom.solve(t)
    assert dom.score(t, ref.replace("DESC", "ASC")).value == 0.0
    reversed_order = f"SELECT * FROM ({ref}) ORDER BY 2 ASC"
    assert dom.score(t, reversed_order).value == 0.5
    assert dom.score(t, ref + ";").value == 1.0


def test_equivalent_query_accepted():
    dom = DOMAINS.get("sql.anti_join-v1")
    t = sample_task(dom, 2, 1)
    alt = "SELECT c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL"
    assert dom.score(t, alt).value == 1.0


def test_float_rounding_normalised():
    want = QueryResult(rows=((1, 2.5),), ncols=2)
    got = QueryResult(rows=((1.0, 2.50000001),), ncols=2)
    assert compare_results(got, want, ordered=True).value == 1.0
    assert compare_results(QueryResult(rows=((1, 2.6),), ncols=2), want, ordered=True).value == 0.0


@pytest.mark.security
@pytest.mark.parametrize("sql", [
    "DELETE FROM employees", "UPDATE employees SET salary = 0", "INSERT INTO orders VALUES (1,1,1,1,'x','y')",
    "DROP TABLE employees", "CREATE TABLE t(x)", "PRAGMA writable_schema = 1", "ATTACH DATABASE 'x.db' AS x",
    "SELECT load_extension('x')", "SELECT randomblob(100000000)", "SELECT zeroblob(100000000)",
    "SELECT 1; DELETE FROM employees", "BEGIN", "VACUUM",
    "SELECT printf('%.*c', 99999, 'x') || printf('%.*c', 99999, 'x')", "SELECT replace(hex(zeroblob(50000)), '0', 'aaaaaaaa')",
])
def test_dangerous_queries_fail_and_leave_db_intact(sql):
    conn = open_db(12345)
    before = conn.execute("SELECT COUNT(*), SUM(salary) FROM employees").fetchone()
    res = run_query(conn, sql)
    assert not res.ok
    assert conn.execute("SELECT COUNT(*), SUM(salary) FROM employees").fetchone() == before


@pytest.mark.security
def test_runaway_recursive_query_is_stopped():
    conn = open_db(7)
    t0 = time.monotonic()
    res = run_query(conn, "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT MAX(x) FROM r",
                    max_seconds=0.5)
    assert not res.ok and time.monotonic() - t0 < 3
    cross = run_query(conn, "SELECT COUNT(*) FROM orders a, orders b, orders c, orders d", max_seconds=0.5)
    assert not cross.ok


def test_row_cap_rejects_everything_dumps():
    conn = connect(lambda c: c.executescript("CREATE TABLE t(x); " + "".join(f"INSERT INTO t VALUES ({i});" for i in range(600))))
    assert not run_query(conn, "SELECT x FROM t").ok
    assert run_query(conn, "SELECT x FROM t LIMIT 10").ok
    ok = run_query(conn, "WITH a AS (SELECT x FROM t WHERE x < 3) SELECT x FROM a")
    assert ok.ok and len(ok.rows) == 3
