"""Split a large file into chunks: ``terminal.split_file-v1``.

Trains: ``split``/``head``/``tail``/``awk`` on line-oriented data. ``data/big.txt`` holds
N lines; it must be split into consecutive chunks of K lines. Difficulty 1: chunks
``parts/part_00``, ``part_01``...; 2: a CSV whose header line must start every chunk (K data
rows each), named ``parts/chunk_1.csv``, ``chunk_2.csv``...; 3: as 2 with 3-digit numbers
from 001 and a ``parts/INDEX`` file listing the chunk names and their row counts
(``NAME ROWS``).

Reward: one ``file`` predicate per chunk (exact bytes), the last one joined with the
absence of the next name (no extra chunk); the index at difficulty 3; guarded by the input
left unchanged.

Probes (≤ 0.05): ``off_by_one`` (chunks of K+1 lines), ``no_header`` (plain ``split -l``
on a CSV task), ``one_chunk`` (the whole file copied as the first chunk), plus the
terminal and generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task, write


def _name(d: int, i: int) -> str:
    return [f"parts/part_{i:02d}", f"parts/chunk_{i + 1}.csv", f"parts/chunk_{i + 1:03d}.csv"][d - 1]


def _chunks(lines: list[str], header: str | None, k: int) -> list[str]:
    out = []
    for i in range(0, len(lines), k):
        out.append("".join(([header] if header else []) + lines[i:i + k]))
    return out


def _build(rng: random.Random, d: int):
    k = rng.randint(3, 6)
    n = k * rng.randint(2, 3 + d) + rng.randint(1, k - 1)
    header = "id,name,qty\n" if d >= 2 else None
    lines = [f"{i},{rng.choice(['ant', 'bee', 'cat', 'dog', 'eel'])},{rng.randint(0, 99)}\n" if header
             else f"line {i} {rng.getrandbits(24):06x}\n" for i in range(1, n + 1)]
    big = (header or "") + "".join(lines)
    chunks = _chunks(lines, header, k)
    names = [_name(d, i) for i in range(len(chunks))]
    preds = [{"op": "file", "path": p, "content": c} for p, c in zip(names, chunks)]
    preds[-1] = {"op": "all", "of": [preds[-1], {"op": "absent", "path": _name(d, len(chunks))}]}
    index = "".join(f"{p.split('/')[-1]} {c.count(chr(10)) - 1}\n" for p, c in zip(names, chunks))
    if d >= 3:
        preds.append({"op": "file", "path": "parts/INDEX", "content": index, "lines": True})
    preds.append({"op": "file", "path": "data/big.txt", "content": big, "guard": True})
    ask = {1: f"Split data/big.txt into consecutive chunks of {k} lines named parts/part_00, parts/part_01, ...",
           2: f"data/big.txt is a CSV with a header line. Split its data rows into consecutive chunks of {k} "
              "rows, each chunk starting with the header line, named parts/chunk_1.csv, parts/chunk_2.csv, ...",
           3: f"data/big.txt is a CSV with a header line. Split its data rows into consecutive chunks of {k} "
              "rows, each chunk starting with the header line, named parts/chunk_001.csv, chunk_002.csv, ...; "
              "then write parts/INDEX with one line 'NAME ROWS' per chunk (file name without parts/, data rows)"}[d]
    return tree_task(DOMAIN_ID, d, ask + " (the last chunk may be shorter). Keep data/big.txt.",
                     {"data/big.txt": big}, preds,
                     hidden={"chunks": dict(zip(names, chunks)), "index": index, "k": k})


def _reference(task):
    acts = [write(p, c) for p, c in task.hidden["chunks"].items()]
    return acts + ([write("parts/INDEX", task.hidden["index"])] if task.difficulty >= 3 else [])


def _probes(task):
    k = task.hidden["k"]
    no_header = {} if task.difficulty < 2 else {
        "no_header": [shell(f"mkdir -p parts && split -l {k} -d data/big.txt parts/part_ && "
                            "for f in parts/part_*; do n=${f#parts/part_}; n=$((1${n} - 99)); "
                            "cp $f parts/chunk_$n.csv; cp $f parts/chunk_00$n.csv; done")]}
    return {**no_header, "off_by_one": [shell(f"mkdir -p parts && split -l {k + 1} -d data/big.txt parts/part_")],
            "one_chunk": [shell("mkdir -p parts && for p in part_00 chunk_1.csv chunk_001.csv; do cp data/big.txt parts/$p; done")]}


DOMAIN_ID = "terminal.split_file-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
