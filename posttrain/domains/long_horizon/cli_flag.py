"""Add CLI options across modules, with tests: ``long_horizon.cli_flag-v1``.

Trains: a feature change carried through several files over several turns. ``core.py``
defines ``word_counts(text)`` (words lower-cased, counted, sorted by count descending then
word); ``cli.py`` prints ``WORD COUNT`` lines for a file. Stages:

1. ``core.word_counts`` takes keyword parameters (``limit=None``; from difficulty 2 also
   ``min_count=1``; at difficulty 3 also ``exclude=()``, words left out) — checked by parsing;
2. ``cli.py`` accepts the matching options ``--limit N`` (``--min-count K``,
   ``--exclude WORD`` repeatable) — checked by parsing for the option strings;
3. ``tests/test_cli.py`` exists, parses, and mentions ``limit``.

Process rewards (checkpoints): each stage, the first time it holds (these read files only).

Outcome (independent): the project's ``.py`` files alone are copied into a fresh sandbox;
``cli`` = fraction of hidden invocations (other text, other option values) whose output is
exactly right with exit status 0 (all run in one interpreter by a hidden runner that prints
them after a random per-task marker, compared on the host); ``tests`` = the policy's own ``python3 -m unittest discover -s tests`` exits
0 having run a test. Value = cli × (cli + tests) / 2.

Probes (≤ 0.05): ``option_ignored`` (the option parsed but not used), ``hardcoded`` (cli.py
prints the public example's output), ``tests_only``, plus the generic probes.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections import Counter

from posttrain.core.types import Score
from posttrain.domains.base import register_domain

from ._kit import LongDomain, done, files_task, in_fresh, read_text, shell, stage_env, write

DOMAIN_ID = "long_horizon.cli_flag-v1"
WORDS = ["red", "green", "blue", "cyan", "gold", "pink", "teal", "gray"]
CORE = ("from collections import Counter\n\n\ndef word_counts(text):\n"
        "    c = Counter(w.lower() for w in text.split())\n"
        "    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))\n")
CLI = ("import argparse\n\nfrom core import word_counts\n\n\ndef main(argv=None):\n"
       "    p = argparse.ArgumentParser()\n    p.add_argument('file')\n    a = p.parse_args(argv)\n"
       "    for w, n in word_counts(open(a.file).read()):\n        print(w, n)\n\n\n"
       "if __name__ == '__main__':\n    main()\n")
CORE_NEW = ("from collections import Counter\n\n\ndef word_counts(text, limit=None, min_count=1, exclude=()):\n"
            "    c = Counter(w.lower() for w in text.split())\n"
            "    items = [kv for kv in c.items() if kv[1] >= min_count and kv[0] not in set(exclude)]\n"
            "    items.sort(key=lambda kv: (-kv[1], kv[0]))\n"
            "    return items if limit is None else items[:limit]\n")
CLI_NEW = ("import argparse\n\nfrom core import word_counts\n\n\ndef main(argv=None):\n"
           "    p = argparse.ArgumentParser()\n    p.add_argument('file')\n"
           "    p.add_argument('--limit', type=int, default=None)\n"
           "    p.add_argument('--min-count', type=int, default=1)\n"
           "    p.add_argument('--exclude', action='append', default=[])\n    a = p.parse_args(argv)\n"
           "    for w, n in word_counts(open(a.file).read(), limit=a.limit, min_count=a.min_count, exclude=a.exclude):\n"
           "        print(w, n)\n\n\nif __name__ == '__main__':\n    main()\n")
TEST = ("import unittest\n\nfrom core import word_counts\n\n\nclass T(unittest.TestCase):\n"
        "    def test_limit(self):\n        self.assertEqual(word_counts('a b a', limit=1), [('a', 2)])\n")
# Runs every hidden invocation in one interpreter (``cli.py`` as __main__, its stdout captured);
# results go out after a random per-task marker and are compared on the host.
RUNNER = ("import io, json, runpy, sys\nout, res = sys.stdout, []\nsys.path.insert(0, '.')\n"
          "for argv in {argvs!r}:\n    buf, code = io.StringIO(), 0\n    sys.argv, sys.stdout = list(argv), buf\n"
          "    try:\n        runpy.run_path('cli.py', run_name='__main__')\n    except SystemExit as e:\n"
          "        code = e.code if isinstance(e.code, int) else 1\n    except BaseException:\n        code = 1\n"
          "    sys.stdout = out\n    res.append([code, buf.getvalue()])\nout.write('{mark}' + json.dumps(res) + '\\n')\n")
PARAMS = {1: ["limit"], 2: ["limit", "min_count"], 3: ["limit", "min_count", "exclude"]}
FLAGS = {"limit": "--limit", "min_count": "--min-count", "exclude": "--exclude"}


def expected(text: str, limit=None, min_count=1, exclude=()) -> str:
    c = Counter(w.lower() for w in text.split())
    items = sorted(((w, n) for w, n in c.items() if n >= min_count and w not in exclude), key=lambda kv: (-kv[1], kv[0]))
    return "".join(f"{w} {n}\n" for w, n in (items if limit is None else items[:limit]))


def _invocation(rng, d: int) -> tuple[str, list[str], str]:
    """One hidden run; its options always change the output (ignoring them is wrong)."""
    while True:
        text = " ".join(rng.choice(WORDS).upper() if rng.random() < 0.2 else rng.choice(WORDS)
                        for _ in range(rng.randint(12, 30)))
        kw = {"limit": rng.randint(1, 4)}
        args = ["--limit", str(kw["limit"])]
        if d >= 2 and rng.random() < 0.7:
            kw["min_count"] = rng.randint(2, 3)
            args += ["--min-count", str(kw["min_count"])]
        if d >= 3:
            kw["exclude"] = tuple(rng.sample(WORDS, 2))
            for w in kw["exclude"]:
                args += ["--exclude", w]
        out = expected(text, **kw)
        if out and out != expected(text):
            return text + "\n", args, out


def _build(rng: random.Random, d: int):
    shown = _invocation(rng, d)
    cases = [list(_invocation(rng, d)) for _ in range(4)]
    opts = ", ".join(f"{FLAGS[p]} ({p})" for p in PARAMS[d])
    text = (f"Add the options {opts} to this word-count tool: core.word_counts(text) gets keyword parameters "
            f"{', '.join(PARAMS[d])} (limit=None keeps every word; min_count=1: words counted fewer times are left out; "
            "exclude: words to leave out; --exclude may be repeated) and cli.py passes them through. Then add "
            "tests/test_cli.py (unittest) covering limit. Run as 'python3 cli.py FILE [options]'. Example: for sample.txt, "
            f"'python3 cli.py sample.txt {' '.join(shown[1])}' prints:\n{shown[2]}")
    return files_task(DOMAIN_ID, d, text, {"core.py": CORE, "cli.py": CLI, "sample.txt": shown[0]},
                      {"cases": cases, "shown": shown[2], "mark": f"@{rng.getrandbits(64):016x}@"})


def _marked(stdout: str, mark: str, n: int) -> list:
    lines = [ln for ln in stdout.splitlines() if ln.startswith(mark)]
    try:
        got = json.loads(lines[-1][len(mark):]) if lines else []
    except ValueError:
        return []
    return got if isinstance(got, list) and len(got) == n else []


def _core_ok(src: str | None, d: int) -> bool:
    try:
        tree = ast.parse(src or "")
    except (SyntaxError, ValueError):
        return False
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and n.name == "word_counts":
            names = {a.arg for a in n.args.args + n.args.kwonlyargs}
            return set(PARAMS[d]) <= names
    return False


def _cli_ok(src: str | None, d: int) -> bool:
    try:
        ast.parse(src or "")
    except (SyntaxError, ValueError):
        return False
    return all(FLAGS[p] in (src or "") for p in PARAMS[d])


def _tests_ok(src: str | None) -> bool:
    try:
        ast.parse(src or "")
    except (SyntaxError, ValueError):
        return False
    return "limit" in (src or "")


def _verify(env, trajectory) -> Score:
    h = env.task.hidden
    files = {}
    for p in ["core.py", "cli.py", "tests/test_cli.py"]:
        t = read_text(env, p) if env.sandbox_opened else None
        if t is not None:
            files[p] = t
    cli = tests = 0.0
    if "cli.py" in files:
        files.update({f"in{i}.txt": c[0] for i, c in enumerate(h["cases"])})
        argvs = [["cli.py", f"in{i}.txt", *c[1]] for i, c in enumerate(h["cases"])]
        files["_runner.py"] = RUNNER.format(argvs=argvs, mark=h["mark"])
        res, _ = in_fresh(files, [["python3", "-E", "-s", "_runner.py"]])
        got = _marked(res[0].stdout, h["mark"], len(argvs))
        cli = sum(g == [0, c[2]] for g, c in zip(got, h["cases"])) / len(h["cases"])
        if cli > 0:  # the value is 0 anyway otherwise
            (t,), _ = in_fresh(files, ["python3 -E -s -m unittest discover -s tests"])
            ran = re.search(r"^Ran ([0-9]+) test", t.stderr, re.M)
            tests = float(t.exit_code == 0 and ran is not None and int(ran.group(1)) >= 1)
    comps = {"cli": (cli, 1.0), "tests": (tests, 1.0), "checkpoints": (sum(env.checkpoints.values()), 0.0)}
    return Score(cli * (cli + tests) / 2, components=comps, reason=f"cli {cli:.2f}, own tests {tests:.0f}",
                 verifier_version=DOMAIN_ID)


def _env(task):
    d = task.difficulty
    checks = [("core", lambda env: _core_ok(read_text(env, "core.py"), d)),
              ("cli", lambda env: _cli_ok(read_text(env, "cli.py"), d)),
              ("tests", lambda env: _tests_ok(read_text(env, "tests/test_cli.py")))]
    return stage_env(task, _verify, checks)


def _reference(task) -> list[str]:
    return [write("core.py", CORE_NEW), write("cli.py", CLI_NEW), write("tests/test_cli.py", TEST),
            shell("python3 -m unittest discover -s tests"), done()]


def _probes(task) -> dict:
    ignored = CLI_NEW.replace("limit=a.limit, min_count=a.min_count, exclude=a.exclude", "")
    hard = f"print({task.hidden['shown']!r}, end='')\n# --limit --min-count --exclude\n"
    return {"option_ignored": [write("core.py", CORE_NEW), write("cli.py", ignored), write("tests/test_cli.py", TEST), done()],
            "hardcoded": [write("cli.py", hard), write("tests/test_cli.py", TEST), done()],
            "tests_only": [write("tests/test_cli.py", "import unittest\n# limit\n"), done()]}


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
