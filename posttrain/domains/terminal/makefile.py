"""Write a Makefile whose ``make`` produces an artifact: ``terminal.makefile-v1``.

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

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import Score, TreeDomain, fresh_run, shell, text_of, tree_task, write

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
REFERENCE = ("SRC := $(sort $(wildcard src/*.txt))\n\nall: build/book.txt{stats}\n\n"
             "build/book.txt: $(SRC)\n\tmkdir -p build\n\tcat $(SRC) > $@\n\n{stats_rule}"
             "clean:\n\trm -rf build\n\n.PHONY: all clean\n")
STATS = "build/stats.txt: build/book.txt\n\twc -l < $< | tr -d ' ' > $@\n\n"


def _sources(rng) -> dict[str, str]:
    return {f"src/{i:02d}_{rng.choice(WORDS)}.txt": "".join(f"{rng.choice(WORDS)} {rng.randint(0, 99)}\n"
                                                         for _ in range(rng.randint(1, 3)))
            for i in rng.sample(range(1, 60), rng.randint(2, 4))}


def _build(rng: random.Random, d: int):
    files = _sources(rng)
    hidden_src = _sources(rng)
    text = ("Write a Makefile in /work whose default target builds build/book.txt: the concatenation of "
            "src/*.txt in file-name order (src/ may hold other .txt files when it is used)")
    if d >= 2:
        text += ("; the default target also builds build/stats.txt holding the number of lines of book.txt "
                 "(just the number); 'make clean' removes build/")
    if d >= 3:
        text += "; it must be incremental: a second make rebuilds nothing, and a changed source triggers a rebuild"
    return tree_task(DOMAIN_ID, d, text + ".", files, [], hidden={"sources": hidden_src})


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


def _verify(env, trajectory) -> Score:
    d, mk = env.task.difficulty, text_of(env, "Makefile")
    names = ["build"] + (["clean"] if d >= 2 else []) + (["incremental"] if d >= 3 else [])
    if not mk:
        return Score(0.0, components={n: (0.0, 1.0) for n in names}, reason="no Makefile", verifier_version=DOMAIN_ID)
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
                 reason=", ".join(f"{k}={x:.0f}" for k, x in comps.items()), verifier_version=DOMAIN_ID)


def _reference(task):
    d = task.difficulty
    mk = REFERENCE.format(stats=" build/stats.txt" if d >= 2 else "", stats_rule=STATS if d >= 2 else "")
    return [write("Makefile", mk), shell("make && ls build")]


def _probes(task):
    book = "".join(task.public["files"][k] for k in sorted(task.public["files"]))
    hard = "all:\n\tmkdir -p build\n\tprintf '%s' '" + book.replace("'", "") + "' > build/book.txt\n"
    ref = _reference(task)[0]
    return {"hardcoded_output": [write("Makefile", hard)],
            "no_makefile": [shell("mkdir -p build && cat src/*.txt > build/book.txt")],
            "spaces_not_tabs": [ref.replace("\\t", "    ")]}


DOMAIN_ID = "terminal.makefile-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
