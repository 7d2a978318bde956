"""A data pipeline built in stages: ``long_horizon.data_pipeline-v1``.

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

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import pool_lease

from ._kit import LongDomain, done, files_task, read_text, shell, stage_env, write

CATS = ["books", "food", "games", "music", "tools", "toys", "garden"]
STAGES = [("clean.py", "raw.csv", "clean.csv"), ("aggregate.py", "clean.csv", "totals.csv"),
          ("report.py", "totals.csv", "report.txt")]
REFERENCE = {
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


DOMAIN_ID = "long_horizon.data_pipeline-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    raw = _raw(rng, difficulty)
    hidden_raw = _raw(rng, difficulty)
    stages = STAGES[:2] if difficulty == 1 else STAGES
    spec = "\n".join(f"{i + 1}. {s}: reads {a}, writes {b}" for i, (s, a, b) in enumerate(stages))
    text = ("Build a data pipeline in stages, each a Python script run as 'python3 NAME.py':\n"
            f"{spec}\nraw.csv has rows id,category,amount; keep a row only when it has 3 fields, "
            "non-empty id and category, and amount is a non-negative integer written plainly. "
            "clean.csv keeps the header and valid rows in order; totals.csv is 'category,total' per "
            "category sorted by name, with a header; report.txt is 'TOP <category> <total>' (largest "
            "total, ties by name) then 'CATEGORIES <count>'.")
    return files_task(DOMAIN_ID, difficulty, text, {"raw.csv": raw},
                      {"stages": [list(s) for s in stages], "expected": expected_outputs(raw),
                       "hidden_raw": hidden_raw, "hidden_expected": expected_outputs(hidden_raw)})


def _env(task: Task):
    exp = task.hidden["expected"]
    checks = [(script, lambda env, s=script, o=out: read_text(env, s) is not None
               and _same(read_text(env, o), exp[o])) for script, _, out in task.hidden["stages"]]
    return stage_env(task, _verify, checks)


def _verify(env, trajectory) -> Score:
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


def _reference(task: Task) -> list[str]:
    acts = []
    for script, _, _ in task.hidden["stages"]:
        acts += [write(script, REFERENCE[script]), shell(f"python3 {script}")]
    return acts + [done()]


def _probes(task: Task) -> dict:
    st, exp = task.hidden["stages"], task.hidden["expected"]
    return {
        "hand_written_outputs": [write(o, exp[o]) for _, _, o in st] + [done()],
        "copy_scripts": [write(s, f"open('{o}', 'w').write(open('{i}').read())\n") for s, i, o in st] + [done()],
        "exit_zero": [write(s, "raise SystemExit(0)\n") for s, _, _ in st] + [done()],
    }


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
