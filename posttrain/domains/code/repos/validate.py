"""Validation of injected bugs against a package's own test suite, in the isolated sandbox.

What it is: :class:`Validator` opens one sandbox on a package image (:mod:`.image`), runs the
pristine suite once (the *baseline*: the tests that pass without any bug), snapshots the tree,
and then for each candidate — a list of :class:`~.mutate.Hunk` — writes the mutated files,
runs the whole suite, and restores the snapshot (the sandbox's own snapshot/restore, so a
candidate never sees another's edits). :meth:`Validator.check` returns a :class:`Verdict`.

The rule (SWE-smith's): a candidate is *kept* only when at least one baseline-passing test
fails with it (those become the task's hidden tests) and the suite still ran (a report came
back and at most ``max_fail_share`` of the baseline fails: a bug that breaks the import is
not a task). Everything else is *rejected* with the reason — an equivalent mutation, or one
in code no test reaches, fails nothing.

Guarantees: each verdict comes from a real run of the package's tests on the mutated tree;
the baseline is measured in the same sandbox; timings are recorded per run.

Does not: minimise the hidden set or check that the failing tests are *about* the bug.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from posttrain.core.errors import EnvError

from .fetch import Package
from .image import read_source, run_suite, template
from .mutate import Hunk, apply_hunks

RUN_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Verdict:
    kept: bool
    reason: str
    failing: tuple[str, ...] = ()
    messages: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def mutated_files(pkg: Package, hunks: list[Hunk]) -> dict[str, str]:
    """The files ``hunks`` change, as text (pristine file + its hunks)."""
    out: dict[str, str] = {}
    for path in sorted({h.path for h in hunks}):
        out[path] = apply_hunks(read_source(pkg, path), [h for h in hunks if h.path == path])
    return out


class Validator:
    """One sandbox on ``pkg``'s image; use as a context manager."""

    def __init__(self, pkg: Package, max_fail_share: float = 0.4):
        self.pkg = pkg
        self.max_fail_share = max_fail_share
        self.baseline: tuple[str, ...] = ()
        self.runs_s: list[float] = []
        self._cm: Any = None
        self._sb: Any = None
        self._snap: Any = None

    def __enter__(self) -> "Validator":
        from posttrain.sandbox import open_sandbox

        self._cm = open_sandbox(template(self.pkg), timeouts={"wall_s": RUN_TIMEOUT_S,
                                                               "cpu_s": RUN_TIMEOUT_S})
        self._sb = self._cm.__enter__()
        t0 = time.perf_counter()
        cases = run_suite(self._sb, self.pkg, RUN_TIMEOUT_S)
        self.runs_s.append(time.perf_counter() - t0)
        self.baseline = tuple(sorted(k for k, c in cases.items() if c.outcome == "passed"))
        if not self.baseline:
            raise EnvError(f"{self.pkg.key}: the pristine test suite passed no test in the sandbox")
        self._snap = self._sb.snapshot()
        return self

    def __exit__(self, *exc: Any) -> None:
        cm, self._cm = self._cm, None
        if cm is not None:
            cm.__exit__(*exc)

    def check(self, hunks: list[Hunk]) -> Verdict:
        t0 = time.perf_counter()
        try:
            for path, text in mutated_files(self.pkg, hunks).items():
                self._sb.write_file(path, text)
            cases = run_suite(self._sb, self.pkg, RUN_TIMEOUT_S)
        finally:
            self._sb.restore(self._snap)
        dt = time.perf_counter() - t0
        self.runs_s.append(dt)
        if not cases:
            return Verdict(False, "no test report (the suite did not run)", seconds=dt)
        passed = {k for k, c in cases.items() if c.outcome == "passed"}
        failing = tuple(t for t in self.baseline if t not in passed)
        if not failing:
            return Verdict(False, "no test fails (equivalent or untested mutation)", seconds=dt)
        if len(failing) > self.max_fail_share * len(self.baseline):
            return Verdict(False, f"breaks the suite ({len(failing)}/{len(self.baseline)} fail)",
                           seconds=dt)
        msgs = {t: (cases[t].message if t in cases else "not run")[:300] for t in failing[:3]}
        return Verdict(True, f"{len(failing)} test(s) fail", failing, msgs, dt)
