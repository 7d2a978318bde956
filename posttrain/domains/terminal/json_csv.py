"""Convert JSON to CSV: ``terminal.json_to_csv-v1``.

Trains: turning a JSON array of records into CSV with ``python3 -c``/``jq``-free shell work:
column order, nested fields, missing values and quoting. ``data/records.json`` holds a list
of objects; ``out.csv`` must have the given header and one row per record, in order.
Difficulty 1: flat fields; 2: nested fields addressed as ``a.b`` (``user.name``);
3: some fields missing (→ empty cell) and values containing commas and quotes (RFC 4180
quoting needed).

Reward: the CSV is parsed on the host with the ``csv`` module (so any valid quoting is
accepted): ``header`` (exact) and ``rows`` = expected rows found in order / max(expected,
produced rows), rows counted only under the right header; guarded by the JSON left unchanged.

Fields joined with commas without quoting (difficulty 3) earn partial credit: the rows
without a comma or quote still parse right.

Probes (≤ 0.05): ``copy_json`` (the JSON as the CSV), ``header_only``,
``rows_without_header``, plus the terminal and generic probes.
"""

from __future__ import annotations

import csv
import io
import json
import random

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, shell, text_of, tree_task, write

NAMES = ["Ada", "Bo", "Cyd", "Dee", "Eve", "Fin", "Gil", "Hal"]
CITIES = ["Oslo", "Lima", "Pune", "Graz", "Kobe"]


def _record(rng, i: int, d: int) -> dict:
    rec = {"id": i, "qty": rng.randint(0, 40), "price": round(rng.uniform(1, 99), 2)}
    if d >= 2:
        rec["user"] = {"name": rng.choice(NAMES), "city": rng.choice(CITIES)}
    if d >= 3:
        if rng.random() < 0.3:
            del rec["qty"]
        if rng.random() < 0.4:
            rec["user"]["name"] += rng.choice([", Jr.", ' "the 2nd"'])
        if rng.random() < 0.3:
            del rec["user"]["city"]
    return rec


def _get(rec: dict, col: str) -> str:
    cur = rec
    for part in col.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return ""
        cur = cur[part]
    return str(cur)


def _build(rng: random.Random, d: int):
    recs = [_record(rng, i, d) for i in rng.sample(range(100, 999), rng.randint(4, 8))]
    cols = ["id", "qty", "price"] + (["user.name", "user.city"] if d >= 2 else [])
    cols = [cols[0]] + rng.sample(cols[1:], len(cols) - 1)
    rows = [[_get(r, c) for c in cols] for r in recs]
    text = (f"Convert data/records.json (a JSON list of objects) into out.csv with the header {','.join(cols)} and "
            "one row per record in the same order" + ("; a.b means the field b of the object a" if d >= 2 else "")
            + ("; a missing field is an empty cell, and quote values as CSV requires" if d >= 3 else "")
            + ". Numbers are written as in the JSON. Do not change the JSON.")
    data = json.dumps(recs, indent=1) + "\n"
    preds = [{"op": "file", "path": "data/records.json", "content": data, "guard": True}]
    return tree_task(DOMAIN_ID, d, text, {"data/records.json": data}, preds, hidden={"cols": cols, "rows": rows})


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _verify(env, trajectory):
    h = env.task.hidden
    got = text_of(env, "out.csv") or ""
    try:
        parsed = list(csv.reader(io.StringIO(got)))
    except csv.Error:
        parsed = []
    header = float(bool(parsed) and parsed[0] == h["cols"])
    have, want = (parsed[1:] if header else []), h["rows"]
    j = hits = 0
    for row in have:
        if j < len(want) and row == want[j]:
            hits, j = hits + 1, j + 1
    rows = hits / max(len(want), len(have), 1)
    return fs_score(h["predicates"], collect_state(env.sandbox), DOMAIN_ID,
                    extra={"header": header * rows, "rows": rows})


def _reference(task):
    return [write("out.csv", _csv([task.hidden["cols"]] + task.hidden["rows"]))]


def _probes(task):
    h = task.hidden
    return {"copy_json": [shell("cp data/records.json out.csv")],
            "header_only": [write("out.csv", ",".join(h["cols"]) + "\n")],
            "rows_without_header": [write("out.csv", _csv(h["rows"]))]}


DOMAIN_ID = "terminal.json_to_csv-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
