"""Data pipelines built in stages: each stage a script, checked on hidden data.

Domains (each one's description is its ``*_DOC`` text below): ``pipeline``, ``join_pipeline``.
"""

from __future__ import annotations

import json
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import pool_lease

from ._kit import LongDomain, done, files_task, in_fresh, lines_equal, read_text, shell, stage_env, write


# -------------------- pipeline
DATA_DOC = """A data pipeline built in stages: ``long_horizon.data_pipeline-v1``.

Trains: building and debugging a multi-step program over several turns. ``raw.csv`` holds
``id,category,amount`` rows, some invalid (missing fields, non-integer amounts; from
difficulty 3 also negative amounts and blank lines). Stage scripts, each run as
``python3 NAME.py`` in the working directory:

1. ``clean.py``: raw.csv → clean.csv (header ``id,category,amount`` + valid rows, in order);
2. ``aggregate.py``: clean.csv → totals.csv (``category,total`` per category, by name);
3. (difficulty ≥ 2) ``report.py``: totals.csv → report.txt (``TOP <category> <total>`` for the
   largest total, ties by name, then ``CATEGORIES <n>``).

Process rewards (checkpoints): a stage's script exists and its output file, for the given
raw.csv, is right — 1/stages the first time each holds.

Outcome (independent of the checkpoints): the stage scripts alone are copied into a fresh
sandbox and run on a *hidden* raw.csv, each stage fed the correct output of the previous one;
the value is the fraction of stages whose output is exactly right. Writing the output files
by hand reaches the checkpoints but earns no outcome reward.

Probes (≤ 0.05): ``hand_written_outputs`` (the right output files, no scripts),
``copy_scripts`` (each script copies its input to its output), ``exit_zero`` (scripts that
only ``raise SystemExit(0)``), plus the generic probes.
"""

CATS = ["books", "food", "games", "music", "tools", "toys", "garden"]
DATA_STAGES = [("clean.py", "raw.csv", "clean.csv"), ("aggregate.py", "clean.csv", "totals.csv"),
          ("report.py", "totals.csv", "report.txt")]
DATA_REFERENCE = {
    "clean.py": ("rows = ['id,category,amount']\nfor line in open('raw.csv').read().splitlines()[1:]:\n"
                 "    f = line.split(',')\n    if len(f) != 3 or not f[0] or not f[1]:\n        continue\n"
                 "    try:\n        a = int(f[2])\n    except ValueError:\n        continue\n"
                 "    if a < 0 or str(a) != f[2]:\n        continue\n    rows.append(line)\n"
                 "open('clean.csv', 'w').write('\\n'.join(rows) + '\\n')\n"),
    "aggregate.py": ("t = {}\nfor line in open('clean.csv').read().splitlines()[1:]:\n"
                     "    i, c, a = line.split(',')\n    t[c] = t.get(c, 0) + int(a)\n"
                     "out = ['category,total'] + [f'{c},{t[c]}' for c in sorted(t)]\n"
                     "open('totals.csv', 'w').write('\\n'.join(out) + '\\n')\n"),
    "report.py": ("t = [l.split(',') for l in open('totals.csv').read().splitlines()[1:]]\n"
                  "c, v = min(t, key=lambda r: (-int(r[1]), r[0]))\n"
                  "open('report.txt', 'w').write(f'TOP {c} {v}\\nCATEGORIES {len(t)}\\n')\n"),
}


def _raw(rng: random.Random, difficulty: int) -> str:
    lines = ["id,category,amount"]
    for i in range(rng.randint(10, 14 + 4 * difficulty)):
        r = rng.random()
        cat, amt = rng.choice(CATS[:3 + difficulty]), str(rng.randint(1, 500))
        if r < 0.1:
            lines.append(f"{i},{cat}")
        elif r < 0.2:
            lines.append(f"{i},{cat},{amt}.5")
        elif r < 0.27:
            lines.append(f"{i},{cat},n/a")
        elif difficulty >= 3 and r < 0.35:
            lines.append(f"{i},{cat},-{amt}")
        elif difficulty >= 3 and r < 0.4:
            lines.append("")
        else:
            lines.append(f"{i},{cat},{amt}")
    return "\n".join(lines) + "\n"


def expected_outputs(raw: str) -> dict[str, str]:
    """The right output of every stage for ``raw`` (our reference, run on the host in-process)."""
    rows = ["id,category,amount"]
    for line in raw.splitlines()[1:]:
        f = line.split(",")
        if len(f) == 3 and f[0] and f[1] and f[2].isdigit() and str(int(f[2])) == f[2]:
            rows.append(line)
    totals: dict[str, int] = {}
    for line in rows[1:]:
        _, c, a = line.split(",")
        totals[c] = totals.get(c, 0) + int(a)
    tot = ["category,total"] + [f"{c},{totals[c]}" for c in sorted(totals)]
    top = min(totals, key=lambda c: (-totals[c], c))
    return {"clean.csv": "\n".join(rows) + "\n", "totals.csv": "\n".join(tot) + "\n",
            "report.txt": f"TOP {top} {totals[top]}\nCATEGORIES {len(totals)}\n"}


def _same(a: str | None, b: str) -> bool:
    return a is not None and a.rstrip("\n").splitlines() == b.rstrip("\n").splitlines()


ID_DATA = "long_horizon.data_pipeline-v1"


def _build_data(rng: random.Random, difficulty: int) -> Task:
    raw = _raw(rng, difficulty)
    hidden_raw = _raw(rng, difficulty)
    stages = DATA_STAGES[:2] if difficulty == 1 else DATA_STAGES
    spec = "\n".join(f"{i + 1}. {s}: reads {a}, writes {b}" for i, (s, a, b) in enumerate(stages))
    text = ("Build a data pipeline in stages, each a Python script run as 'python3 NAME.py':\n"
            f"{spec}\nraw.csv has rows id,category,amount; keep a row only when it has 3 fields, "
            "non-empty id and category, and amount is a non-negative integer written plainly. "
            "clean.csv keeps the header and valid rows in order; totals.csv is 'category,total' per "
            "category sorted by name, with a header; report.txt is 'TOP <category> <total>' (largest "
            "total, ties by name) then 'CATEGORIES <count>'.")
    return files_task(ID_DATA, difficulty, text, {"raw.csv": raw},
                      {"stages": [list(s) for s in stages], "expected": expected_outputs(raw),
                       "hidden_raw": hidden_raw, "hidden_expected": expected_outputs(hidden_raw)})


def _env_data(task: Task):
    exp = task.hidden["expected"]
    checks = [(script, lambda env, s=script, o=out: read_text(env, s) is not None
               and _same(read_text(env, o), exp[o])) for script, _, out in task.hidden["stages"]]
    return stage_env(task, _verify_data, checks)


def _verify_data(env, trajectory) -> Score:
    stages = env.task.hidden["stages"]
    scripts = {s: read_text(env, s) for s, _, _ in stages} if env.sandbox_opened else {}
    hexp = {**env.task.hidden["hidden_expected"], "raw.csv": env.task.hidden["hidden_raw"]}
    ok = []
    with pool_lease()() as sb:
        for script, inp, out in stages:
            if not scripts.get(script):
                ok.append(0.0)
                continue
            sb.write_file(script, scripts[script])
            sb.write_file(inp, hexp[inp])
            res = sb.exec(["python3", "-E", "-s", script], timeout=10, cpu_time=10)
            try:
                got = sb.read_file(out, max_bytes=1 << 20).decode("utf-8", "replace")
            except Exception:
                got = None
            ok.append(float(res.exit_code == 0 and _same(got, hexp[out])))
    comps = {f"stage{i + 1}": (v, 1.0) for i, v in enumerate(ok)}
    comps["checkpoints"] = (sum(env.checkpoints.values()), 0.0)
    return Score(sum(ok) / len(ok), components=comps, passed=int(sum(ok)), total=len(ok),
                 reason=f"{int(sum(ok))}/{len(ok)} stages right on hidden data",
                 verifier_version=env.task.domain)


def _reference_data(task: Task) -> list[str]:
    acts = []
    for script, _, _ in task.hidden["stages"]:
        acts += [write(script, DATA_REFERENCE[script]), shell(f"python3 {script}")]
    return acts + [done()]


def _probes_data(task: Task) -> dict:
    st, exp = task.hidden["stages"], task.hidden["expected"]
    return {
        "hand_written_outputs": [write(o, exp[o]) for _, _, o in st] + [done()],
        "copy_scripts": [write(s, f"open('{o}', 'w').write(open('{i}').read())\n") for s, i, o in st] + [done()],
        "exit_zero": [write(s, "raise SystemExit(0)\n") for s, _, _ in st] + [done()],
    }


register_domain(LongDomain(ID_DATA, _build_data, _env_data, _reference_data, _probes_data,
                           description=DATA_DOC))


# -------------------- join_pipeline
JOIN_DOC = """A join pipeline built in stages: ``long_horizon.join_pipeline-v1``.

Trains: building a multi-script data flow over two sources across several turns — parsing
JSON Lines with bad records, joining with a CSV, grouping. Stage scripts, each run as
``python3 NAME.py`` in the working directory:

1. ``ingest.py``: ``orders.jsonl`` → ``orders.csv`` (header ``order_id,customer_id,cents``;
   lines that are not JSON objects with an integer ``order_id``, a string ``customer`` and a
   number ``total`` are skipped; ``cents`` = round(total × 100));
2. ``join.py``: ``orders.csv`` + ``customers.csv`` (``customer_id,name,country``) →
   ``joined.csv`` (header ``order_id,country,cents``; orders of unknown customers dropped;
   order_id ascending);
3. (difficulty ≥ 2) ``by_country.py``: ``joined.csv`` → ``countries.csv`` (header
   ``country,orders,cents``; cents descending, then country).
Difficulty 3 adds duplicate order ids in the JSON (keep the first) and blank lines.

Process rewards (checkpoints): a stage's script exists and its output, for the given data,
is right — the first time (files read only).

Outcome (independent): the scripts alone are copied into a fresh sandbox and run on *hidden*
sources, each stage fed the right output of the previous one; the value is the fraction of
stages whose output is exactly right. Hand-written outputs reach checkpoints, not the outcome.

Probes (≤ 0.05): ``hand_written_outputs``, ``copy_scripts`` (each script copies its input),
``exit_zero``, plus the generic probes.
"""

ID_JOIN = "long_horizon.join_pipeline-v1"
COUNTRIES = ["DE", "FR", "JP", "BR", "CA", "IN", "NZ"]
JOIN_STAGES = [("ingest.py", ["orders.jsonl"], "orders.csv"), ("join.py", ["orders.csv", "customers.csv"], "joined.csv"),
          ("by_country.py", ["joined.csv"], "countries.csv")]
JOIN_REFERENCE = {
    "ingest.py": ("import json\nrows, seen = ['order_id,customer_id,cents'], set()\n"
                  "for line in open('orders.jsonl'):\n    try:\n        r = json.loads(line)\n    except ValueError:\n"
                  "        continue\n    if not isinstance(r, dict):\n        continue\n"
                  "    o, c, t = r.get('order_id'), r.get('customer'), r.get('total')\n"
                  "    if type(o) is not int or not isinstance(c, str) or type(t) not in (int, float) or o in seen:\n"
                  "        continue\n    seen.add(o)\n    rows.append(f'{o},{c},{round(t * 100)}')\n"
                  "open('orders.csv', 'w').write('\\n'.join(rows) + '\\n')\n"),
    "join.py": ("cust = {}\nfor line in open('customers.csv').read().splitlines()[1:]:\n    i, n, c = line.split(',')\n"
                "    cust[i] = c\nrows = []\nfor line in open('orders.csv').read().splitlines()[1:]:\n"
                "    o, c, cents = line.split(',')\n    if c in cust:\n        rows.append((int(o), cust[c], cents))\n"
                "out = ['order_id,country,cents'] + [f'{o},{c},{v}' for o, c, v in sorted(rows)]\n"
                "open('joined.csv', 'w').write('\\n'.join(out) + '\\n')\n"),
    "by_country.py": ("t = {}\nfor line in open('joined.csv').read().splitlines()[1:]:\n    o, c, v = line.split(',')\n"
                      "    n, s = t.get(c, (0, 0))\n    t[c] = (n + 1, s + int(v))\n"
                      "out = ['country,orders,cents'] + [f'{c},{n},{s}' for c, (n, s) in sorted(t.items(), key=lambda kv: (-kv[1][1], kv[0]))]\n"
                      "open('countries.csv', 'w').write('\\n'.join(out) + '\\n')\n"),
}


def _sources(rng: random.Random, d: int) -> dict[str, str]:
    ids = [f"C{n}" for n in rng.sample(range(10, 99), 5)]
    cust = "customer_id,name,country\n" + "".join(f"{c},n{c},{rng.choice(COUNTRIES[:3 + d])}\n" for c in ids[:4])
    lines, used = [], []
    for o in rng.sample(range(1000, 9999), rng.randint(8, 10 + 3 * d)):
        r = rng.random()
        rec = {"order_id": o, "customer": rng.choice(ids), "total": round(rng.randint(100, 99999) / 100, 2)}
        if r < 0.1:
            lines.append("{not json")
        elif r < 0.18:
            lines.append(json.dumps({**rec, "order_id": str(o)}))
        elif r < 0.24:
            lines.append(json.dumps({k: v for k, v in rec.items() if k != "total"}))
        else:
            lines.append(json.dumps(rec))
            used.append(rec)
        if d >= 3 and used and rng.random() < 0.15:
            lines.append(json.dumps({**used[-1], "total": 1.0}))
        if d >= 3 and rng.random() < 0.1:
            lines.append("")
    return {"orders.jsonl": "\n".join(lines) + "\n", "customers.csv": cust}


def expected(src: dict[str, str]) -> dict[str, str]:
    """Every stage's right output for ``src`` (our reference, run on the host in-process)."""
    rows, seen = ["order_id,customer_id,cents"], set()
    for line in src["orders.jsonl"].splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not isinstance(r, dict):
            continue
        o, c, t = r.get("order_id"), r.get("customer"), r.get("total")
        if type(o) is not int or not isinstance(c, str) or type(t) not in (int, float) or o in seen:
            continue
        seen.add(o)
        rows.append(f"{o},{c},{round(t * 100)}")
    cust = dict(ln.split(",")[::2] for ln in src["customers.csv"].splitlines()[1:])
    joined = sorted((int(o), cust[c], int(v)) for o, c, v in (r.split(",") for r in rows[1:]) if c in cust)
    tot: dict[str, list[int]] = {}
    for _, c, v in joined:
        tot.setdefault(c, [0, 0])
        tot[c][0] += 1
        tot[c][1] += v
    by = sorted(tot.items(), key=lambda kv: (-kv[1][1], kv[0]))
    return {"orders.csv": "\n".join(rows) + "\n",
            "joined.csv": "\n".join(["order_id,country,cents"] + [f"{o},{c},{v}" for o, c, v in joined]) + "\n",
            "countries.csv": "\n".join(["country,orders,cents"] + [f"{c},{n},{s}" for c, (n, s) in by]) + "\n"}


def _build_join(rng: random.Random, d: int):
    src, hid = _sources(rng, d), _sources(rng, d)
    stages = JOIN_STAGES[:2] if d == 1 else JOIN_STAGES
    spec = "\n".join(f"{i + 1}. {s}: reads {', '.join(a)}, writes {b}" for i, (s, a, b) in enumerate(stages))
    text = ("Build a pipeline of Python scripts, each run as 'python3 NAME.py':\n" + spec + "\norders.csv: header "
            "order_id,customer_id,cents; keep only JSON-object lines with an integer order_id, a string customer and a "
            "numeric total (cents = round(total * 100))" + ("; keep only the first line of a repeated order_id" if d >= 3 else "")
            + ". joined.csv: header order_id,country,cents, orders of known customers only, order_id ascending. "
            "countries.csv: header country,orders,cents, cents descending then country.")
    return files_task(ID_JOIN, d, text, src, {"stages": [[s, a, b] for s, a, b in stages], "expected": expected(src),
                                                "hidden_src": hid, "hidden_expected": expected(hid)})


def _verify_join(env, trajectory) -> Score:
    h = env.task.hidden
    scripts = {s: read_text(env, s) if env.sandbox_opened else None for s, _, _ in h["stages"]}
    ok = [0.0] * len(h["stages"])
    if any(scripts.values()):
        known = {**h["hidden_src"], **h["hidden_expected"]}
        files = {s: t for s, t in scripts.items() if t}
        for k, (s, ins, _) in enumerate(h["stages"]):
            files.update({f"s{k}/{i}": known[i] for i in ins})
            if scripts[s]:
                files[f"s{k}/{s}"] = scripts[s]
        cmds = [f"cd s{k} && python3 -E -s {s}" for k, (s, _, _) in enumerate(h["stages"])]

        def outputs(sb):
            got = []
            for k, (_, _, o) in enumerate(h["stages"]):
                try:
                    got.append(sb.read_file(f"s{k}/{o}", max_bytes=1 << 20).decode("utf-8", "replace"))
                except Exception:  # not written, or not a regular file
                    got.append(None)
            return got
        res, got = in_fresh(files, cmds, after=outputs)
        ok = [float(bool(scripts[s]) and r.exit_code == 0 and lines_equal(g, known[o]))
              for (s, _, o), r, g in zip(h["stages"], res, got)]
    comps = {f"stage{i + 1}": (v, 1.0) for i, v in enumerate(ok)}
    comps["checkpoints"] = (sum(env.checkpoints.values()), 0.0)
    return Score(sum(ok) / len(ok), components=comps, passed=int(sum(ok)), total=len(ok),
                 reason=f"{int(sum(ok))}/{len(ok)} stages right on hidden data", verifier_version=ID_JOIN)


def _env_join(task):
    exp = task.hidden["expected"]
    checks = [(s, lambda env, s=s, o=o: read_text(env, s) is not None and lines_equal(read_text(env, o), exp[o]))
              for s, _, o in task.hidden["stages"]]
    return stage_env(task, _verify_join, checks)


def _reference_join(task) -> list[str]:
    acts = []
    for s, _, _ in task.hidden["stages"]:
        acts += [write(s, JOIN_REFERENCE[s]), shell(f"python3 {s}")]
    return acts + [done()]


def _probes_join(task) -> dict:
    st, exp = task.hidden["stages"], task.hidden["expected"]
    return {"hand_written_outputs": [write(o, exp[o]) for _, _, o in st] + [done()],
            "copy_scripts": [write(s, f"open('{o}', 'w').write(open('{i[0]}').read())\n") for s, i, o in st] + [done()],
            "exit_zero": [write(s, "raise SystemExit(0)\n") for s, _, _ in st] + [done()]}


register_domain(LongDomain(ID_JOIN, _build_join, _env_join, _reference_join, _probes_join,
                           description=JOIN_DOC))
