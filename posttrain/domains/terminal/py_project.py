"""Create a Python project skeleton and make its test pass: ``terminal.py_project-v1``.

Trains: laying out a src-layout package without a virtual env: ``pyproject.toml``
(``[project]`` name and version), ``src/<pkg>/__init__.py`` implementing a specified
function, and (difficulty ≥ 2) ``tests/test_<pkg>.py`` with unittest tests that pass under
``PYTHONPATH=src python3 -m unittest discover -s tests``. Difficulty 1: ``slugify``;
2: ``slugify`` + own tests; 3: also ``__version__`` equal to the pyproject version and a
second function ``initials``.

Reward: ``hidden`` = fraction of hidden cases right: the package files (``src/`` and
``tests/``, at most 40 files) are copied into a fresh sandbox where a hidden runner
(written after the policy's files, run with ``python3 -I``) imports the package and prints
its results under a random per-task marker; the host compares them with the expected values
(so an ``exit(0)`` or printing PASSED earns nothing, and a patched ``print`` cannot know the
expected values). ``pyproject`` = the TOML parses on the host with the right name and version;
``tests`` (2+) = the policy's own unittest run exits 0 having run at least one test.
Value = hidden × mean(hidden, pyproject[, tests]).

Probes (≤ 0.05): ``empty_package`` (every file present, function missing),
``identity_function`` (returns its input), ``pyproject_only``, plus the terminal and generic
probes.
"""

from __future__ import annotations

import json
import random
import re
import tomllib

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import pool_lease

from ._kit import Score, TreeDomain, shell, text_of, tree_task, write

PKGS = ["textkit", "sluggo", "namecraft", "wordsmith", "tidytext"]
WORDS = ["Hello", "World", "Über", "café", "C++", "data", "Big", "deal", "R&D", "x"]
IMPL = ('import re\n\n__version__ = "{ver}"\n\n\ndef slugify(text):\n'
        '    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")\n\n\n'
        'def initials(name):\n    return "".join(w[0].upper() + "." for w in name.split())\n')
TEST = ("import unittest\n\nfrom {pkg} import slugify\n\n\nclass T(unittest.TestCase):\n"
        "    def test_slug(self):\n        self.assertEqual(slugify('A b'), 'a-b')\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n")
RUNNER = ("import json, sys\nsys.path.insert(0, 'src')\nout = sys.stdout\nimport {pkg} as m\n"
          "res = []\nfor fn, arg in {calls!r}:\n    try:\n        v = getattr(m, fn)\n"
          "        res.append(repr(v if fn == '__version__' else v(arg)))\n"
          "    except Exception as e:\n        res.append('error')\nout.write('{mark}' + json.dumps(res) + '\\n')\n")


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def initials(name: str) -> str:
    return "".join(w[0].upper() + "." for w in name.split())


def _build(rng: random.Random, d: int):
    pkg, ver = rng.choice(PKGS), f"{rng.randint(0, 2)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
    calls = [("slugify", " ".join(rng.sample(WORDS, rng.randint(2, 4))) + rng.choice(["", "!", "  "])) for _ in range(4)]
    if d >= 3:
        calls += [("initials", " ".join(rng.sample(["ada", "Grace", "alan", "Barbara", "ken"], rng.randint(2, 3))))
                  for _ in range(3)]
        calls.append(("__version__", ""))
    want = [repr({"slugify": slugify, "initials": initials}[f](a)) if f != "__version__" else repr(ver)
            for f, a in calls]
    text = (f"Create a Python project in /work (no virtual env needed): pyproject.toml with [project] name = "
            f"\"{pkg}\" and version = \"{ver}\"; a package src/{pkg}/ whose __init__.py defines slugify(text): "
            "lower-case the text, replace every run of characters other than a-z and 0-9 by one '-', and strip "
            "'-' from both ends (slugify('Hello, World!') == 'hello-world')")
    if d >= 2:
        text += (f"; tests/test_{pkg}.py with unittest tests of slugify that pass with "
                 "'PYTHONPATH=src python3 -m unittest discover -s tests'")
    if d >= 3:
        text += (f"; also __version__ = \"{ver}\" in the package and initials(name) returning the upper-cased first "
                 "letter of each space-separated word followed by a dot (initials('ada lovelace') == 'A.L.')")
    return tree_task(DOMAIN_ID, d, text + ".", {}, [],
                     hidden={"pkg": pkg, "ver": ver, "calls": calls, "want": want,
                             "mark": f"@{rng.getrandbits(64):016x}@"})


def _project_files(env) -> dict[str, str]:
    if not env.sandbox_opened:
        return {}
    out = {}
    for info in env.sandbox.list_files("", limit=400):
        if info.kind == "file" and info.path.startswith(("src/", "tests/")) and len(out) < 40:
            text = text_of(env, info.path)
            if text is not None:
                out[info.path] = text
    return out


def _pyproject_ok(text: str | None, pkg: str, ver: str) -> float:
    try:
        proj = tomllib.loads(text or "").get("project", {})
    except (tomllib.TOMLDecodeError, ValueError):
        return 0.0
    return float(proj.get("name") == pkg and proj.get("version") == ver)


def _verify(env, trajectory) -> Score:
    h, d = env.task.hidden, env.task.difficulty
    files = _project_files(env)
    comps = {"hidden": 0.0, "pyproject": _pyproject_ok(text_of(env, "pyproject.toml"), h["pkg"], h["ver"])}
    if d >= 2:
        comps["tests"] = 0.0
    if files:
        calls = [tuple(c) for c in h["calls"]]
        with pool_lease()() as sb:
            for p, t in files.items():
                sb.write_file(p, t)
            sb.write_file("_runner.py", RUNNER.format(pkg=h["pkg"], calls=calls, mark=h["mark"]))
            res = sb.exec(["python3", "-I", "_runner.py"], timeout=10, cpu_time=10)
            lines = [ln for ln in res.stdout.splitlines() if ln.startswith(h["mark"])]
            try:
                got = json.loads(lines[-1][len(h["mark"]):]) if lines else []
            except ValueError:
                got = []
            if isinstance(got, list) and len(got) == len(h["want"]):
                comps["hidden"] = sum(g == w for g, w in zip(got, h["want"])) / len(h["want"])
            if d >= 2 and comps["hidden"] > 0:  # the value is 0 anyway otherwise
                t = sb.exec("PYTHONPATH=src python3 -m unittest discover -s tests", timeout=10, cpu_time=10)
                ran = re.search(r"^Ran ([0-9]+) test", t.stderr, re.M)
                comps["tests"] = float(t.exit_code == 0 and ran is not None and int(ran.group(1)) >= 1)
    v = comps["hidden"] * sum(comps.values()) / len(comps)
    return Score(v, components={k: (x, 1.0) for k, x in comps.items()},
                 reason=", ".join(f"{k}={x:.2f}" for k, x in comps.items()), verifier_version=DOMAIN_ID)


def _reference(task):
    h = task.hidden
    toml = f'[project]\nname = "{h["pkg"]}"\nversion = "{h["ver"]}"\nrequires-python = ">=3.9"\n'
    acts = [write("pyproject.toml", toml), write(f"src/{h['pkg']}/__init__.py", IMPL.format(ver=h["ver"]))]
    if task.difficulty >= 2:
        acts += [write(f"tests/test_{h['pkg']}.py", TEST.format(pkg=h["pkg"])),
                 shell("PYTHONPATH=src python3 -m unittest discover -s tests")]
    return acts


def _probes(task):
    h = task.hidden
    ref = _reference(task)
    return {"empty_package": [ref[0], write(f"src/{h['pkg']}/__init__.py", "")] + ref[2:],
            "identity_function": [ref[0], write(f"src/{h['pkg']}/__init__.py", "def slugify(t):\n    return t\n"
                                                "def initials(t):\n    return t\n")] + ref[2:],
            "pyproject_only": ref[:1]}


DOMAIN_ID = "terminal.py_project-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
