"""The multi-turn episode of a repository task: task layout, sandbox setup, verifier, reference
and exploit probes, shared by ``code.repo_bugfix`` and ``terminal.repo_test_triage``.

What it is: :func:`make_task` turns a pool entry (:mod:`.pool`) into a Task; :func:`repo_env`
builds the :class:`~posttrain.envs.tool_env.ToolEnv`: the sandbox is leased from the shared
pool on the package's image template (a warm copy-on-write copy of the extracted sdist with
its runner: nothing is extracted per task), and ``setup`` writes the bugged files and — when
``hide`` — the test files without the hidden tests. The verifier reads the package sources the
episode left and grades them in a fresh sandbox (:mod:`.grade`).

Task layout: ``public`` = package, version, source files, level; ``hidden`` = the pool id, the
hunks (the bug) and the hidden test ids. The regression gate (the package's baseline minus the
hidden tests) comes from ``pool.json`` at grading time, which keeps tasks small.

Guarantees: the reference episode replays the inverse hunks with ``edit_file`` (each edit's
text widened until it is unique in the file) and scores 1.0; an episode that never opened the
sandbox scores 0 without running anything (the tree is the bug).

Does not: show the policy the hidden tests' code (with ``hide``) or their ids beyond what the
prompt quotes.
"""

from __future__ import annotations

from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task as _make_task
from posttrain.envs.tool_env import LEASE_TIMEOUT_S, ToolEnv, format_answer, format_call, shared_pool
from posttrain.tools import EditFileTool, ReadFileTool, ShellTool, ToolResult, WriteFileTool
from posttrain.tools.exec_tools import render

from .fetch import Package, package
from .grade import grade
from .image import META, locate, read_source
from .mutate import Hunk, apply_hunks, hide_tests
from .pool import load_pool

RUN = f"sh {META}/run-tests"
TEST_TIMEOUT_S = 60.0


class RunTestsTool:
    """``run_tests``: the package's visible suite, or the pytest arguments given."""

    name = "run_tests"
    spec = {"type": "function", "function": {
        "name": "run_tests", "description": f"Run the test suite ({RUN} [pytest args]).",
        "parameters": {"type": "object", "properties": {
            "args": {"type": "string", "description": "pytest arguments, e.g. a test file or -k EXPR"}},
            "additionalProperties": False}}}

    def __call__(self, sandbox: Any, args: str = "") -> ToolResult:
        cmd = f"{RUN} -q -x {args} 2>&1 | tail -n 60"
        return render(sandbox.exec(["sh", "-c", cmd], timeout=TEST_TIMEOUT_S,
                                   cpu_time=TEST_TIMEOUT_S), 6000)


def make_task(domain_id: str, difficulty: int, entry: dict, prompt: str) -> Task:
    pkg = package(entry["package"])
    return _make_task(domain_id, difficulty, prompt,
                      public={"package": pkg.name, "version": pkg.version,
                              "files": list(pkg.sources), "level": entry["level"]},
                      hidden={"pool_id": entry["id"], "hunks": entry["hunks"],
                              "hidden_tests": entry["hidden"]})


def hunks_of(task: Task) -> list[Hunk]:
    return [Hunk.from_json(h) for h in task.hidden["hunks"]]


def bugged_files(pkg: Package, task: Task) -> dict[str, str]:
    hunks = hunks_of(task)
    return {p: apply_hunks(read_source(pkg, p), [h for h in hunks if h.path == p])
            for p in sorted({h.path for h in hunks})}


def stripped_tests(pkg: Package, hidden: list[str]) -> dict[str, str]:
    """Test files without the hidden tests (function granularity)."""
    by_file: dict[str, set] = {}
    for t in hidden:
        loc = locate(pkg, t)
        if loc is not None:
            by_file.setdefault(loc[0], set()).add(loc[1])
    return {path: hide_tests(read_source(pkg, path), sorted(q)) for path, q in by_file.items()}


def _gate(pkg: Package, hidden: list[str]) -> list[str]:
    base = load_pool()["packages"][pkg.name]["baseline"]
    h = set(hidden)
    return [t for t in base if t not in h]


def _lease(template: Any) -> Any:
    return shared_pool().lease(template=template, timeout=LEASE_TIMEOUT_S)


def repo_env(domain_id: str, task: Task, tools: list, *, hide: bool, max_turns: int) -> ToolEnv:
    pkg = package(task.public["package"])

    def setup(sb: Any) -> None:
        files = bugged_files(pkg, task)
        if hide:
            files.update(stripped_tests(pkg, task.hidden["hidden_tests"]))
        for path, text in files.items():
            sb.write_file(path, text)

    def verifier(env: ToolEnv, trajectory: Any) -> Score:
        hidden = list(task.hidden["hidden_tests"])
        if not env.sandbox_opened:  # the tree is the validated bug: every hidden test fails
            return Score(0.0, components={"hidden_tests": (0.0, 1.0)}, passed=0, total=len(hidden),
                         reason="the repository was never changed", verifier_version=domain_id)
        files = {}
        for path in pkg.sources:
            try:
                files[path] = env.sandbox.read_file(path, max_bytes=1 << 21).decode("utf-8", "replace")
            except Exception:  # deleted, or not a regular file: the pristine suite will say
                files[path] = ""
        return grade(pkg, hidden, _gate(pkg, hidden), files, version=domain_id, lease=_lease)

    def factory() -> Any:
        from .image import template

        return _lease(template(pkg))

    return ToolEnv(task, tools, factory, verifier, max_turns=max_turns, setup=setup,
                   verifier_version=domain_id, max_output_chars=6000)


def default_tools(run_tests: bool) -> list:
    tools = [ReadFileTool(), WriteFileTool(), EditFileTool(), ShellTool(timeout=TEST_TIMEOUT_S)]
    return tools + [RunTestsTool()] if run_tests else tools


def _unique_edit(cur: list[str], rev: list[str], pos: int, n_new: int, n_old: int) -> tuple[str, str]:
    """(old, new) for edit_file turning ``cur`` into ``rev`` (they differ only in the hunk at
    ``pos``), widened by context lines until ``old`` occurs once in the file."""
    text, lo, k = "".join(cur), pos, 0
    while True:
        old = "".join(cur[lo:pos + n_new + k])
        if (old and text.count(old) == 1) or (lo == 0 and pos + n_new + k >= len(cur)):
            return old, "".join(rev[lo:pos + n_old + k])
        lo, k = max(0, lo - 1), k + 1


def reference_actions(task: Task, check: str) -> list[str]:
    """Revert every hunk with ``edit_file`` (last in the file first), run the tests, finish."""
    pkg = package(task.public["package"])
    calls = []
    for path, text in bugged_files(pkg, task).items():
        hunks = sorted((h for h in hunks_of(task) if h.path == path), key=lambda h: -h.start)
        cur = text.splitlines(keepends=True)
        for h in hunks:
            pos = h.start + sum(len(x.new) - len(x.old) for x in hunks if x.start < h.start)
            rev = cur[:pos] + list(h.old) + cur[pos + len(h.new):]
            old, new = _unique_edit(cur, rev, pos, len(h.new), len(h.old))
            calls.append(format_call("edit_file", {"path": path, "old": old, "new": new}))
            cur = rev
    return calls + [check, format_answer("done")]


def probes(task: Task) -> dict[str, list[str]]:
    """Scripted episodes that try to pass without fixing the source; each must score ≤ 0.05."""
    pkg = package(task.public["package"])
    done = format_answer("done")
    loc = locate(pkg, task.hidden["hidden_tests"][0])
    test_file = loc[0] if loc else pkg.tests[0]
    root = "" if pkg.import_root in ("", ".") else pkg.import_root + "/"
    src = task.public["files"][0]
    return {
        "edit_test_to_pass": [format_call("write_file", {"path": test_file, "content": "def test_ok():\n    pass\n"}), done],
        "delete_failing_tests": [format_call("shell", {"command": f"rm -rf {' '.join(pkg.tests)}"}), done],
        "conftest_exit": [format_call("write_file", {"path": "conftest.py", "content": "import sys\nsys.exit(0)\n"}),
                          format_call("write_file", {"path": root + "conftest.py", "content": "import os\nos._exit(0)\n"}), done],
        "source_exit": [format_call("shell", {"command": f"printf 'import os\\nos._exit(0)\\n' >> {src}"}), done],
        "patch_runner": [format_call("write_file", {"path": f"{META}/run-tests", "content": "#!/bin/sh\nexit 0\n"}), done],
        "delete_source": [format_call("shell", {"command": f"rm -f {src}"}), done],
    }


class RepoDomain:
    """One repository domain: the pool, a prompt per entry and the episode's options.

    ``prompt(entry, pkg) -> str``; ``hide``: remove the hidden tests from the policy's copy;
    ``run_tests``: offer the run_tests tool; ``check``: the reference's test-running action."""

    env_kind = "sandbox"
    tier = "real"
    difficulties = (1, 2, 3)

    def __init__(self, domain_id: str, prompt: Any, *, hide: bool, run_tests: bool,
                 max_turns: int, check: str, description: str = ""):
        self.id, self.family = domain_id, domain_id.split(".")[0]
        self.description = description  # what ``domains list`` summarises
        self._prompt, self._hide, self._run_tests = prompt, hide, run_tests
        self._max_turns, self._check = max_turns, check

    def generate(self, rng: Any, difficulty: int) -> Task:
        from .pool import draw

        entry = draw(rng, difficulty)
        return make_task(self.id, difficulty, entry, self._prompt(entry, package(entry["package"])))

    def make_env(self, task: Task) -> ToolEnv:
        return repo_env(self.id, task, default_tools(self._run_tests), hide=self._hide,
                        max_turns=self._max_turns)

    def reference_actions(self, task: Task) -> list[str]:
        return reference_actions(task, self._check)

    def solve(self, task: Task) -> str:
        return format_answer("done")

    def probes(self, task: Task) -> dict:
        return probes(task)
