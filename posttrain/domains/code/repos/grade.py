"""Scoring a submitted repository tree: the pristine suite, hidden tests and regression gate.

What it is: :func:`grade` takes the package's source files as the episode left them (only
the manifest's ``sources``: test files, ``conftest.py``, the runner and everything else come
from the pristine image, so editing or deleting a test, or a ``conftest.py`` that exits 0,
changes nothing), writes them into a *fresh* sandbox on the package image, runs the whole
pristine suite — hidden tests included — and scores:

    value = hidden_passed / hidden_total × max(0, 1 − BREAK_COST × broken)

where ``broken`` counts gate tests (baseline-passing, not hidden) that fail: the fix that
breaks another test costs ``BREAK_COST`` per test broken.

Guarantees: the unfixed tree scores 0 (every hidden test fails by validation); a static gate
scores 0, without running, a submission whose source gains a name the pristine file lacks
from ``TAMPER`` (pytest internals, ``sys.exit``/``os._exit``, ``sys.modules``, ``builtins``,
``atexit``): package code runs inside the pytest process, and those are how it could forge a
report; no report at all (a crash, a timeout) scores 0.

Does not: stop tampering that avoids every name in ``TAMPER`` (e.g. built by string
concatenation and ``getattr``); the isolated sandbox bounds what such code can reach, not
what it reports. Judge only behaviour, not the diff's size.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from posttrain.core.types import Score

from .fetch import Package
from .image import read_source, run_suite, template

BREAK_COST = 0.25
GRADE_TIMEOUT_S = 120.0
TAMPER = ("pytest", "junit", "sys.exit", "os._exit", "sys.modules", "builtins", "atexit",
          "__import__", "settrace", "setprofile")


def tampered(pkg: Package, files: Mapping[str, str]) -> str | None:
    """The first ``TAMPER`` name a submitted file gains over its pristine text, or None."""
    for path, text in files.items():
        pristine = read_source(pkg, path)
        for name in TAMPER:
            pat = re.escape(name)
            if len(re.findall(pat, text)) > len(re.findall(pat, pristine)):
                return f"{path} adds {name!r}"
    return None


def _score(version: str, value: float, hidden: tuple[int, int], broken: int, reason: str) -> Score:
    return Score(value, components={"hidden_tests": (hidden[0] / max(1, hidden[1]), 1.0),
                                    "regressions": (float(broken), 0.0)},
                 passed=hidden[0], total=hidden[1], reason=reason, verifier_version=version)


def grade(pkg: Package, hidden: list[str], gate: list[str], files: Mapping[str, str], *,
          version: str, lease: Any) -> Score:
    """Score ``files`` (path -> text, the package sources) against the pristine suite.

    ``lease(template)`` is a context-manager factory of a fresh sandbox on that template."""
    n = len(hidden)
    bad = tampered(pkg, files)
    if bad:
        return _score(version, 0.0, (0, n), 0, f"tampering: {bad}")
    with lease(template(pkg)) as sb:
        for path, text in files.items():
            sb.write_file(path, text)
        cases = run_suite(sb, pkg, GRADE_TIMEOUT_S)
    if not cases:
        return _score(version, 0.0, (0, n), 0, "the test suite produced no report")
    ok = {k for k, c in cases.items() if c.outcome == "passed"}
    passed = sum(t in ok for t in hidden)
    broken = sum(t not in ok for t in gate)
    value = passed / max(1, n) * max(0.0, 1.0 - BREAK_COST * broken)
    return _score(version, value, (passed, n), broken,
                  f"{passed}/{n} hidden tests pass, {broken} other test(s) broken")
