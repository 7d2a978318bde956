"""Merge CSV files with the header once: ``terminal.csv_merge-v1``.

Trains: ``head -1`` + ``tail -n +2`` (or awk ``FNR``) to concatenate CSVs that share a
header. ``parts/*.csv`` (names chosen so that glob order differs from creation order) must be
merged into ``merged.csv``: the header once, then the data rows of every file in file-name
order. Difficulty 2: some files hold only the header, and files end without a final newline;
difficulty 3: rows must be sorted by the numeric ``id`` column instead (ids of different
widths, so a text sort is wrong), and a ``source`` column holding each row's file name
(without ``.csv``) appended.

Reward: ``rows`` = expected data rows found in order / max(expected, produced rows), and
``exact`` (the whole file, lines compared), both 0 unless the header is the first line and
appears once; guarded by the inputs left unchanged. A wrong sort order (``sort`` without
``-n``) earns partial ``rows`` credit.

Probes (≤ 0.05): ``cat_all`` (headers repeated), ``header_only``, ``rows_no_header``, plus
the terminal and generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

from ._kit import TreeDomain, graded_lines, shell, text_of, tree_task, write_lines

REGIONS = ["north", "south", "east", "west", "central", "coast"]
HEADER = "id,item,qty"


def _build(rng: random.Random, d: int):
    names = sorted(rng.sample(REGIONS, 2 + d))
    ids = rng.sample(range(1, 2000), 30)
    files, rows = {}, []
    for i, n in enumerate(names):
        count = 0 if d >= 2 and i == 1 else rng.randint(2, 4)
        body = [f"{ids.pop()},{rng.choice(['nut', 'bolt', 'gear', 'cog'])},{rng.randint(1, 50)}" for _ in range(count)]
        rows += [(r, n) for r in body]
        text = "\n".join([HEADER] + body)
        files[f"parts/{n}.csv"] = text + ("" if d >= 2 and i % 2 == 0 else "\n")
    if d >= 3:
        rows.sort(key=lambda rn: int(rn[0].split(",")[0]))
        lines = [HEADER + ",source"] + [f"{r},{n}" for r, n in rows]
    else:
        lines = [HEADER] + [r for r, _ in rows]
    text = ("Merge parts/*.csv (all with the header 'id,item,qty') into merged.csv: the header once, then "
            "the data rows of each file in file-name order")
    if d >= 3:
        text = ("Merge parts/*.csv (all with the header 'id,item,qty') into merged.csv with the header "
                "'id,item,qty,source': every data row with the name of its file (without .csv) appended as "
                "source, rows sorted by id as a number")
    preds = [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    return tree_task(DOMAIN_ID, d, text + ". Leave parts/ unchanged.", files, preds,
                     hidden={"lines": lines})


def _verify(env, trajectory):
    want, got = env.task.hidden["lines"], text_of(env, "merged.csv")
    have = _norm_lines(got or "")
    header_ok = float(bool(have) and have[0] == want[0] and have.count(want[0]) == 1)
    rows = graded_lines("\n".join(have[1:]), want[1:]) if header_ok else 0.0
    extra = {"rows": rows, "exact": float(have == want)}
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), DOMAIN_ID, extra=extra)


def _reference(task):
    return [write_lines("merged.csv", task.hidden["lines"])]


def _probes(task):
    return {"cat_all": [shell("cat parts/*.csv > merged.csv")],
            "rows_no_header": [shell("for f in parts/*.csv; do tail -n +2 $f; echo; done | grep . > merged.csv")],
            "header_only": [shell("head -1 parts/$(ls parts | head -1) > merged.csv")]}


DOMAIN_ID = "terminal.csv_merge-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
