"""The SQL family's kit: the seeded company database and :func:`sql_domain`, the constructor
that makes a question generator a domain (shared task drawing, checker and probes).

One schema (departments, employees, customers, products, orders); rows depend only on an
integer seed, so a task stores seeds, never data. The policy sees the schema and a few sample
rows of a *public* seed; scoring runs the policy's query and the reference query on two
*hidden* seeds (:func:`make_sql_task` retries until the answers differ between the public and
hidden databases, are non-empty, and differ from the "return the whole table" probes), so a
hard-coded result or an unfiltered query scores 0.

A domain is ``sql_domain(id, question, description)``: ``question(rng, difficulty) ->
Question`` is the only part that varies; the checker reads the id from ``task.domain``.

Guarantees: salaries and prices are unique within a database (orderings have no ties);
vocabulary used in questions (department names, cities, categories, statuses, years) is
fixed across seeds. Does not: model realistic distributions.
"""

from __future__ import annotations

import functools
import random
import sqlite3
import threading
from datetime import date, timedelta
from typing import Any, Callable, NamedTuple

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.kit.single_turn import SingleTurnDomain
from posttrain.verifiers.sqlresult import QueryResult, compare_results, connect, run_query

from ..math_ext._kit import answer_text, fail

DEPTS = ["Sales", "Engineering", "Marketing", "Finance", "Support", "Legal"]
CITIES = ["Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Vienna"]
CATEGORIES = ["Books", "Toys", "Garden", "Kitchen", "Sports", "Music"]
STATUSES = ["shipped", "pending", "cancelled", "returned"]
YEARS = [2023, 2024]
FIRST = ["Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena", "Milo",
         "Nora", "Otto", "Pia", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Vic", "Wes", "Xena", "Yara", "Zed"]
LAST = ["Adams", "Brown", "Costa", "Diaz", "Evans", "Fox", "Gray", "Hill", "Ivanov", "Jones", "King", "Lopez"]
ADJ = ["Red", "Tiny", "Smart", "Classic", "Quiet", "Rapid", "Golden", "Soft", "Bold", "Fresh"]
NOUN = ["Lamp", "Kettle", "Novel", "Drone", "Rake", "Guitar", "Ball", "Puzzle", "Pan", "Atlas", "Kite", "Drum"]
REVENUE = "o.quantity * p.price"  # an order line's revenue in a query joining orders o and products p

SCHEMA = """CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, budget INTEGER NOT NULL);
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept_id INTEGER NOT NULL REFERENCES departments(id), manager_id INTEGER REFERENCES employees(id), salary INTEGER NOT NULL, bonus INTEGER, hire_date TEXT NOT NULL);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, email TEXT, signup_date TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, order_date TEXT NOT NULL, status TEXT NOT NULL);"""


def _day(rng: random.Random, y0: int, y1: int) -> str:
    start = date(y0, 1, 1)
    return (start + timedelta(days=rng.randrange((date(y1 + 1, 1, 1) - start).days))).isoformat()


def rows_for_seed(seed: int) -> dict[str, list[tuple[Any, ...]]]:
    rng = random.Random(f"posttrain-sql-db|{seed}")
    depts = [(i + 1, n, rng.choice(CITIES), rng.randrange(100, 900) * 1000) for i, n in enumerate(DEPTS)]
    n_emp = rng.randint(24, 36)
    names = rng.sample([f"{f} {l}" for f in FIRST for l in LAST], n_emp + rng.randint(18, 26))
    salaries = rng.sample(range(30_000, 160_000, 250), n_emp)
    heads: dict[int, int] = {}
    emps = []
    for i in range(n_emp):
        dept = i + 1 if i < len(DEPTS) else rng.randint(1, len(DEPTS))
        mgr = None if i < len(DEPTS) else (heads[dept] if rng.random() < 0.7 else rng.randint(1, i))
        if i < len(DEPTS):
            heads[dept] = i + 1
        bonus = None if rng.random() < 0.35 else rng.randrange(5, 100) * 100
        emps.append((i + 1, names[i], dept, mgr, salaries[i], bonus, _day(rng, 2015, 2024)))
    custs = [(i + 1, names[n_emp + i], rng.choice(CITIES),
              None if rng.random() < 0.25 else f"{names[n_emp + i].split()[0].lower()}{i}@example.com",
              _day(rng, 2021, 2024)) for i in range(len(names) - n_emp)]
    prod_names = rng.sample([f"{a} {n}" for a in ADJ for n in NOUN], rng.randint(12, 18))
    prices = rng.sample(range(199, 25_000, 7), len(prod_names))
    prods = [(i + 1, n, rng.choice(CATEGORIES), prices[i] / 100) for i, n in enumerate(prod_names)]
    active = [c[0] for c in custs if rng.random() < 0.8]
    orders = [(i + 1, rng.choice(active), rng.randint(1, len(prods)), rng.randint(1, 5),
               _day(rng, 2023, 2024), rng.choices(STATUSES, weights=[6, 2, 1, 1])[0])
              for i in range(rng.randint(60, 110))]
    return {"departments": depts, "employees": emps, "customers": custs, "products": prods, "orders": orders}


def _fill(seed: int, conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)
    for table, rows in rows_for_seed(seed).items():
        if rows:
            conn.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)


@functools.lru_cache(maxsize=32)
def open_db(seed: int) -> sqlite3.Connection:
    """The database of ``seed``, cached: it is never written (the query authorizer denies writes)."""
    return connect(functools.partial(_fill, seed))


_DB_LOCK = threading.Lock()  # one query at a time per process: the authorizer is per connection


@functools.lru_cache(maxsize=1024)
def run_on_seed(seed: int, sql: str) -> QueryResult:
    """The result of ``sql`` on the database of ``seed`` (cached: databases are pure functions of seeds)."""
    with _DB_LOCK:
        return run_query(open_db(seed), sql)


def sample_rows_text(seed: int, k: int = 3) -> str:
    rows = rows_for_seed(seed)
    return "\n".join(f"{t}: " + "; ".join(repr(r) for r in rs[:k]) for t, rs in rows.items())


class Question(NamedTuple):
    text: str
    sql: str
    ordered: bool
    whole_table: str  # a query returning every row of the main table in the answer's column shape


FORMAT = ("Reply with only one SQLite SELECT statement (no explanation, no other statements). It will be "
          "run on a different database with the same schema; column names do not matter, column order does.")


def make_sql_task(dom_id: str, difficulty: int, rng: random.Random,
                  question: Callable[[random.Random, int], Question]) -> Task:
    """Draw a question and seeds until the answer is non-trivial and differs across databases."""
    for _ in range(200):
        q = question(rng, difficulty)
        pub, hid = rng.randrange(10 ** 9), [rng.randrange(10 ** 9) for _ in range(2)]
        ref_pub = run_on_seed(pub, q.sql)
        refs = [run_on_seed(s, q.sql) for s in hid]
        if not ref_pub.ok or any(not r.ok for r in refs):
            raise RuntimeError(f"{dom_id}: reference query failed: {ref_pub.error or refs}")
        if any(not r.rows for r in refs) or any(r.rows == ref_pub.rows for r in refs):
            continue
        probes = [q.whole_table, _hardcoded(ref_pub)]
        if any(compare_results(run_on_seed(s, p), r, ordered=False).value > 0
               for s, r in zip(hid, refs) for p in probes):
            continue
        break
    else:
        raise RuntimeError(f"{dom_id}: no non-degenerate database pair in 200 draws")
    prompt = (f"SQLite database schema:\n{SCHEMA}\n\nSample rows (from one instance):\n{sample_rows_text(pub)}\n\n"
              f"Question: {q.text}\n{FORMAT}")
    return make_task(dom_id, difficulty, prompt, answer=q.sql, public={"question": q.text, "db_seed": pub},
                     hidden={"db_seeds": hid, "ordered": q.ordered, "whole_table": q.whole_table,
                             "hardcoded": _hardcoded(ref_pub)})


def _hardcoded(res: QueryResult) -> str:
    """A query returning ``res``'s rows as literals: what memorising the sample answer gives."""
    def lit(v: Any) -> str:
        return "NULL" if v is None else repr(v) if isinstance(v, (int, float)) else "'" + str(v).replace("'", "''") + "'"
    if not res.rows:
        return "SELECT 1 WHERE 0"
    return " UNION ALL ".join("SELECT " + ", ".join(lit(v) for v in r) for r in res.rows[:40])


def score_sql(task: Task, answer: str) -> Score:
    """The result of ``answer`` against the reference's on both hidden databases (0.5 per database
    for the right rows in the wrong order when an order is asked)."""
    dom_id = task.domain
    sql = answer_text(answer)
    if not sql:
        return fail(dom_id, "empty answer")
    comps: dict[str, tuple[float, float]] = {}
    reasons = []
    for i, seed in enumerate(task.hidden["db_seeds"]):
        want = run_on_seed(seed, task.hidden["answer"])
        got = run_on_seed(seed, sql)
        c = compare_results(got, want, ordered=bool(task.hidden["ordered"]))
        comps[f"db{i}"] = (c.value, 1.0)
        reasons.append(c.reason)
    return Score.weighted(comps, reason="; ".join(dict.fromkeys(reasons)), verifier_version=dom_id)


def sql_probes(task: Task) -> dict[str, str]:
    return {"whole_table": task.hidden["whole_table"], "hardcoded_sample_answer": task.hidden["hardcoded"],
            "drop_table": "DROP TABLE employees", "pragma": "PRAGMA table_info(employees)",
            "attach": "ATTACH DATABASE ':memory:' AS x",
            "two_statements": f"{task.hidden['whole_table']}; {task.hidden['answer']}"}


def _draw(dom_id: str, question: Callable[[random.Random, int], Question],
          rng: random.Random, difficulty: int) -> Task:
    return make_sql_task(dom_id, difficulty, rng, question)


def sql_domain(dom_id: str, question: Callable[[random.Random, int], Question],
               description: str) -> SingleTurnDomain:
    """The domain asking ``question``'s questions, scored by :func:`score_sql` with :func:`sql_probes`."""
    # functools.partial of module-level functions (not a closure) keeps the record picklable
    return SingleTurnDomain(dom_id, functools.partial(_draw, dom_id, question), score_sql, sql_probes,
                            description=description)
