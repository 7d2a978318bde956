"""Writing and fixing shell scripts and Makefiles whose output is checked.

Domains (each one's description is its ``*_DOC`` text below): ``script``, ``fix_script``, ``makefile``.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import ToolEnv, pool_lease
from posttrain.verifiers.fs_state import _norm_lines

from ._kit import TreeDomain, done, files_task, fresh_run, read, shell, text_of, tree_task, write


# -------------------- script
SCRIPT_DOC = """Write a script that produces an output: ``terminal.script-v1``.

Trains: writing a small POSIX shell script (awk, sort, uniq...) that turns ``input.txt`` into
a required output. The task shows one input (in the tree) and its expected output; the
policy writes ``run.sh`` (run as ``sh run.sh`` in the directory holding ``input.txt``).
Difficulty 1: sum of the numbers (one per line); 2: the distinct words, sorted, one per line;
3: ``name,score`` CSV rows → ``name max`` per name, sorted by name.

Reward: after the episode, ``run.sh`` alone is copied into a *fresh* sandbox and run on
three hidden inputs; each case holds when the exit code is 0 and stdout equals the expected
output (trailing whitespace ignored). The value is the fraction of cases that hold — the
public example is not scored, so hard-coding it earns nothing.

Probes (≤ 0.05): ``hardcode_public`` (echo the shown output), ``cat_input``, ``exit_zero``
(an empty script that exits 0), plus the terminal and generic probes.
"""

SCRIPT_WORDS = ["apple", "pear", "fig", "kiwi", "plum", "lime", "date", "peach", "grape", "melon"]
SCRIPT_REFERENCE = {
    1: "awk '{ s += $1 } END { print s + 0 }' input.txt\n",
    2: "tr -s ' \\t' '\\n\\n' < input.txt | grep -v '^$' | sort -u\n",
    3: "awk -F, '{ if (!($1 in m) || $2 > m[$1]) m[$1] = $2 } END { for (k in m) print k, m[k] }' input.txt | sort\n",
}
ASK = {1: "print the sum of the integers in input.txt (one per line)",
       2: "print the distinct words of input.txt (separated by spaces or newlines), sorted, one per line",
       3: "input.txt has rows name,score; print 'name max' with each name's highest score, sorted by name"}


def _case_script(rng: random.Random, d: int) -> tuple[str, str]:
    if d == 1:
        xs = [rng.randint(-50, 500) for _ in range(rng.randint(3, 9))]
        return "".join(f"{x}\n" for x in xs), f"{sum(xs)}\n"
    if d == 2:
        ws = [rng.choice(SCRIPT_WORDS) for _ in range(rng.randint(4, 12))]
        rows = [" ".join(ws[i:i + 3]) for i in range(0, len(ws), 3)]
        return "\n".join(rows) + "\n", "".join(f"{w}\n" for w in sorted(set(ws)))
    best: dict[str, int] = defaultdict(lambda: -1)
    rows = []
    for _ in range(rng.randint(4, 10)):
        n, s = rng.choice(SCRIPT_WORDS[:5]), rng.randint(0, 99)
        rows.append(f"{n},{s}")
        best[n] = max(best[n], s)
    return "\n".join(rows) + "\n", "".join(f"{n} {best[n]}\n" for n in sorted(best))


def run_cases(script: str, cases: list[list[str]]) -> list[float]:
    """1.0 per hidden case where ``sh run.sh`` exits 0 with the expected stdout (fresh sandbox)."""
    out = []
    with pool_lease()() as sb:
        sb.write_file("run.sh", script)
        for inp, want in cases:
            sb.write_file("input.txt", inp)
            res = sb.exec(["sh", "run.sh"], timeout=5, cpu_time=5)
            out.append(float(res.exit_code == 0 and _norm_lines(res.stdout) == _norm_lines(want)))
    return out


ID_SCRIPT = "terminal.script-v1"


def _build_script(rng: random.Random, difficulty: int) -> Task:
    shown, shown_out = _case_script(rng, difficulty)
    cases = []
    while len(cases) < 3:
        c = _case_script(rng, difficulty)
        if c[0] != shown and c[1] != shown_out and list(c) not in cases:
            cases.append(list(c))
    text = (f"Write run.sh, a POSIX shell script run as 'sh run.sh' next to input.txt, that "
            f"should {ASK[difficulty]}. For the input.txt given, the output must be:\n{shown_out}"
            "It will also be run on other inputs.")
    return files_task(ID_SCRIPT, difficulty, text, {"input.txt": shown}, [],
                      hidden={"cases": cases, "shown_output": shown_out})


def _verify_script(env: ToolEnv, trajectory) -> Score:
    raw = read(env, "run.sh", max_bytes=1 << 16)
    script = None if raw is None else raw.decode("utf-8", "replace")
    n = len(env.task.hidden["cases"])
    if not script:
        return Score(0.0, components={f"case{i}": (0.0, 1.0) for i in range(n)}, passed=0,
                     total=n, reason="no run.sh", verifier_version=env.task.domain)
    ok = run_cases(script, env.task.hidden["cases"])
    return Score(sum(ok) / n, components={f"case{i}": (v, 1.0) for i, v in enumerate(ok)},
                 passed=int(sum(ok)), total=n, reason=f"{int(sum(ok))}/{n} hidden inputs",
                 verifier_version=env.task.domain)


def _reference_script(task: Task) -> list[str]:
    return [write("run.sh", SCRIPT_REFERENCE[task.difficulty])]


def _probes_script(task: Task) -> dict[str, list[str]]:
    shown = task.hidden["shown_output"]
    return {"hardcode_public": [write("run.sh", f"cat <<'EOF'\n{shown}EOF\n"), done()],
            "cat_input": [write("run.sh", "cat input.txt\n"), done()],
            "exit_zero": [write("run.sh", "exit 0\n"), done()]}


# no predicate names a path, so the family's touch_expected probe has nothing to touch
register_domain(TreeDomain(ID_SCRIPT, _build_script, _reference_script, _probes_script, verifier=_verify_script,
                           skip_common=("touch_expected",), description=SCRIPT_DOC))


# -------------------- fix_script
FIX_DOC = """Fix a broken shell script: ``terminal.fix_script-v1``.

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

GOOD = ('#!/bin/sh\n# usage: sh report.sh FILE N\nfile="$1"\nn="$2"\n'
        "awk -F, '{ t[$2] += $3 } END { for (d in t) print d, t[d] }' \"$file\" | sort -k2,2nr -k1,1 | "
        'head -n "$n"\n')
BUGS = {"separator": ("-F,", "-F';'"), "field": ("t[$2] += $3", "t[$1] += $3"),
        "sort": ("-k2,2nr", "-k2,2n"), "head": ('head -n "$n"', 'head -n "$((n - 1))"'),
        "variable": ('"$file" |', '"$fiel" |')}
DEPTS = ["ops", "hr", "eng", "sales", "legal", "it", "pr"]
PEOPLE = ["ann", "bob", "cid", "dan", "eva", "fox", "gus", "hal", "ivy"]


def _case_fix(rng) -> tuple[str, int, str]:
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


def _build_fix(rng: random.Random, d: int):
    bugs = rng.sample(sorted(BUGS), d)
    broken = GOOD
    for b in bugs:
        broken = broken.replace(*BUGS[b])
    data, n, out = _case_fix(rng)
    cases = [list(_case_fix(rng)) for _ in range(3)]
    text = ("report.sh is broken. Fix it so that 'sh report.sh FILE N' prints the N departments with the largest "
            "total amount in FILE (CSV rows name,dept,amount, no header), one 'DEPT TOTAL' line each, total "
            f"descending then name. For example 'sh report.sh data.csv {n}' must print:\n{out}"
            "It will be run on other files and other N.")
    return tree_task(ID_FIX, d, text, {"report.sh": broken, "data.csv": data}, [],
                     hidden={"cases": cases, "shown": out, "bugs": bugs})


def _verify_fix(env, trajectory) -> Score:
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
                 verifier_version=ID_FIX)


def _reference_fix(task):
    return [shell("sh report.sh data.csv 2"), write("report.sh", GOOD)]


def _probes_fix(task):
    return {"hardcode_public": [write("report.sh", f"cat <<'EOF'\n{task.hidden['shown']}EOF\n")],
            "exit_zero": [write("report.sh", "exit 0\n")],
            "unchanged": [shell("sh report.sh data.csv 3")]}


ID_FIX = "terminal.fix_script-v1"
register_domain(TreeDomain(ID_FIX, _build_fix, _reference_fix, _probes_fix, verifier=_verify_fix,
                           description=FIX_DOC))


# -------------------- makefile
MAKE_DOC = """Write a Makefile whose ``make`` produces an artifact: ``terminal.makefile-v1``.

Trains: make rules, prerequisites, automatic variables, ``clean`` targets, recipes indented
by tabs. ``src/`` holds ``*.txt`` parts; the Makefile must build ``build/book.txt``, the
concatenation of ``src/*.txt`` in name order (difficulty 1). Difficulty 2 adds
``build/stats.txt`` (one line: the line count of book.txt) made by the default target too,
and ``make clean`` removing ``build/``; difficulty 3 requires the build to be incremental:
after a second ``make`` nothing is rebuilt, and after one source changes book.txt is rebuilt.

Reward: the policy's ``Makefile`` alone is copied with *hidden* sources (different names,
counts and texts: hard-coded output earns nothing) into a fresh sandbox; components
``build`` (``make`` exits 0, outputs right), ``clean`` (2+), ``incremental`` (3: book.txt's
nanosecond modification time unchanged by a second ``make``, and the output right again after a
source edit), each 0 unless ``build`` holds.

Probes (≤ 0.05): ``hardcoded_output`` (a Makefile echoing the public book), ``no_makefile``
(book built by hand), ``spaces_not_tabs``, plus the terminal and generic probes.
"""

MAKE_WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
MAKE_REFERENCE = ("SRC := $(sort $(wildcard src/*.txt))\n\nall: build/book.txt{stats}\n\n"
             "build/book.txt: $(SRC)\n\tmkdir -p build\n\tcat $(SRC) > $@\n\n{stats_rule}"
             "clean:\n\trm -rf build\n\n.PHONY: all clean\n")
STATS = "build/stats.txt: build/book.txt\n\twc -l < $< | tr -d ' ' > $@\n\n"


def _sources(rng) -> dict[str, str]:
    return {f"src/{i:02d}_{rng.choice(MAKE_WORDS)}.txt": "".join(f"{rng.choice(MAKE_WORDS)} {rng.randint(0, 99)}\n"
                                                         for _ in range(rng.randint(1, 3)))
            for i in rng.sample(range(1, 60), rng.randint(2, 4))}


def _build_make(rng: random.Random, d: int):
    files = _sources(rng)
    hidden_src = _sources(rng)
    text = ("Write a Makefile in /work whose default target builds build/book.txt: the concatenation of "
            "src/*.txt in file-name order (src/ may hold other .txt files when it is used)")
    if d >= 2:
        text += ("; the default target also builds build/stats.txt holding the number of lines of book.txt "
                 "(just the number); 'make clean' removes build/")
    if d >= 3:
        text += "; it must be incremental: a second make rebuilds nothing, and a changed source triggers a rebuild"
    return tree_task(ID_MAKE, d, text + ".", files, [], hidden={"sources": hidden_src})


def _expect(src: dict[str, str]) -> tuple[str, str]:
    book = "".join(src[k] for k in sorted(src))
    return book, f"{book.count(chr(10))}\n"


SCRIPT = r"""
check() { [ "$(cat build/book.txt 2>/dev/null)" = "$(cat .want_book)" ] && { [ ! -e .want_stats ] || [ "$(cat build/stats.txt 2>/dev/null)" = "$(cat .want_stats)" ]; }; }
make -s >/dev/null 2>&1 && check && echo BUILD
t1=$(find build/book.txt -printf %T@ 2>/dev/null); make -s >/dev/null 2>&1
t2=$(find build/book.txt -printf %T@ 2>/dev/null); [ -n "$t1" ] && [ "$t1" = "$t2" ] && echo SAME
f=$(ls src/*.txt | head -1); echo "extra line" >> "$f"; cat src/*.txt > .want_book
[ -e .want_stats ] && wc -l < .want_book | tr -d ' ' > .want_stats
make -s >/dev/null 2>&1 && check && echo REBUILT
make -s clean >/dev/null 2>&1 && [ ! -e build ] && echo CLEAN
"""


def _verify_make(env, trajectory) -> Score:
    d, mk = env.task.difficulty, text_of(env, "Makefile")
    names = ["build"] + (["clean"] if d >= 2 else []) + (["incremental"] if d >= 3 else [])
    if not mk:
        return Score(0.0, components={n: (0.0, 1.0) for n in names}, reason="no Makefile", verifier_version=ID_MAKE)
    src = env.task.hidden["sources"]
    book, stats = _expect(src)
    files = {"Makefile": mk, ".want_book": book, "check.sh": SCRIPT, **src}
    if d >= 2:
        files[".want_stats"] = stats
    res, _ = fresh_run(files, "sh check.sh", timeout=15)
    out = set(res.stdout.split())
    comps = {"build": float("BUILD" in out)}
    if d >= 2:
        comps["clean"] = float("CLEAN" in out) * comps["build"]
    if d >= 3:
        comps["incremental"] = float({"SAME", "REBUILT"} <= out) * comps["build"]
    v = sum(comps.values()) / len(comps)
    return Score(v, components={k: (x, 1.0) for k, x in comps.items()},
                 reason=", ".join(f"{k}={x:.0f}" for k, x in comps.items()), verifier_version=ID_MAKE)


def _reference_make(task):
    d = task.difficulty
    mk = MAKE_REFERENCE.format(stats=" build/stats.txt" if d >= 2 else "", stats_rule=STATS if d >= 2 else "")
    return [write("Makefile", mk), shell("make && ls build")]


def _probes_make(task):
    book = "".join(task.public["files"][k] for k in sorted(task.public["files"]))
    hard = "all:\n\tmkdir -p build\n\tprintf '%s' '" + book.replace("'", "") + "' > build/book.txt\n"
    ref = _reference_make(task)[0]
    return {"hardcoded_output": [write("Makefile", hard)],
            "no_makefile": [shell("mkdir -p build && cat src/*.txt > build/book.txt")],
            "spaces_not_tabs": [ref.replace("\\t", "    ")]}


ID_MAKE = "terminal.makefile-v1"
register_domain(TreeDomain(ID_MAKE, _build_make, _reference_make, _probes_make, verifier=_verify_make,
                           description=MAKE_DOC))
