"""Fix a broken shell script: ``terminal.fix_script-v1``.

Trains: debugging a short POSIX shell pipeline by running it, reading errors and comparing
outputs. ``report.sh FILE N`` should print the N departments with the largest total amount
from ``FILE`` (CSV ``name,dept,amount``), as ``DEPT TOTAL`` lines, total descending then
name. The given script carries 1, 2 or 3 injected bugs (difficulty 1-3) drawn from: wrong
separator, wrong group field, ascending sort, ``head`` off by one, misspelled variable.

Reward: after the episode ``report.sh`` alone is copied into a fresh sandbox and run on three
*hidden* inputs (other data, other N); each case holds when it exits 0 and prints the
expected lines. The value is the fraction of cases that hold; the public example is not
scored, so hard-coding its output earns nothing.

Probes (≤ 0.05): ``hardcode_public`` (the shown output echoed), ``exit_zero``,
``unchanged`` (the broken script kept), plus the terminal and generic probes.
"""

from __future__ import annotations

import random
from collections import Counter

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import _norm_lines

from posttrain.envs.tool_env import pool_lease

from ._kit import Score, TreeDomain, shell, text_of, tree_task, write

GOOD = ('#!/bin/sh\n# usage: sh report.sh FILE N\nfile="$1"\nn="$2"\n'
        "awk -F, '{ t[$2] += $3 } END { for (d in t) print d, t[d] }' \"$file\" | sort -k2,2nr -k1,1 | "
        'head -n "$n"\n')
BUGS = {"separator": ("-F,", "-F';'"), "field": ("t[$2] += $3", "t[$1] += $3"),
        "sort": ("-k2,2nr", "-k2,2n"), "head": ('head -n "$n"', 'head -n "$((n - 1))"'),
        "variable": ('"$file" |', '"$fiel" |')}
DEPTS = ["ops", "hr", "eng", "sales", "legal", "it", "pr"]
PEOPLE = ["ann", "bob", "cid", "dan", "eva", "fox", "gus", "hal", "ivy"]


def _case(rng) -> tuple[str, int, str]:
    while True:
        rows = [(rng.choice(PEOPLE), rng.choice(DEPTS), rng.randint(1, 500)) for _ in range(rng.randint(6, 12))]
        tot = Counter()
        for _, dpt, a in rows:
            tot[dpt] += a
        if len(tot) >= 3 and len(set(tot.values())) == len(tot):
            break
    n = rng.randint(2, len(tot) - 1)
    top = sorted(tot.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return "".join(f"{p},{dpt},{a}\n" for p, dpt, a in rows), n, "".join(f"{k} {v}\n" for k, v in top)


def _build(rng: random.Random, d: int):
    bugs = rng.sample(sorted(BUGS), d)
    broken = GOOD
    for b in bugs:
        broken = broken.replace(*BUGS[b])
    data, n, out = _case(rng)
    cases = [list(_case(rng)) for _ in range(3)]
    text = ("report.sh is broken. Fix it so that 'sh report.sh FILE N' prints the N departments with the largest "
            "total amount in FILE (CSV rows name,dept,amount, no header), one 'DEPT TOTAL' line each, total "
            f"descending then name. For example 'sh report.sh data.csv {n}' must print:\n{out}"
            "It will be run on other files and other N.")
    return tree_task(DOMAIN_ID, d, text, {"report.sh": broken, "data.csv": data}, [],
                     hidden={"cases": cases, "shown": out, "bugs": bugs})


def _verify(env, trajectory) -> Score:
    script, cases = text_of(env, "report.sh"), env.task.hidden["cases"]
    ok = [0.0] * len(cases)
    if script:
        with pool_lease()() as sb:  # a fresh sandbox: only the script and the hidden inputs
            sb.write_file("report.sh", script)
            for i, (data, n, want) in enumerate(cases):
                sb.write_file(f"in{i}.csv", data)
                res = sb.exec(["sh", "report.sh", f"in{i}.csv", str(n)], timeout=5, cpu_time=5)
                ok[i] = float(res.exit_code == 0 and _norm_lines(res.stdout) == _norm_lines(want))
    return Score(sum(ok) / len(ok), components={f"case{i}": (v, 1.0) for i, v in enumerate(ok)},
                 passed=int(sum(ok)), total=len(ok), reason=f"{int(sum(ok))}/{len(ok)} hidden inputs",
                 verifier_version=DOMAIN_ID)


def _reference(task):
    return [shell("sh report.sh data.csv 2"), write("report.sh", GOOD)]


def _probes(task):
    return {"hardcode_public": [write("report.sh", f"cat <<'EOF'\n{task.hidden['shown']}EOF\n")],
            "exit_zero": [write("report.sh", "exit 0\n")],
            "unchanged": [shell("sh report.sh data.csv 3")]}


DOMAIN_ID = "terminal.fix_script-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
