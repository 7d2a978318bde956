"""Fix a failing doctest, multi-turn: ``code.tdd_doctest-v1``.

Trains: the test-driven loop on a module whose function documents its behaviour with
doctests: run the doctests in the sandbox, read the failure, fix the code, run them again.
The bug is drawn from every bug class of the ``code.repair_*`` domains (off-by-one,
comparison, mutable default, division, empty input, late binding, shadowed builtin,
swallowed exception, str/bytes); difficulty as there (3: unrelated helpers around it and two
doctest examples).

Env: ``solution.py`` in a sandbox; tools read_file, write_file, edit_file, shell and
``run_doctests`` (``python3 -m doctest -v solution.py``). The submission is ``solution.py``
as the episode leaves it. Verifier: the docstring with its doctests must still be in the file,
unchanged (component ``doctests_kept``: fixing the documentation instead of the code, or
deleting it, scores 0); then the family's hidden tests in a fresh sandbox with the bug's pass
rate as the baseline (:func:`posttrain.domains.code._kit.score_code`).

Probes (≤ 0.05): the family's multi-turn probes (edit or delete the tests, search the disk for
hidden tests, delete or symlink solution.py, hard-coded/exit/json-patching programs), the
program unchanged, the doctest's expected outputs rewritten to what the bug prints, and the
right code with the doctests deleted.
"""

from __future__ import annotations

import importlib
import random
import textwrap
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import EditFileTool, ReadFileTool, ShellTool, WriteFileTool

from ._kit import SOLUTION, CommandTool, ReplDomain, make_repair, problem_draft, repl_probes, score_code
from ._problems import Problem, run_source

CLASSES = ("off_by_one", "comparison", "mutable_default", "division", "empty_input",
           "late_binding", "shadowed_builtin", "swallowed_exception", "str_bytes")


def _templates() -> tuple:
    return tuple(t for c in CLASSES
                 for t in importlib.import_module(f"posttrain.domains.code.repair_{c}").TEMPLATES)


def docstring(prob: Problem) -> str:
    spec = textwrap.wrap(prob.spec, 88)  # lines over 100 characters cost style credit
    lines = ['    """' + spec[0]] + [f"    {ln}" for ln in spec[1:]] + [""]
    for args, out in prob.public:
        call = f"{prob.fn}({', '.join(repr(a) for a in args)})"
        if out is None:
            lines += [f"    >>> print({call})", "    None"]
        else:
            lines += [f"    >>> {call}", f"    {out!r}"]
    return "\n".join(lines + ['    """']) + "\n"


def with_doc(source: str, fn: str, doc: str) -> str:
    head = f"def {fn}("
    i = source.index(head)
    j = source.index(":\n", i) + 2
    return source[:j] + doc + source[j:]


RUN_DOCTESTS = CommandTool("run_doctests", "Run the doctests of solution.py (verbose).",
                           ("python3", "-m", "doctest", "-v", SOLUTION))


def _draw(rng: random.Random, difficulty: int) -> Draft:
    prob = make_repair(rng, _templates(), difficulty)
    doc = docstring(prob)
    # the doctests must really fail on the bug (outputs the JSON round-trip could hide)
    buggy_out = run_source(prob.buggy, prob.fn, [a for a, _ in prob.public])
    assert buggy_out != [o for _, o in prob.public]
    prob = Problem(prob.fn, prob.spec, with_doc(prob.reference, prob.fn, doc), prob.public,
                   prob.hidden_inputs, prob.hidden_expected,
                   with_doc(prob.buggy, prob.fn, doc), prob.buggy_rate)
    prompt = (f"The doctests of solution.py fail: {prob.fn} has a bug. Fix the code (keep the "
              "docstring and its examples exactly as they are) using the tools read_file, "
              "edit_file, write_file, shell and run_doctests, then reply <answer>done</answer>.")
    return problem_draft(prob, prompt, doc=doc)


def _reference(task: Task) -> list[str]:
    return [format_call("run_doctests", {}),
            format_call("write_file", {"path": SOLUTION, "content": task.hidden["reference"]}),
            format_call("run_doctests", {}), format_answer("done")]


def _env(task: Task) -> ToolEnv:
    def setup(sb: Any) -> None:
        sb.write_file(SOLUTION, task.public["program"])

    def verifier(env: ToolEnv, trajectory: Any) -> Score:
        code = ""
        if env.sandbox_opened:
            try:
                code = env.sandbox.read_file(SOLUTION, max_bytes=1 << 20).decode("utf-8", "replace")
            except Exception:  # deleted or not a regular file: nothing submitted
                code = ""
        if not code or task.hidden["doc"] not in code:
            return Score(0.0, components={"doctests_kept": (0.0, 0.0), "correct": (0.0, 0.9)},
                         passed=0, total=len(task.hidden["inputs"]),
                         reason="solution.py missing, unchanged or its doctests were edited",
                         verifier_version=task.domain)
        return score_code(task.domain, task, code)

    tools = [ReadFileTool(), WriteFileTool(), EditFileTool(), ShellTool(timeout=10.0),
             RUN_DOCTESTS]
    return ToolEnv(task, tools, pool_lease(), verifier, max_turns=10, setup=setup,
                   verifier_version=task.domain)


def _text_check(task: Task, answer: str) -> Score:  # the submission is the file, not text
    return Score(0.0, components={"correct": (0.0, 0.9)}, reason="multi-turn domain: the "
                 "submission is solution.py", verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    done = format_answer("done")
    doc, fn = task.hidden["doc"], task.public["function"]
    bug_out = run_source(task.public["program"], fn, [a for a, _ in task.public["examples"]])
    lied = task.public["program"]
    for (_, good), bad in zip(task.public["examples"], bug_out):
        if good is not None and not isinstance(bad, dict):
            lied = lied.replace(f"    {good!r}\n", f"    {bad!r}\n", 1)
    return {**repl_probes(task), "buggy_unchanged": [done],
            "rewrite_expected": [format_call("write_file", {"path": SOLUTION, "content": lied}), done],
            "delete_doctests": [format_call("write_file", {"path": SOLUTION, "content":
                                task.hidden["reference"].replace(doc, "")}), done]}


DoctestFix = register_domain(ReplDomain("code.tdd_doctest-v1", _draw, env=_env, reference=_reference,
                                        exploits=_exploits, check=_text_check, description=__doc__))
