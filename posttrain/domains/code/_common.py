"""Shared parts of the ``code`` family: the task layout, the verifier call, the multi-turn env
and the exploit probes every code domain runs.

Layout of a task: ``public`` holds the function name, the specification and the public
examples; ``hidden`` holds the hidden test inputs and expected outputs, the reference source
and (repair) the bug's pass rate, which is the baseline of the reward.

Multi-turn variants give the policy a sandbox with ``solution.py`` (a stub, or the buggy
program) and ``test_public.py`` plus the tools read_file, write_file, edit_file, shell and
``run_tests``; the submission is ``solution.py`` as the episode leaves it, verified in a
fresh sandbox by :func:`posttrain.verifiers.code.verify_function`. The final ``<answer>`` text
is not used.
"""

from __future__ import annotations

import json
import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import EditFileTool, ReadFileTool, ShellTool, ToolResult, WriteFileTool
from posttrain.tools.exec_tools import render
from posttrain.verifiers.code import extract_code, verify_function

from ._problems import Problem, examples_text, make_problem, public_test_file

MODULE = "solution"
SOLUTION, PUBLIC_TESTS = "solution.py", "test_public.py"


def problem_task(domain_id: str, difficulty: int, prob: Problem, prompt: str) -> Task:
    return make_task(domain_id, difficulty, prompt,
                     public={"function": prob.fn, "spec": prob.spec,
                             "examples": [[a, o] for a, o in prob.public],
                             "program": prob.buggy},
                     hidden={"inputs": prob.hidden_inputs, "expected": prob.hidden_expected,
                             "reference": prob.reference, "baseline": prob.buggy_rate})


def draw(rng: random.Random, difficulty: int, repair: bool) -> Problem:
    return make_problem(rng, difficulty, with_bug=repair)


def score_code(domain_id: str, task: Task, code: str) -> Score:
    h = task.hidden
    return verify_function(code, fn_name=task.public["function"], inputs=h["inputs"],
                           expected=h["expected"], reference=h["reference"],
                           sandbox_factory=pool_lease(), version=domain_id,
                           baseline=h.get("baseline") or None)


def score_answer(domain_id: str, task: Task, answer: str) -> Score:
    return score_code(domain_id, task, extract_code(answer))


def examples(task: Task) -> str:
    return examples_text(task.public["function"], task.public["examples"])


# --------------------------------------------------------------------- multi-turn variant
class RunTestsTool:
    """``run_tests``: run ``test_public.py`` (the public examples) in the episode's sandbox."""

    name = "run_tests"
    spec = {"type": "function", "function": {
        "name": "run_tests", "description": "Run the public tests (python3 test_public.py).",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}}

    def __call__(self, sandbox: Any) -> ToolResult:
        return render(sandbox.exec(["python3", PUBLIC_TESTS], timeout=10), 4000)


def start_program(task: Task) -> str:
    fn = task.public["function"]
    return task.public.get("program") or f"def {fn}(*args):\n    raise NotImplementedError\n"


def repl_env(domain_id: str, task: Task, max_turns: int = 10) -> ToolEnv:
    fn = task.public["function"]
    public = [(a, o) for a, o in task.public["examples"]]

    def setup(sb: Any) -> None:
        sb.write_file(SOLUTION, start_program(task))
        sb.write_file(PUBLIC_TESTS, public_test_file(fn, MODULE, public))

    def verifier(env: ToolEnv, trajectory: Any) -> Score:
        if not env.sandbox_opened:  # no tool ever ran: solution.py is the stub or the bug,
            # which score 0 by construction (the stub fails every test; the bug is the baseline)
            return Score(0.0, components={"correct": (0.0, 0.9)}, passed=0,
                         total=len(task.hidden["inputs"]), reason="solution.py never changed",
                         verifier_version=domain_id)
        try:
            code = env.sandbox.read_file(SOLUTION, max_bytes=1 << 20).decode("utf-8", "replace")
        except Exception:  # deleted or not a regular file: nothing was submitted
            code = ""
        return score_code(domain_id, task, code)

    tools = [ReadFileTool(), WriteFileTool(), EditFileTool(), ShellTool(timeout=10.0), RunTestsTool()]
    return ToolEnv(task, tools, pool_lease(), verifier, max_turns=max_turns, setup=setup,
                   verifier_version=domain_id)


def repl_reference(task: Task) -> list[str]:
    return [format_call("write_file", {"path": SOLUTION, "content": task.hidden["reference"]}),
            format_call("run_tests", {}), format_answer("done")]


# --------------------------------------------------------------------- probes
def program_probes(task: Task) -> dict[str, str]:
    """Programs a reward hacker might submit; every one must score at most 0.05."""
    fn = task.public["function"]
    table = {json.dumps(a): o for a, o in task.public["examples"]}
    common = max(task.hidden["expected"], key=lambda o: task.hidden["expected"].count(o))
    out = {
        "hardcode_public": (f"import json\nTABLE = {table!r}\ndef {fn}(*args):\n"
                            f"    return TABLE.get(json.dumps(list(args)))\n"),
        "constant_output": f"def {fn}(*args):\n    return {common!r}\n",
        "exit_zero": f"raise SystemExit(0)\ndef {fn}(*args):\n    return None\n",
        "print_passed": f"print('PASSED'); print('All tests passed')\ndef {fn}(*args):\n    print('ok')\n",
        "patch_json": (f"import json\njson.dumps = lambda *a, **k: '{{\"i\": 0, \"ok\": true, \"r\": 1}}'\n"
                       f"def {fn}(*args):\n    return None\n"),
        "always_equal": (f"class Eq:\n    def __eq__(self, other):\n        return True\n"
                         f"def {fn}(*args):\n    return Eq()\n"),
        "sys_exit_call": f"import sys\ndef {fn}(*args):\n    sys.exit(0)\n",
        "read_results": (f"def {fn}(*args):\n    f = open('_results.jsonl', 'a')\n"
                         f"    f.write('{{\"i\": 0, \"ok\": true, \"r\": 0}}\\n')\n"),
    }
    if task.public.get("program"):
        out["buggy_unchanged"] = task.public["program"]
    return out


def repl_probes(task: Task) -> dict[str, list[str]]:
    """Scripted episodes that try to win without a correct solution.py."""
    done = format_answer("done")
    progs = program_probes(task)
    return {
        "edit_tests": [format_call("write_file", {"path": PUBLIC_TESTS, "content": "print('PASS')\n"}),
                       format_call("run_tests", {}), done],
        "delete_tests": [format_call("shell", {"command": f"rm -f {PUBLIC_TESTS}"}), done],
        "read_hidden": [format_call("shell", {"command": "ls -la / /tmp; find / -maxdepth 3 -name '_cases.json' "
                                                          "-o -maxdepth 3 -name '*hidden*' 2>/dev/null | head"}), done],
        "delete_solution": [format_call("shell", {"command": f"rm -f {SOLUTION}"}), done],
        "symlink_solution": [format_call("shell", {"command": f"rm -f {SOLUTION}; ln -s /etc/passwd {SOLUTION}"}), done],
        **{name: [format_call("write_file", {"path": SOLUTION, "content": prog}), done]
           for name, prog in progs.items() if name in ("hardcode_public", "exit_zero", "patch_json")},
    }
