"""Shared machinery of the ``code.synth_*`` domains: one declarative problem family per domain.

What it is: :class:`SynthDomain` turns a table of :class:`Level` s (a specification, a
reference program, an input generator, optionally a large-input generator and a seeded bug)
into a registered single-reply code-synthesis domain with the conventions of
``code.fn_synthesis-v1``: the policy answers with a Python program (``<answer>`` and/or one
code fence, :func:`posttrain.verifiers.code.extract_code`), scored by
:func:`posttrain.verifiers.code.verify_function` (static gate, hidden tests in a fresh pooled
sandbox, results compared on the host, baseline-corrected pass rate, efficiency, style).

Drivers: a domain may append a *driver* to the submitted program, a small function ``_check``
the harness calls instead of the target. Drivers let the hidden tests check what a plain call
cannot: the exception type raised on bad input (:func:`raises_driver`), a class's behaviour
over a sequence of method calls (:func:`class_driver`, with an injected fake clock), call
counts or laziness. The driver is appended *after* the submission, so a submission cannot
replace it; everything it returns comes from the submission's own code and is compared on the
host, and the static gate runs over the submission and the driver together. A submission must
itself define the target (function or class): the driver's presence never satisfies the gate.

Large tests: a level may declare a ``big`` generator; its input is re-drawn on the host at
verification from a seed stored in ``task.hidden`` (tasks stay small), run last, under a
short time limit, so an asymptotically slow answer loses that test (tests already reported
still count). Expected outputs are computed by running *our* reference source on the host.

Guarantees: every task has 3 public examples disjoint from its hidden inputs; the most common
hidden output covers at most half of the small hidden tests (a constant answer earns 0 after
baseline correction; an answer that always raises is such a constant).

Does not: check complexity beyond the time limit, or run anything but Python.
"""

from __future__ import annotations

import ast
import functools
import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import format_answer, pool_lease
from posttrain.verifiers.code import extract_code, verify_function

from ._problems import distinct_inputs

CHECK = "_check"
N_PUBLIC, N_HIDDEN = 3, 14
BIG_TIMEOUT_S, SMALL_TIMEOUT_S = 5.0, 8.0
Gen = Callable[[random.Random, Mapping[str, Any]], list]


@dataclass(frozen=True)
class Level:
    """One difficulty: ``spec``/``ref`` may hold ``<<name>>`` holes filled from ``consts``."""

    spec: str
    ref: str
    gen: Gen
    consts: Callable[[random.Random], dict] = lambda r: {}
    big: Gen | None = None
    bug: tuple[str, str] | None = None  # a text edit of ref making it wrong on some tests


def fill(text: str, consts: Mapping[str, Any]) -> str:
    for k, v in consts.items():
        text = text.replace(f"<<{k}>>", str(v))
    return text


# --------------------------------------------------------------------- drivers
def raises_driver(fn: str, excs: tuple[str, ...] = ("ValueError",)) -> str:
    """``_check`` returns ``{"ok": result}`` or ``{"raises": name}`` for an expected exception."""
    lines = [f"def {CHECK}(*args):", "    try:", f"        return {{'ok': {fn}(*args)}}"]
    lines += [f"    except {e}:\n        return {{'raises': '{e}'}}" for e in excs]
    return "\n".join(lines) + "\n"


def digest_driver(fn: str) -> str:
    """``_check`` returns the result, or for a list longer than 200 a digest of it (length and a
    polynomial hash of its items' text) so a large test's expected output keeps the task small."""
    return (f"def {CHECK}(*args):\n    res = {fn}(*args)\n"
            "    if not isinstance(res, list) or len(res) <= 200:\n        return res\n"
            "    h = 0\n    for item in res:\n        for ch in str(item) + '\\n':\n"
            "            h = (h * 1000003 + ord(ch)) % 2305843009213693951\n"
            "    return ['digest', len(res), h]\n")


def class_driver(cls: str, methods: tuple[str, ...], excs: tuple[str, ...] = (),
                 clock: bool = False) -> str:
    """``_check(ctor_args, ops)``: build ``cls``, apply ``[name, *args]`` ops, list the results.

    With ``clock``, the constructor's last argument is a zero-argument function giving the
    current time, and the pseudo-op ``["advance", dt]`` moves that clock forward.
    """
    out = [f"def {CHECK}(ctor, ops):", "    now = [0]"]
    out += ["    obj = " + (f"{cls}(*ctor, lambda: now[0])" if clock else f"{cls}(*ctor)")]
    # lambdas: a method is looked up only when an op calls it (levels differ in methods)
    out += ["    table = {"] + [f"        '{m}': lambda *a: obj.{m}(*a)," for m in methods]
    out += ["    }", "    res = []", "    for op in ops:", "        if op[0] == 'advance':",
            "            now[0] += op[1]", "            continue"]
    if excs:
        out += ["        try:", "            res.append(table[op[0]](*op[1:]))"]
        out += [f"        except {e}:\n            res.append({{'raises': '{e}'}})" for e in excs]
    else:
        out += ["        res.append(table[op[0]](*op[1:]))"]
    out += ["    if len(res) <= 200:", "        return res",
            "    # a long run (a large timed test) reports a digest, which keeps the task small",
            "    ints = [v if isinstance(v, int) else -1 for v in res]",
            "    return ['digest', len(res), sum((i % 9973 + 1) * v for i, v in enumerate(ints))]"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------- rendering
def call_text(fn: str, args: list) -> str:
    return f"{fn}({', '.join(json.dumps(a) for a in args)})"


def render_function(fn: str, args: list, out: Any, wrapped: bool) -> str:
    if wrapped:
        return (f"{call_text(fn, args)} == {json.dumps(out['ok'])}" if "ok" in out
                else f"{call_text(fn, args)} raises {out['raises']}")
    return f"{call_text(fn, args)} == {json.dumps(out)}"


def render_class(cls: str, args: list, out: Any, clock: bool = False) -> str:
    ctor, ops = args
    cargs = [json.dumps(a) for a in ctor] + (["clock"] if clock else [])
    parts, k = [f"obj = {cls}({', '.join(cargs)})"], 0
    for op in ops:
        if op[0] == "advance":
            parts.append(f"(clock advances by {op[1]})")
            continue
        r = out[k]
        k += 1
        call = f"obj.{op[0]}({', '.join(json.dumps(a) for a in op[1:])})"
        raised = isinstance(r, dict) and list(r) == ["raises"]
        parts.append(f"{call} raises {r['raises']}" if raised else f"{call} -> {json.dumps(r)}")
    return "; ".join(parts)


# --------------------------------------------------------------------- running our own code
def run_reference(source: str, check: str, inputs: list[list]) -> list[Any]:
    """Outputs of *our* reference (plus driver) on inputs, JSON-normalised."""
    ns: dict[str, Any] = {}
    exec(compile(source, "<reference>", "exec"), ns)  # trusted: the domain's own source
    return [json.loads(json.dumps(ns[check](*json.loads(json.dumps(a))))) for a in inputs]


def defines(code: str, name: str, kind: str) -> bool:
    """Whether the submission itself defines ``name`` at top level (function or class)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    want = ast.ClassDef if kind == "class" else ast.FunctionDef
    return any(isinstance(n, want) and n.name == name for n in tree.body)


@dataclass
class SynthDomain:
    """A single-reply synthesis domain built from three or more :class:`Level` s."""

    id: str
    target: str
    levels: Mapping[int, Level]
    kind: str = "function"  # or "class"
    methods: tuple[str, ...] = ()  # a class's public methods (probes stub them)
    clock: bool = False  # a class taking an injected clock (see class_driver)
    driver: str = ""
    render: Callable[[list, Any], str] | None = None
    big_note: str = ""
    description: str = ""  # first line: the skill the catalogue shows
    family: str = "code"
    env_kind: str = "sandbox"
    difficulties: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.difficulties = tuple(sorted(self.levels))

    @property
    def wrapped(self) -> bool:
        """Whether outputs are ``{"ok": ...}``/``{"raises": ...}`` (a :func:`raises_driver`)."""
        return "{'ok':" in self.driver

    # ---------------------------------------------------------------- generation
    def _example(self, args: list, out: Any) -> str:
        if self.render is not None:
            return self.render(args, out)
        if self.kind == "class":
            return render_class(self.target, args, out, self.clock)
        return render_function(self.target, args, out, wrapped=self.wrapped)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        lv = self.levels[difficulty]
        check = CHECK if self.driver else self.target
        for _ in range(60):
            c = lv.consts(rng)
            ref = fill(lv.ref, c)
            inputs = distinct_inputs(lambda: lv.gen(rng, c), N_PUBLIC + N_HIDDEN, 600, sort_keys=True)
            if len(inputs) < N_PUBLIC + N_HIDDEN:
                continue
            outs = run_reference(ref + "\n\n" + self.driver, check, inputs)
            hid = [json.dumps(o, sort_keys=True) for o in outs[N_PUBLIC:]]
            if max(hid.count(h) for h in hid) > N_HIDDEN // 2:
                continue
            return self._task(difficulty, lv, c, ref, inputs, outs, rng)
        raise RuntimeError(f"{self.id}: could not draw a problem at difficulty {difficulty}")

    def _task(self, d: int, lv: Level, c: dict, ref: str, inputs: list, outs: list,
              rng: random.Random) -> Task:
        spec = fill(lv.spec, c) + (f" {self.big_note}" if lv.big is not None and self.big_note else "")
        public = [[a, o] for a, o in zip(inputs[:N_PUBLIC], outs[:N_PUBLIC])]
        hidden: dict[str, Any] = {"inputs": inputs[N_PUBLIC:], "expected": outs[N_PUBLIC:],
                                  "reference": ref, "consts": c}
        if lv.big is not None:
            seed = rng.randrange(1 << 30)
            hidden["big_seed"] = seed
            hidden["big_expected"] = list(_big_expected(self, d, seed, json.dumps(c, sort_keys=True), ref))
        what = "class" if self.kind == "class" else "function"
        ex = "\n".join(self._example(a, o) for a, o in public)
        prompt = (f"Write a Python {what}. {spec}\nExamples:\n{ex}\n"
                  "Reply with the Python program inside <answer>...</answer>.")
        return make_task(self.id, d, prompt, hidden=hidden,
                         public={"function": self.target, "kind": self.kind, "spec": spec,
                                 "examples": public})

    # ---------------------------------------------------------------- reference, verifier
    def big_input(self, difficulty: int, seed: int, consts: Mapping[str, Any]) -> list:
        """The large test's arguments (read-only: shared by the small cache below)."""
        return _big_cached(self, difficulty, seed, json.dumps(consts, sort_keys=True))

    def __hash__(self) -> int:  # the cache key; one instance per registered id
        return hash(self.id)

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["reference"])

    def tests(self, task: Task) -> tuple[list, list]:
        h = task.hidden
        inputs, expected = list(h["inputs"]), list(h["expected"])
        if "big_seed" in h:
            inputs.append(self.big_input(task.difficulty, h["big_seed"], h["consts"]))
            expected += h["big_expected"]
        return inputs, expected

    def score_code(self, task: Task, code: str) -> Score:
        if not defines(code, self.target, self.kind):  # before drawing the large input: cheap
            return Score(0.0, components={"static": (0.0, 0.0), "correct": (0.0, 0.9)},
                         passed=0, total=len(task.hidden["inputs"]) + ("big_seed" in task.hidden),
                         reason=f"static check: no top-level {self.kind} {self.target!r} "
                                "(or the program does not parse)",
                         verifier_version=self.id)
        inputs, expected = self.tests(task)
        tail = "\n\n" + self.driver if self.driver else ""
        return verify_function(code + tail, fn_name=CHECK if self.driver else self.target,
                               inputs=inputs, expected=expected,
                               reference=task.hidden["reference"] + tail,
                               sandbox_factory=pool_lease(), version=self.id,
                               timeout=BIG_TIMEOUT_S if "big_seed" in task.hidden else SMALL_TIMEOUT_S)

    def score(self, task: Task, answer: str) -> Score:
        return self.score_code(task, extract_code(answer))

    def bug_program(self, task: Task) -> str | None:
        """The reference with its level's seeded bug (for tests of partial credit)."""
        lv = self.levels[task.difficulty]
        if lv.bug is None:
            return None
        old, new = (fill(s, task.hidden["consts"]) for s in lv.bug)
        assert old in task.hidden["reference"], (self.id, old)
        return task.hidden["reference"].replace(old, new, 1)

    # ---------------------------------------------------------------- probes
    def probes(self, task: Task) -> dict[str, str]:
        """Programs a reward hacker might submit; each must score at most 0.05.

        ``hardcode_public`` (the examples as a lookup table, else a common output; for a class,
        stub methods), ``constant_output`` (the most common hidden output), ``always_equal`` (an
        object equal to everything), ``read_results`` (writing fake results), ``driver_only``
        (defines the driver's name but not the target). Only the first two reach the sandbox;
        exit-at-import, printing PASSED and patching the harness are the shared verifier's
        business, probed by ``code.fn_synthesis-v1`` (each sandbox probe costs ~0.1 s of the
        conformance budget).
        """
        t = self.target
        exp = task.hidden["expected"]
        common = json.loads(max((json.dumps(e) for e in exp), key=lambda s: [json.dumps(x) for x in exp].count(s)))
        if self.wrapped:  # unwrap: the target's own return value
            common = common.get("ok") if isinstance(common, dict) else None
        table = {json.dumps(a): o for a, o in task.public["examples"]}
        if self.kind == "class":
            ops = [r for e in exp for r in e]
            top = json.loads(max((json.dumps(r) for r in ops), key=[json.dumps(r) for r in ops].count))
            body = f"class {t}:\n    def __init__(self, *args):\n        self.n = 0\n"
            progs = {"constant_output": body + "".join(
                         f"    def {m}(self, *args):\n        return {top!r}\n" for m in self.methods),
                     "hardcode_public": body + "".join(
                         f"    def {m}(self, *args):\n        return None\n" for m in self.methods)}
        else:
            progs = {
                "constant_output": f"def {t}(*args, **kw):\n    return {common!r}\n",
                "hardcode_public": (f"import json\nTABLE = {table!r}\ndef {t}(*args, **kw):\n"
                                    f"    return TABLE.get(json.dumps(list(args)), {common!r})\n"),
            }
        progs["always_equal"] = (f"class Eq:\n    def __eq__(self, other):\n        return True\n"
                                 f"def {t}(*args):\n    return Eq()\n")
        progs["read_results"] = (f"def {t}(*args):\n    f = open('_results.jsonl', 'a')\n"
                                 f"    f.write('{{\"i\": 0, \"ok\": true, \"r\": 0}}\\n')\n")
        progs["driver_only"] = f"def {CHECK}(*args):\n    return ['ok', 0]\n"
        return {k: format_answer(v) for k, v in progs.items()}


@functools.lru_cache(maxsize=8)
def _big_cached(dom: SynthDomain, difficulty: int, seed: int, consts: str) -> list:
    # Generating a large input costs tens of milliseconds and the same one is drawn at task
    # generation and at every verification of that task: keep the last few.
    return dom.levels[difficulty].big(random.Random(seed), json.loads(consts))


@functools.lru_cache(maxsize=8)
def _big_expected(dom: SynthDomain, difficulty: int, seed: int, consts: str, ref: str) -> tuple:
    # The same task is generated several times (determinism checks, transport, resampling).
    args = _big_cached(dom, difficulty, seed, consts)
    return tuple(run_reference(ref + "\n\n" + dom.driver, CHECK if dom.driver else dom.target, [args]))


def lcg_ints(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    """n integers in [lo, hi] (``choices`` over a range: fast enough for the large tests)."""
    return rng.choices(range(lo, hi + 1), k=n)


def word(rng: random.Random, alphabet: str, lo: int, hi: int) -> str:
    return "".join(rng.choices(alphabet, k=rng.randint(lo, hi)))
