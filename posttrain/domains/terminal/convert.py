"""Converting files: JSON to CSV, merging CSVs, splitting a file, line endings.

Domains (each one's description is its ``*_DOC`` text below): ``json_csv``, ``csv_merge``, ``split``, ``line_endings``.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

from ._kit import TreeDomain, graded_lines, shell, text_of, tree_task, write, write_lines


# -------------------- json_csv
JSON_DOC = """Convert JSON to CSV: ``terminal.json_to_csv-v1``.

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


def _build_json(rng: random.Random, d: int):
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
    return tree_task(ID_JSON, d, text, {"data/records.json": data}, preds, hidden={"cols": cols, "rows": rows})


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _verify_json(env, trajectory):
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
    return fs_score(h["predicates"], collect_state(env.sandbox), ID_JSON,
                    extra={"header": header * rows, "rows": rows})


def _reference_json(task):
    return [write("out.csv", _csv([task.hidden["cols"]] + task.hidden["rows"]))]


def _probes_json(task):
    h = task.hidden
    return {"copy_json": [shell("cp data/records.json out.csv")],
            "header_only": [write("out.csv", ",".join(h["cols"]) + "\n")],
            "rows_without_header": [write("out.csv", _csv(h["rows"]))]}


ID_JSON = "terminal.json_to_csv-v1"
register_domain(TreeDomain(ID_JSON, _build_json, _reference_json, _probes_json, verifier=_verify_json,
                           description=JSON_DOC))


# -------------------- csv_merge
MERGE_DOC = """Merge CSV files with the header once: ``terminal.csv_merge-v1``.

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

REGIONS = ["north", "south", "east", "west", "central", "coast"]
HEADER = "id,item,qty"


def _build_merge(rng: random.Random, d: int):
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
    return tree_task(ID_MERGE, d, text + ". Leave parts/ unchanged.", files, preds,
                     hidden={"lines": lines})


def _verify_merge(env, trajectory):
    want, got = env.task.hidden["lines"], text_of(env, "merged.csv")
    have = _norm_lines(got or "")
    header_ok = float(bool(have) and have[0] == want[0] and have.count(want[0]) == 1)
    rows = graded_lines("\n".join(have[1:]), want[1:]) if header_ok else 0.0
    extra = {"rows": rows, "exact": float(have == want)}
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), ID_MERGE, extra=extra)


def _reference_merge(task):
    return [write_lines("merged.csv", task.hidden["lines"])]


def _probes_merge(task):
    return {"cat_all": [shell("cat parts/*.csv > merged.csv")],
            "rows_no_header": [shell("for f in parts/*.csv; do tail -n +2 $f; echo; done | grep . > merged.csv")],
            "header_only": [shell("head -1 parts/$(ls parts | head -1) > merged.csv")]}


ID_MERGE = "terminal.csv_merge-v1"
register_domain(TreeDomain(ID_MERGE, _build_merge, _reference_merge, _probes_merge, verifier=_verify_merge,
                           description=MERGE_DOC))


# -------------------- split
SPLIT_DOC = """Split a large file into chunks: ``terminal.split_file-v1``.

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

def _name(d: int, i: int) -> str:
    return [f"parts/part_{i:02d}", f"parts/chunk_{i + 1}.csv", f"parts/chunk_{i + 1:03d}.csv"][d - 1]


def _chunks(lines: list[str], header: str | None, k: int) -> list[str]:
    out = []
    for i in range(0, len(lines), k):
        out.append("".join(([header] if header else []) + lines[i:i + k]))
    return out


def _build_split(rng: random.Random, d: int):
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
    return tree_task(ID_SPLIT, d, ask + " (the last chunk may be shorter). Keep data/big.txt.",
                     {"data/big.txt": big}, preds,
                     hidden={"chunks": dict(zip(names, chunks)), "index": index, "k": k})


def _reference_split(task):
    acts = [write(p, c) for p, c in task.hidden["chunks"].items()]
    return acts + ([write("parts/INDEX", task.hidden["index"])] if task.difficulty >= 3 else [])


def _probes_split(task):
    k = task.hidden["k"]
    no_header = {} if task.difficulty < 2 else {
        "no_header": [shell(f"mkdir -p parts && split -l {k} -d data/big.txt parts/part_ && "
                            "for f in parts/part_*; do n=${f#parts/part_}; n=$((1${n} - 99)); "
                            "cp $f parts/chunk_$n.csv; cp $f parts/chunk_00$n.csv; done")]}
    return {**no_header, "off_by_one": [shell(f"mkdir -p parts && split -l {k + 1} -d data/big.txt parts/part_")],
            "one_chunk": [shell("mkdir -p parts && for p in part_00 chunk_1.csv chunk_001.csv; do cp data/big.txt parts/$p; done")]}


ID_SPLIT = "terminal.split_file-v1"
register_domain(TreeDomain(ID_SPLIT, _build_split, _reference_split, _probes_split, description=SPLIT_DOC))


# -------------------- line_endings
EOL_DOC = """Fix line endings: ``terminal.line_endings-v1`` (CRLF → LF, selectively).

Trains: ``sed -i 's/\r$//'``/``tr -d '\r'`` over a chosen set of files, and looking at bytes
(``file``, ``od -c``, ``grep -l $'\r'``). ``repo/`` holds text files with Windows line
endings; every ``*.sh``, ``*.py`` and ``*.txt`` file must end up with LF endings while
``*.bat`` files keep CRLF. Difficulty 2 also strips trailing spaces and tabs on each line of
the converted files; difficulty 3 adds files that mix both endings and files missing a final
newline (which must get one).

Reward: one exact-bytes ``file`` predicate per file to convert (``lines`` mode would hide
the ``\r``), guarded by the ``.bat`` files and the files already right left unchanged.

Converting only some of the files earns partial credit (one predicate per file).

Probes (≤ 0.05): ``convert_everything`` (``.bat`` converted too: a guard fails),
``delete_cr_everywhere_but_keep_bat`` (``.bat`` files deleted and rewritten empty), plus the
terminal and generic probes.
"""

WORDS = ["echo", "set", "path", "value", "run", "build", "clean", "start"]


def _text(rng, d: int, crlf: bool) -> str:
    lines = [" ".join(rng.sample(WORDS, 3)) + (rng.choice(["", "  ", "\t"]) if d >= 2 else "")
             for _ in range(rng.randint(3, 6))]
    if d >= 3 and crlf:
        ends = [rng.choice(["\r\n", "\n"]) for _ in lines]
        ends[0] = "\r\n"
        text = "".join(ln + e for ln, e in zip(lines, ends))
        return text[:-len(ends[-1])] if rng.random() < 0.4 else text
    return "".join(ln + ("\r\n" if crlf else "\n") for ln in lines)


def _fix(text: str, d: int) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if d >= 2:
        lines = [re.sub(r"[ \t]+$", "", ln) for ln in lines]
    return "\n".join(lines) + "\n"


def _build_eol(rng: random.Random, d: int):
    files, targets = {}, {}
    for name in rng.sample(["setup", "deploy", "notes", "tool", "readme", "helper"], 3 + d):
        ext = rng.choice(["sh", "py", "txt"])
        path = f"repo/{rng.choice(['', 'scripts/'])}{name}.{ext}"
        files[path] = _text(rng, d, True)
        targets[path] = _fix(files[path], d)
    for name in rng.sample(["build", "install"], 2):
        files[f"repo/{name}.bat"] = _text(random.Random(rng.random()), 1, True)
    files["repo/ok.txt"] = "already unix\n"
    preds = [{"op": "file", "path": p, "content": c} for p, c in targets.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in targets]
    text = ("Convert every *.sh, *.py and *.txt file under repo/ to Unix line endings (LF); *.bat files must keep "
            "their Windows (CRLF) endings")
    if d >= 2:
        text += "; in the converted files also strip trailing spaces and tabs from every line"
    if d >= 3:
        text += "; every converted file must end with exactly one newline"
    return tree_task(ID_EOL, d, text + ". Change nothing else.", files, preds, hidden={"targets": targets})


def _reference_eol(task):
    return [write(p, c) for p, c in task.hidden["targets"].items()]


def _probes_eol(task):
    return {"convert_everything": [shell("find repo -type f -exec sed -i 's/\\r$//' {} +")],
            "delete_cr_everywhere_but_keep_bat": [shell("for f in repo/*.bat; do : > $f; done")]}


ID_EOL = "terminal.line_endings-v1"
register_domain(TreeDomain(ID_EOL, _build_eol, _reference_eol, _probes_eol, description=EOL_DOC))
