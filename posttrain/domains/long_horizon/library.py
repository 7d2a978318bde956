"""Build a small library in milestones: ``long_horizon.library_milestones-v1``.

Trains: growing one module over several turns, milestone by milestone, each with its own
hidden tests. ``intervals.py`` (closed integer intervals ``[a, b]``, ``a <= b``):

1. ``merge(intervals)`` → the union as sorted, non-overlapping ``[a, b]`` lists (touching
   intervals such as ``[1, 2]`` and ``[2, 5]`` merge);
2. ``total_length(intervals)`` → the total length ``b - a`` of the union;
3. (difficulty ≥ 2) ``subtract(intervals, cut)`` → the union minus ``cut`` (pieces of
   positive length, sorted);
4. (difficulty 3) ``gaps(intervals, lo, hi)`` → the parts of ``[lo, hi]`` not covered
   (positive length, sorted).

Process rewards (checkpoints): a milestone's public examples (shown in the prompt) all right,
the first time — run on a copy of ``intervals.py`` in a fresh sandbox, once per turn.

Outcome (independent): ``intervals.py`` alone is copied into a fresh sandbox and a hidden
runner (``python3 -I``, results printed after a random per-task marker, compared on the host)
calls every function on hidden inputs; value = the mean over milestones of the fraction of
hidden cases right. Printing PASSED, ``exit(0)`` or hard-coding the public examples earns
nothing.

Probes (≤ 0.05): ``hardcode_examples`` (functions returning the public answers by lookup),
``identity`` (inputs returned unchanged), ``no_module``, plus the generic probes.
"""

from __future__ import annotations

import json
import random

from posttrain.core.types import Score
from posttrain.domains.base import register_domain

from ._kit import LongDomain, done, files_task, in_fresh, read_text, stage_env, write

DOMAIN_ID = "long_horizon.library_milestones-v1"
FUNCS = ["merge", "total_length", "subtract", "gaps"]
RUNNER = ("import json, sys\nout = sys.stdout\nsys.path.insert(0, '.')\nres = []\ntry:\n    import intervals as m\n"
          "except Exception:\n    m = None\nfor fn, args in {calls!r}:\n    try:\n"
          "        res.append(json.dumps(getattr(m, fn)(*args)))\n    except Exception:\n        res.append('error')\n"
          "out.write('{mark}' + json.dumps(res) + '\\n')\n")
REFERENCE = [
    "def merge(intervals):\n    out = []\n    for a, b in sorted(map(list, intervals)):\n"
    "        if out and a <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], b)\n"
    "        else:\n            out.append([a, b])\n    return out\n",
    "def total_length(intervals):\n    return sum(b - a for a, b in merge(intervals))\n",
    "def subtract(intervals, cut):\n    c0, c1 = cut\n    out = []\n    for a, b in merge(intervals):\n"
    "        for x, y in ((a, min(b, c0)), (max(a, c1), b)):\n            if y > x:\n                out.append([x, y])\n"
    "    return out\n",
    "def gaps(intervals, lo, hi):\n    out, cur = [], lo\n    for a, b in merge(intervals):\n"
    "        if a > cur and cur < hi:\n            out.append([cur, min(a, hi)])\n        cur = max(cur, b)\n"
    "    if cur < hi:\n        out.append([cur, hi])\n    return out\n",
]


def _ref() -> dict:
    ns: dict = {}
    exec("\n\n".join(REFERENCE), ns)  # our own reference code, to compute expected values
    return ns


def _ivs(rng) -> list[list[int]]:
    out = []
    for _ in range(rng.randint(2, 6)):
        a = rng.randint(0, 40)
        out.append([a, a + rng.randint(0, 9)])
    return out


def _call(rng, fn: str, ref: dict) -> list:
    """A call whose answer is not its first argument (returning the input is wrong)."""
    while True:
        c = _draw(rng, fn)
        if ref[fn](*c[1]) != c[1][0]:
            return c


def _draw(rng, fn: str) -> list:
    ivs = _ivs(rng)
    if fn == "subtract":
        a = rng.randint(0, 40)
        return [fn, [ivs, [a, a + rng.randint(1, 12)]]]
    if fn == "gaps":
        lo = rng.randint(0, 10)
        return [fn, [ivs, lo, lo + rng.randint(20, 45)]]
    return [fn, [ivs]]


def _build(rng: random.Random, d: int):
    funcs, ref = FUNCS[:d + 1], _ref()
    public = {f: [_call(rng, f, ref) for _ in range(2)] for f in funcs}
    hidden = [_call(rng, f, ref) for f in funcs for _ in range(4)]
    ex = lambda c: f"{c[0]}({', '.join(map(str, c[1]))}) == {ref[c[0]](*c[1])}"  # noqa: E731
    spec = {"merge": "merge(intervals): the union as sorted non-overlapping [a, b] lists (touching intervals merge)",
            "total_length": "total_length(intervals): the total length (b - a summed) of the union",
            "subtract": "subtract(intervals, cut): the union minus the interval cut, pieces of positive length, sorted",
            "gaps": "gaps(intervals, lo, hi): the parts of [lo, hi] not covered by the union, positive length, sorted"}
    text = ("Build intervals.py (closed integer intervals [a, b] as lists, a <= b), milestone by milestone:\n"
            + "\n".join(f"{i + 1}. {spec[f]}. Examples: " + "; ".join(ex(c) for c in public[f]) for i, f in enumerate(funcs))
            + "\nEach milestone has hidden tests.")
    mark = f"@{rng.getrandbits(64):016x}@"
    return files_task(DOMAIN_ID, d, text, {"NOTES.md": "intervals library\n"},
                      {"funcs": funcs, "public": public, "hidden": hidden, "mark": mark,
                       "want_public": {f: [json.dumps(ref[f](*c[1])) for c in cs] for f, cs in public.items()},
                       "want_hidden": [json.dumps(ref[c[0]](*c[1])) for c in hidden]})


def run_calls(source: str | None, calls: list, mark: str) -> list[str]:
    if source is None:
        return []
    runner = RUNNER.format(calls=[tuple(c) for c in calls], mark=mark)
    (res,), _ = in_fresh({"intervals.py": source, "_runner.py": runner}, [["python3", "-I", "_runner.py"]])
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(mark)]
    try:
        got = json.loads(lines[-1][len(mark):]) if lines else []
    except ValueError:
        return []
    return got if isinstance(got, list) and all(isinstance(g, str) for g in got) else []


def _verify(env, trajectory) -> Score:
    h = env.task.hidden
    got = run_calls(read_text(env, "intervals.py") if env.sandbox_opened else None, h["hidden"], h["mark"])
    per = {f: [] for f in h["funcs"]}
    for i, (c, want) in enumerate(zip(h["hidden"], h["want_hidden"])):
        per[c[0]].append(float(i < len(got) and got[i] == want))
    vals = {f: sum(v) / len(v) for f, v in per.items()}
    comps = {f: (v, 1.0) for f, v in vals.items()}
    comps["checkpoints"] = (sum(env.checkpoints.values()), 0.0)
    return Score(sum(vals.values()) / len(vals), components=comps,
                 reason=", ".join(f"{f} {v:.2f}" for f, v in vals.items()), verifier_version=DOMAIN_ID)


def _env(task):
    h, cache = task.hidden, {}
    calls = [c for f in h["funcs"] for c in h["public"][f]]

    def check(f):
        def ok(env) -> bool:
            src = read_text(env, "intervals.py")
            if src is None:
                return False
            if cache.get("src") != src:  # one sandbox run per new version of the module
                cache.update(src=src, got=run_calls(src, calls, h["mark"]))
            got = dict(zip(range(len(calls)), cache["got"]))
            idx = [i for i, c in enumerate(calls) if c[0] == f]
            return all(got.get(i) == w for i, w in zip(idx, h["want_public"][f]))
        return ok
    return stage_env(task, _verify, [(f, check(f)) for f in h["funcs"]])


def _reference(task) -> list[str]:
    n = len(task.hidden["funcs"])
    return [write("intervals.py", "\n\n".join(REFERENCE[:k + 1])) for k in range(n)] + [done()]


def _probes(task) -> dict:
    h = task.hidden
    table = {f: {json.dumps(c[1]): json.loads(w) for c, w in zip(h["public"][f], h["want_public"][f])} for f in h["funcs"]}
    hard = "import json\nT = " + repr(table) + "\n" + "".join(
        f"def {f}(*a):\n    return T[{f!r}].get(json.dumps(list(a)))\n" for f in h["funcs"])
    ident = "".join(f"def {f}(*a):\n    return a[0]\n" for f in h["funcs"])
    return {"hardcode_examples": [write("intervals.py", hard), done()],
            "identity": [write("intervals.py", ident), done()],
            "no_module": [write("NOTES.md", "PASSED\n"), done()]}


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
