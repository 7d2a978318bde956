"""Migrate a SQLite database from schema v1 to v2 in steps: ``long_horizon.db_migration-v1``.

Trains: careful, stepwise schema changes with data preserved (``sqlite3`` CLI or Python's
``sqlite3``). ``app.db`` (built at setup) holds ``users(id, full_name, email)`` and
``orders(id, user_email, amount)``. Stages:

1. ``users`` gains ``first_name`` and ``last_name`` (``full_name`` split at its first space);
2. ``orders`` gains ``user_id`` = the id of the user with that e-mail (NULL when no user has
   it — such orders exist from difficulty 3);
3. (difficulty ≥ 2) ``orders`` gains ``amount_cents`` = the amount in integer cents;
4. (difficulty 3) ``full_name``, ``user_email`` and ``amount`` are dropped and an index on
   ``orders(user_id)`` exists — counted only with every earlier stage's data still right.

Every stage also requires every row id to be kept. The database is inspected by our own
fixed query (``python3 -I``, read-only URI); for the outcome the file's bytes are copied into
a fresh sandbox first, so nothing the policy left in its sandbox takes part.

Process rewards (checkpoints): each stage right, the first time. Outcome: the fraction of
stages right in the final database.

Probes (≤ 0.05): ``recreate_empty`` (tables dropped and created with the v2 columns, no
rows), ``columns_only`` (columns added, never filled), ``delete_db``, plus the generic probes.
"""

from __future__ import annotations

import json
import random

from posttrain.domains.base import register_domain

from ._kit import LongDomain, done, files_task, in_fresh, shell, stage_env, stage_score

DOMAIN_ID = "long_horizon.db_migration-v1"
FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Ken", "Donald", "Frances", "John", "Radia"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Thompson", "Knuth", "Allen", "Perlman"]
QUERY = """import json, sqlite3
c = sqlite3.connect('file:app.db?mode=ro', uri=True)
out = {}
for (t,) in c.execute("select name from sqlite_master where type='table'").fetchall():
    cols = [r[1] for r in c.execute('pragma table_info("%s")' % t)]
    out[t] = {"cols": cols, "rows": [list(r) for r in c.execute('select * from "%s" limit 5000' % t)]}
idx = [[tbl, [r[2] for r in c.execute('pragma index_info("%s")' % n)]]
       for n, tbl in c.execute("select name, tbl_name from sqlite_master where type='index'").fetchall()]
print(json.dumps({"tables": out, "indexes": idx}))
"""
INIT = "sqlite3 app.db < seed.sql && rm seed.sql"


def _build(rng: random.Random, d: int):
    users, orders = [], []
    for uid in rng.sample(range(1, 90), rng.randint(4, 6)):
        first = rng.choice(FIRST)
        last = rng.choice(LAST) + (f" {rng.choice(LAST)}" if d >= 3 and rng.random() < 0.3 else "")
        users.append([uid, first, last, f"{first.lower()}.{uid}@example.org"])
    for oid in rng.sample(range(100, 999), rng.randint(5, 8)):
        u = rng.choice(users)
        email, uid = (u[3], u[0]) if not (d >= 3 and rng.random() < 0.25) else ("ghost@example.org", None)
        amount = round(rng.randint(100, 99999) / 100, 2)
        orders.append([oid, email, amount, uid])
    sql = ("CREATE TABLE users(id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT NOT NULL);\n"
           "CREATE TABLE orders(id INTEGER PRIMARY KEY, user_email TEXT, amount REAL);\n"
           + "".join(f"INSERT INTO users VALUES({i}, '{f} {ln}', '{e}');\n" for i, f, ln, e in users)
           + "".join(f"INSERT INTO orders VALUES({o}, '{e}', {a});\n" for o, e, a, _ in orders))
    steps = ["users: add columns first_name and last_name, filled by splitting full_name at its first space",
             "orders: add column user_id holding the id of the user whose email equals user_email (NULL if none)"]
    if d >= 2:
        steps.append("orders: add column amount_cents INTEGER = amount in cents (e.g. 12.5 -> 1250)")
    if d >= 3:
        steps.append("drop the columns users.full_name, orders.user_email and orders.amount, and create an index "
                     "on orders(user_id)")
    text = ("app.db is a SQLite database (schema v1: users(id, full_name, email), orders(id, user_email, amount)). "
            "Migrate it in place to v2, step by step, keeping every row:\n"
            + "\n".join(f"{i + 1}. {s}" for i, s in enumerate(steps)))
    hidden = {"users": users, "orders": [[o, uid, round(a * 100)] for o, _, a, uid in orders]}
    return files_task(DOMAIN_ID, d, text, {"seed.sql": sql}, hidden)


def _table(snap: dict, name: str) -> dict[int, dict]:
    t = snap.get("tables", {}).get(name)
    if not t:
        return {}
    return {r[t["cols"].index("id")]: dict(zip(t["cols"], r)) for r in t["rows"]} if "id" in t["cols"] else {}


def stage_values(snap: dict | None, h: dict, d: int) -> dict[str, float]:
    if not snap:
        return {f"stage{k + 1}": 0.0 for k in range(d + 1 if d < 3 else 4)}
    users, orders = _table(snap, "users"), _table(snap, "orders")
    ids_u = set(users) == {u[0] for u in h["users"]}
    ids_o = set(orders) == {o[0] for o in h["orders"]}
    s1 = ids_u and all(users[i].get("first_name") == f and users[i].get("last_name") == ln and users[i].get("email") == e
                       for i, f, ln, e in h["users"])
    s2 = ids_o and all(orders[o].get("user_id", "missing") == uid for o, uid, _ in h["orders"])
    vals = {"stage1": float(s1), "stage2": float(s2)}
    if d >= 2:
        vals["stage3"] = float(ids_o and all(orders[o].get("amount_cents") == c for o, _, c in h["orders"]))
    if d >= 3:
        cols = {t: set(v["cols"]) for t, v in snap["tables"].items()}
        dropped = "full_name" not in cols.get("users", {"full_name"}) and not {"user_email", "amount"} & cols.get("orders", {"amount"})
        indexed = any(t == "orders" and c == ["user_id"] for t, c in snap.get("indexes", []))
        vals["stage4"] = float(dropped and indexed and all(v == 1.0 for v in vals.values()))
    return vals


def _snapshot_episode(env) -> dict | None:
    res = env.sandbox.exec(["python3", "-I", "-c", QUERY], timeout=10)
    try:
        return json.loads(res.stdout) if res.exit_code == 0 else None
    except ValueError:
        return None


def _verify(env, trajectory):
    h, d = env.task.hidden, env.task.difficulty
    snap = None
    try:
        raw = env.sandbox.read_file("app.db", max_bytes=4 << 20) if env.sandbox_opened else None
    except Exception:  # absent, a link, too large
        raw = None
    if raw:
        (res,), _ = in_fresh({"app.db": raw}, [["python3", "-I", "-c", QUERY]])
        try:
            snap = json.loads(res.stdout) if res.exit_code == 0 else None
        except ValueError:
            snap = None
    return stage_score(DOMAIN_ID, stage_values(snap, h, d), env)


SQL_STEPS = [
    "ALTER TABLE users ADD COLUMN first_name TEXT; ALTER TABLE users ADD COLUMN last_name TEXT; "
    "UPDATE users SET first_name = substr(full_name, 1, instr(full_name, ' ') - 1), "
    "last_name = substr(full_name, instr(full_name, ' ') + 1);",
    "ALTER TABLE orders ADD COLUMN user_id INTEGER; "
    "UPDATE orders SET user_id = (SELECT id FROM users WHERE users.email = orders.user_email);",
    "ALTER TABLE orders ADD COLUMN amount_cents INTEGER; UPDATE orders SET amount_cents = CAST(round(amount * 100) AS INTEGER);",
    "ALTER TABLE users DROP COLUMN full_name; ALTER TABLE orders DROP COLUMN user_email; "
    "ALTER TABLE orders DROP COLUMN amount; CREATE INDEX idx_orders_user_id ON orders(user_id);",
]


def _sql(stmt: str) -> str:
    return shell(f"sqlite3 app.db \"{stmt}\"")


def _env(task):
    cache: dict[int, dict] = {}  # one query per turn, shared by the stage checks

    def check(k):
        def ok(env) -> bool:
            if env.turn not in cache:
                cache.clear()
                cache[env.turn] = stage_values(_snapshot_episode(env), task.hidden, task.difficulty)
            return cache[env.turn][f"stage{k + 1}"] >= 1.0
        return ok
    n = {1: 2, 2: 3, 3: 4}[task.difficulty]
    return stage_env(task, _verify, [(f"stage{k + 1}", check(k)) for k in range(n)], init=INIT)


def _reference(task) -> list[str]:
    n = {1: 2, 2: 3, 3: 4}[task.difficulty]
    return [_sql(s) for s in SQL_STEPS[:n]] + [done()]


def _probes(task) -> dict:
    v2 = ("DROP TABLE users; DROP TABLE orders; CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT, first_name "
          "TEXT, last_name TEXT); CREATE TABLE orders(id INTEGER PRIMARY KEY, user_id INTEGER, amount_cents INTEGER);")
    cols = ("ALTER TABLE users ADD COLUMN first_name TEXT; ALTER TABLE users ADD COLUMN last_name TEXT; "
            "ALTER TABLE orders ADD COLUMN user_id INTEGER; ALTER TABLE orders ADD COLUMN amount_cents INTEGER;")
    return {"recreate_empty": [_sql(v2), done()], "columns_only": [_sql(cols), done()],
            "delete_db": [shell("rm -f app.db"), done()]}


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
