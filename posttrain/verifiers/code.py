"""Code verifier: a static gate, then hidden tests in a fresh sandbox, compared on the host.

What it is: :func:`verify_function` scores a Python program that must define a function.

1. **Static gate** (:func:`~posttrain.verifiers.code_gate.static_check`, on the host,
   nothing executed): at most ``MAX_CODE_CHARS`` characters, parses, defines the required
   function, imports only from an allow-list, names no module through another module's
   attributes (``statistics.random._os``), no computed-name or evaluating helper, no dunder,
   frame or private attribute, none of ``eval``/``exec``/``open``/``getattr``/``vars``...
   (see :mod:`posttrain.verifiers.code_gate`). Failing it scores 0.
2. **Hidden tests** (:func:`run_hidden_tests`): a *fresh* sandbox (a clean pool lease) gets
   only the submitted files, a harness and the hidden test *inputs*; the harness imports the
   solution, calls the function on each input and appends one JSON line per test to a
   results file. The expected outputs never enter the sandbox: results are compared on the
   host, so printing "PASSED", faking a report, ``exit(0)`` (no results: failures), patching
   the runner or an always-equal object (not JSON) earn nothing. The harness and inputs files
   are hashed before and after the run: a changed or deleted file, or two results for one
   test, marks the run tampered and scores 0. Tests that never report (crash, timeout) fail.
3. **Reward**: ``correct`` = baseline-corrected pass rate ``max(0, (rate - b) / (1 - b))``
   where ``b`` is the best a constant function scores on these tests (the most common
   expected output), or higher when the caller says so (a buggy program's pass rate for
   repair tasks); then ``value = correct · (0.9 + 0.05·efficiency + 0.05·style)``:
   efficiency = 1 within ``cpu_budget_s`` (linearly to 0 at twice it), style = 1 when no
   line is over 100 characters and the code is at most 4× the reference's length + 400.

Guarantees: never raises on any policy text (a sandbox failure raises ``SandboxError`` to the
env, whose ``verify`` turns it into a Score with ``error``); equality is on JSON values
(tuples are lists; ``True`` is not ``1``; floats within 1e-9 relative).

Does not: run tests written in other languages, or measure complexity beyond a CPU budget.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Mapping, Sequence

from posttrain.core.errors import SandboxError
from posttrain.core.types import Score
from posttrain.verifiers.code_gate import (  # noqa: F401 - the gate's names, re-exported
    ALLOWED_IMPORTS,
    BANNED_CALLS,
    MAX_CODE_CHARS,
    static_check,
)

_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
HARNESS, CASES, RESULTS = "_harness.py", "_cases.json", "_results.jsonl"

_HARNESS_SRC = '''import json
cases = json.load(open("{cases}"))
out = open("{results}", "w", buffering=1)
import {module} as solution
fn = solution.{fn}
for i, args in enumerate(cases):
    try:
        line = json.dumps({{"i": i, "ok": True, "r": fn(*args)}})
    except BaseException as exc:
        line = json.dumps({{"i": i, "ok": False, "e": type(exc).__name__}})
    out.write(line + "\\n")
'''


def extract_code(text: str) -> str:
    """The program in a reply, strictly: exactly one ``<answer>`` block with nothing after it
    (reasoning before it is fine), else the whole text; inside, exactly one code fence or none.

    Anything else gives "" (which fails the static gate): several answer blocks, or text after
    the answer, is an answer padded with candidates, and the policy must commit to one program.
    """
    text = text or ""
    body = _ANSWER.findall(text)
    if len(body) > 1 or (body and text[text.rindex("</answer>") + len("</answer>"):].strip()):
        return ""
    code = body[0] if body else text
    fences = _FENCE.findall(code)
    if len(fences) > 1:
        return ""
    return (fences[0] if fences else code).strip("\n")


@dataclass(frozen=True)
class TestRun:
    """Per-test outcomes of one hidden-test run (``outputs[i]`` None: no result)."""

    outputs: tuple[Any, ...]
    reported: tuple[bool, ...]
    cpu_s: float
    status: str
    tampered: str = ""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_hidden_tests(files: Mapping[str, str], module: str, fn_name: str,
                     inputs: Sequence[Sequence[Any]],
                     sandbox_factory: Callable[[], ContextManager[Any]], *,
                     timeout: float = 10.0) -> TestRun:
    """Run ``fn_name(*args)`` for each input in a fresh sandbox holding only ``files``."""
    harness = _HARNESS_SRC.format(cases=CASES, results=RESULTS, module=module, fn=fn_name).encode()
    cases = json.dumps([list(a) for a in inputs]).encode()
    with sandbox_factory() as sb:
        for path, text in files.items():
            sb.write_file(path, text)
        sb.write_file(HARNESS, harness)
        sb.write_file(CASES, cases)
        res = sb.exec(["python3", "-E", "-s", HARNESS], timeout=timeout, cpu_time=timeout)
        if res.status == "sandbox_error":
            raise SandboxError(f"sandbox failed while running tests: {res.reason}")
        tampered = ""
        for path, want in ((HARNESS, harness), (CASES, cases)):
            try:
                if _sha(sb.read_file(path)) != _sha(want):
                    tampered = f"{path} was modified"
            except Exception:  # deleted or replaced by something unreadable
                tampered = f"{path} was deleted or replaced"
        try:
            raw = sb.read_file(RESULTS, max_bytes=4 << 20).decode("utf-8", "replace")
        except Exception:
            raw = ""
    outputs: list[Any] = [None] * len(inputs)
    reported = [False] * len(inputs)
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
            i = int(rec["i"])
        except (ValueError, KeyError, TypeError):
            tampered = tampered or "unreadable line in the results"
            continue
        if not 0 <= i < len(inputs) or reported[i]:
            tampered = tampered or f"result for test {i} reported twice or out of range"
            continue
        reported[i] = bool(rec.get("ok"))
        outputs[i] = rec.get("r") if rec.get("ok") else None
    return TestRun(tuple(outputs), tuple(reported), res.cpu_s, res.status, tampered)


def same_value(a: Any, b: Any) -> bool:
    """JSON-value equality: types must agree (bool is not int), floats to 1e-9 relative."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) or isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def constant_baseline(expected: Sequence[Any]) -> float:
    """The pass rate of the best constant function: the share of the most common output."""
    if not expected:
        return 0.0
    counts = Counter(json.dumps(e, sort_keys=True) for e in expected)
    return counts.most_common(1)[0][1] / len(expected)


def style_score(code: str, reference: str) -> float:
    long_lines = any(len(line) > 100 for line in code.splitlines())
    bloated = len(code) > 4 * len(reference) + 400
    return 1.0 - 0.5 * long_lines - 0.5 * bloated


def verify_function(code: str, *, fn_name: str, inputs: Sequence[Sequence[Any]],
                    expected: Sequence[Any], reference: str,
                    sandbox_factory: Callable[[], ContextManager[Any]], version: str,
                    module: str = "solution", baseline: float | None = None,
                    cpu_budget_s: float = 2.0, timeout: float = 10.0) -> Score:
    """The Score of ``code`` on hidden tests (see the module docstring)."""
    why = static_check(code, fn_name)
    if why is not None:
        return Score(0.0, components={"static": (0.0, 0.0), "correct": (0.0, 0.9)},
                     passed=0, total=len(inputs), reason=f"static check: {why}",
                     verifier_version=version)
    run = run_hidden_tests({f"{module}.py": code}, module, fn_name, inputs, sandbox_factory,
                           timeout=timeout)
    if run.tampered:
        return Score(0.0, components={"static": (1.0, 0.0), "correct": (0.0, 0.9),
                                      "tamper": (1.0, 0.0)},
                     passed=0, total=len(inputs), reason=f"tampering: {run.tampered}",
                     verifier_version=version)
    passed = sum(ok and same_value(o, e) for ok, o, e in zip(run.reported, run.outputs, expected))
    rate = passed / len(inputs) if inputs else 0.0
    b = max(constant_baseline(expected), baseline or 0.0)
    correct = max(0.0, (rate - b) / (1.0 - b)) if b < 1.0 else float(rate == 1.0)
    eff = 1.0 if run.cpu_s <= cpu_budget_s else max(0.0, 2.0 - run.cpu_s / cpu_budget_s)
    style = style_score(code, reference)
    value = correct * (0.9 + 0.05 * eff + 0.05 * style)
    return Score(value, components={"static": (1.0, 0.0), "correct": (correct, 0.9),
                                    "efficiency": (eff * correct, 0.05),
                                    "style": (style * correct, 0.05)},
                 passed=passed, total=len(inputs),
                 reason=f"{passed}/{len(inputs)} hidden tests (baseline {b:.2f}), run {run.status}",
                 verifier_version=version)
