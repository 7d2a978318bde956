"""A SQL-like table API: ``tools.table_ops-v1``.

Trains: carrying out record operations phrased in words through ``find_rows(table, column,
value)``, ``insert_row``, ``update_rows`` and ``delete_rows`` over a hidden ``employees``
table, where several operations need a value read first (another employee's department,
salary or id): look up, then write. Operations apply in the order given, so a later
operation sees the effect of an earlier one.

Difficulty: number of operations 2 / 3 / 5 (level 1 has at most one lookup).

Reward: validity² × (0.3·calls + 0.7·state·precision²·[all calls made]); ``state_ok`` compares
the table after the episode with the expected one (rows as a set, all columns).

Probes (≤ 0.05): the kit's set (:mod:`._kit`). Partial credit, not a probe: writes with
guessed instead of looked-up values keep the calls part of the writes that needed no lookup.
Initial ids are public (the policy needs them for "one more than the largest id").
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from ._kit import ApiDomain, Plan, tool

NAMES = ["Ines", "Omar", "Lena", "Yuki", "Raj", "Zoe", "Tariq", "Mona", "Pavel", "Sade", "Hugo", "Nia"]
DEPTS = ["sales", "ops", "legal", "research", "support"]
VAL = {"type": "string"}  # numbers as decimal strings (type lists are outside the validator's subset)
TABLE = {"type": "string", "enum": ["employees"]}
COLS = {"type": "string", "enum": ["id", "name", "dept", "salary"]}


def _rows(st, table):
    return st["tables"][table]


def _cell(column: str, value: str) -> Any:
    if column in ("id", "salary"):
        if not value.isdigit():
            raise ValueError(f"{column} takes a decimal number, not {value!r}")
        return int(value)
    return value


def _find(st, table, column, value):
    return [r for r in _rows(st, table) if r[column] == _cell(column, value)]


def _insert(st, table, row):
    if set(row) != {"id", "name", "dept", "salary"}:
        raise ValueError("a row needs exactly id, name, dept, salary")
    if not all(isinstance(row[k], int) and not isinstance(row[k], bool) for k in ("id", "salary")):
        raise ValueError("id and salary must be integers")
    if any(r["id"] == row["id"] for r in _rows(st, table)):
        raise ValueError(f"id {row['id']} exists")
    _rows(st, table).append(dict(row))
    return {"inserted": 1}


def _update(st, table, column, value, set_column, set_value):
    n, key, new = 0, _cell(column, value), _cell(set_column, set_value)
    for r in _rows(st, table):
        if r[column] == key:
            r[set_column] = new
            n += 1
    return {"updated": n}


def _delete(st, table, column, value):
    before = len(_rows(st, table))
    key = _cell(column, value)
    st["tables"][table] = [r for r in _rows(st, table) if r[column] != key]
    return {"deleted": before - len(st["tables"][table])}


ID = "tools.table_ops-v1"


def _tools(st: dict[str, Any]):
    where = {"table": TABLE, "column": COLS, "value": VAL}
    return [tool("find_rows", "Rows whose column equals value.", where, _find, st),
            tool("insert_row", "Insert a row {id, name, dept, salary}.", {"table": TABLE, "row": {"type": "object"}}, _insert, st),
            tool("update_rows", "Set set_column=set_value where column=value (numbers as decimal strings).",
                 {**where, "set_column": COLS, "set_value": VAL}, _update, st),
            tool("delete_rows", "Delete rows where column=value.", where, _delete, st)]


def _project(st):
    return sorted(st["tables"]["employees"], key=lambda r: (r["id"], r["name"]))


def _plan(rng: random.Random, difficulty: int) -> Plan:
    names = rng.sample(NAMES, 12)
    staff, new = names[:10], names[10:]  # 5 operations use at most 10 distinct employees
    rows = [{"id": 100 + i * rng.randint(1, 3) + i, "name": n, "dept": rng.choice(DEPTS),
             "salary": rng.randrange(40000, 120000, 500)} for i, n in enumerate(staff)]
    st = {"tables": {"employees": [dict(r) for r in rows]}}
    n_ops = {1: 2, 2: 3, 3: 5}[difficulty]
    kinds = ["move", "copy_salary", "hire"] if difficulty > 1 else ["move", "raise", "fire"]
    ops: list[str] = []
    reads: list[tuple[str, dict[str, Any]]] = []
    writes: list[tuple[str, dict[str, Any]]] = []
    pool = list(staff)
    rng.shuffle(pool)
    lookups = 0
    while len(ops) < n_ops:
        kind = rng.choice(kinds + (["raise", "fire"] if ops else []))  # the first op needs a lookup
        if kind in ("move", "copy_salary", "hire") and difficulty == 1 and lookups:
            continue
        if kind == "hire":
            if not new:
                continue
            ref, who = pool.pop(), new.pop()
            r = _find(st, "employees", "name", ref)[0]
            row = {"id": max(x["id"] for x in st["tables"]["employees"]) + 1, "name": who,
                   "dept": r["dept"], "salary": r["salary"]}
            ops.append(f"hire {who} into {ref}'s department at {ref}'s salary, with id one more than the largest id")
            reads += [("find_rows", {"table": "employees", "column": "name", "value": ref})]
            call = ("insert_row", {"table": "employees", "row": row})
        elif kind in ("move", "copy_salary"):
            if len(pool) < 2:
                continue
            who, ref = pool.pop(), pool.pop()
            col = "dept" if kind == "move" else "salary"
            r = _find(st, "employees", "name", ref)[0]
            ops.append(f"set {who}'s {'department' if col == 'dept' else 'salary'} to {ref}'s")
            reads.append(("find_rows", {"table": "employees", "column": "name", "value": ref}))
            call = ("update_rows", {"table": "employees", "column": "name", "value": who,
                                    "set_column": col, "set_value": str(r[col])})
        elif kind == "raise":
            who = pool.pop()
            amount = rng.randrange(50000, 150000, 1000)
            ops.append(f"set {who}'s salary to {amount}")
            call = ("update_rows", {"table": "employees", "column": "name", "value": who,
                                    "set_column": "salary", "set_value": str(amount)})
        else:
            who = pool.pop()
            ops.append(f"remove {who}")
            call = ("delete_rows", {"table": "employees", "column": "name", "value": who})
        lookups += kind in ("move", "copy_salary", "hire")
        {t.name: t for t in _tools(st)}[call[0]](None, **call[1])
        writes.append(call)
    steps = "\n".join(f"{i + 1}. {o}" for i, o in enumerate(ops))
    prompt = (f"Table employees(id, name, dept, salary). In this order:\n{steps}\n"
              "Look values up with find_rows; names are unique. Reply ok when finished.")
    ids = sorted(r["id"] for r in rows)
    public = {"columns": ["id", "name", "dept", "salary"], "ids": ids}
    return Plan(prompt, {"tables": {"employees": rows}}, [reads, writes] if reads else [writes], "ok",
                public=public)


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, project=_project, result="state"))
