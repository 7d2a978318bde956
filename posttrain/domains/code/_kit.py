"""The ``code`` family's kit: the task layout, the verifier call, the multi-turn record and
env, the exploit probes every code domain runs, and the bug-class repair engine.

Layout of a task: ``public`` holds the function name, the specification and the public
examples; ``hidden`` holds the hidden test inputs and expected outputs, the reference source
and (repair) the bug's pass rate, which is the baseline of the reward. Checkers read the id
they score for from ``task.domain``.

Single-reply domains are :class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` records
(``env_kind="sandbox"``: the checker runs code in a fresh sandbox) built from
:func:`code_check`, :func:`program_exploits` and :func:`answer_reference`. Multi-turn
variants are :class:`ReplDomain` records: the policy gets a sandbox with ``solution.py`` (a
stub, or the buggy program) and ``test_public.py`` plus the tools read_file, write_file,
edit_file, shell and ``run_tests``; the submission is ``solution.py`` as the episode leaves
it, verified in a fresh sandbox by :func:`posttrain.verifiers.code.verify_function`. The final
``<answer>`` text is not used.

Repair engine: a :class:`BugTemplate` is a parametrised function (specification, reference
source, one planted edit of a given bug class, constants and an input generator). Each
``repair_<class>.py`` module lists a few templates of its class and registers one domain
through :func:`repair_domain`. Expected outputs come from running *our own* reference (and
the planted bug, for the baseline) on the host at generation time. Guarantees of
:func:`make_repair`: the planted bug fails at least one public example (called in order) and
at most 75% of the hidden tests; the most common hidden output covers at most half of them;
the bug's hidden pass rate is measured by running it on the hidden inputs alone, in order, in
a fresh namespace — as the harness runs them — so stateful bugs (a mutable default, a cache)
are measured as they will be scored. Difficulty: 1 and 2 pick among the templates of that
level; 3 takes any template and buries it among unrelated helper functions, with only two
public examples. It does not plant more than one bug, or check *how* the bug was fixed (only
behaviour counts).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import EditFileTool, ReadFileTool, ShellTool, ToolResult, WriteFileTool
from posttrain.tools.exec_tools import render
from posttrain.verifiers.code import extract_code, verify_function

from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._problems import Problem, distinct_inputs, examples_text, make_problem, public_test_file, run_source

MODULE = "solution"
SOLUTION, PUBLIC_TESTS = "solution.py", "test_public.py"


def problem_draft(prob: Problem, prompt: str, **hidden: Any) -> Draft:
    """The task layout of a problem (``hidden`` adds keys to the hidden part)."""
    return Draft(prompt, public={"function": prob.fn, "spec": prob.spec,
                                 "examples": [[a, o] for a, o in prob.public],
                                 "program": prob.buggy},
                 hidden={"inputs": prob.hidden_inputs, "expected": prob.hidden_expected,
                         "reference": prob.reference, "baseline": prob.buggy_rate, **hidden})


def draft_task(domain_id: str, difficulty: int, d: Draft) -> Task:
    return make_task(domain_id, difficulty, d.prompt, answer=d.answer, public=d.public,
                     hidden=d.hidden, system=d.system, metadata=d.metadata)


def draw_problem(rng: random.Random, difficulty: int, repair: bool) -> Problem:
    return make_problem(rng, difficulty, with_bug=repair)


def score_code(domain_id: str, task: Task, code: str) -> Score:
    h = task.hidden
    return verify_function(code, fn_name=task.public["function"], inputs=h["inputs"],
                           expected=h["expected"], reference=h["reference"],
                           sandbox_factory=pool_lease(), version=domain_id,
                           baseline=h.get("baseline") or None)


def code_check(task: Task, answer: str) -> Score:
    """The family's checker: the program in the answer against the hidden tests."""
    return score_code(task.domain, task, extract_code(answer))


def answer_reference(task: Task) -> str:
    """The reference answer: the reference program inside ``<answer>``."""
    return format_answer(task.hidden["reference"])


# --------------------------------------------------------------------- multi-turn variant
@dataclass(frozen=True)
class CommandTool:
    """A tool without arguments that runs one fixed command in the episode's sandbox and
    shows its output (at most 4,000 characters), e.g. ``run_tests``."""

    name: str
    description: str
    argv: tuple[str, ...]

    @property
    def spec(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}}

    def __call__(self, sandbox: Any) -> ToolResult:
        return render(sandbox.exec(list(self.argv), timeout=10), 4000)


def run_tests_tool() -> CommandTool:
    """``run_tests``: run ``test_public.py`` (the public examples)."""
    return CommandTool("run_tests", "Run the public tests (python3 test_public.py).", ("python3", PUBLIC_TESTS))


def start_program(task: Task) -> str:
    fn = task.public["function"]
    return task.public.get("program") or f"def {fn}(*args):\n    raise NotImplementedError\n"


def repl_env(task: Task, max_turns: int = 10) -> ToolEnv:
    domain_id = task.domain
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

    tools = [ReadFileTool(), WriteFileTool(), EditFileTool(), ShellTool(timeout=10.0), run_tests_tool()]
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


def program_exploits(task: Task) -> dict[str, str]:
    """:func:`program_probes` as answers."""
    return {k: format_answer(v) for k, v in program_probes(task).items()}


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


@dataclass(frozen=True)
class ReplDomain:
    """One multi-turn code domain assembled from its functions.

    ``draw(rng, difficulty) -> Draft`` (the task layout of :func:`problem_draft`); ``env(task)``
    (default :func:`repl_env`); ``reference(task)`` — the scripted episode (default
    :func:`repl_reference`); ``exploits(task) -> {name: episode}`` (default
    :func:`repl_probes`); ``check(task, answer)`` — scoring a one-reply answer (default
    :func:`code_check`); ``description`` — its first line is the skill the catalogue shows.
    """

    id: str
    draw: Callable[[random.Random, int], Draft]
    env: Callable[[Task], ToolEnv] = repl_env
    reference: Callable[[Task], list[str]] = repl_reference
    exploits: Callable[[Task], Mapping[str, Any]] = repl_probes
    check: Callable[[Task, str], Score] = code_check
    description: str = ""
    family: str = "code"
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "sandbox"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return draft_task(self.id, difficulty, self.draw(rng, difficulty))

    def make_env(self, task: Task) -> ToolEnv:
        return self.env(task)

    def reference_actions(self, task: Task) -> list[str]:
        return list(self.reference(task))

    def solve(self, task: Task) -> str:
        return format_answer("done")

    def score(self, task: Task, answer: str) -> Score:
        return self.check(task, answer)

    def probes(self, task: Task) -> dict[str, Any]:
        return dict(self.exploits(task))


# --------------------------------------------------------------------- bug-class repair
@dataclass(frozen=True)
class BugTemplate:
    fn: str
    level: int
    spec: str  # format string over the constants
    source: str  # reference, format string over the constants
    bug: tuple[str, str]  # (old, new): every occurrence of old in the reference becomes new
    consts: Callable[[random.Random], dict[str, Any]]
    inputs: Callable[[random.Random, dict[str, Any]], list[Any]]


NOISE = (
    "def _clamp(v, lo, hi):\n    return max(lo, min(hi, v))\n",
    "def _pairs(xs):\n    return [(xs[i], xs[i + 1]) for i in range(len(xs) - 1)]\n",
    "def _title(words):\n    return \" \".join(w[:1].upper() + w[1:] for w in words)\n",
    "def _mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
    "def _flatten(rows):\n    return [x for row in rows for x in row]\n",
)


def ints(rng: random.Random, lo_n: int, hi_n: int, lo: int = -9, hi: int = 30) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(lo_n, hi_n))]


def word(rng: random.Random, alphabet: str = "abcde", lo: int = 0, hi: int = 8) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def make_repair(rng: random.Random, templates: tuple[BugTemplate, ...], difficulty: int,
                n_hidden: int = 16) -> Problem:
    """A repair problem of this bug class (see the module docstring for the guarantees)."""
    pool = [t for t in templates if t.level == difficulty] or list(templates)
    n_public = 2 if difficulty >= 3 else 3
    for _ in range(60):
        t = rng.choice(pool)
        c = t.consts(rng)
        ref = t.source.format(**c)
        buggy = ref.replace(t.bug[0].format(**c), t.bug[1].format(**c))
        inputs = distinct_inputs(lambda: t.inputs(rng, c), n_public + n_hidden, 20 * (n_public + n_hidden))
        if len(inputs) < n_public + n_hidden or buggy == ref:
            continue
        hid_in, pub_in = inputs[n_public:], inputs[:n_public]
        hid_out = run_source(ref, t.fn, hid_in)
        if max(hid_out.count(o) for o in hid_out) > n_hidden // 2:
            continue
        b_hid = run_source(buggy, t.fn, hid_in)
        rate = sum(a == b for a, b in zip(b_hid, hid_out)) / n_hidden
        pub_out = run_source(ref, t.fn, pub_in)
        b_pub = run_source(buggy, t.fn, pub_in)
        if b_pub == pub_out or rate > 0.75:  # public examples are called in order, like the tests
            continue
        public = list(zip(pub_in, pub_out))
        if difficulty >= 3:
            noise = rng.sample(NOISE, 2)
            ref, buggy = noise[0] + "\n\n" + ref + "\n\n" + noise[1], noise[0] + "\n\n" + buggy + "\n\n" + noise[1]
        return Problem(t.fn, t.spec.format(**c), ref, public, hid_in, hid_out, buggy, rate)
    raise RuntimeError(f"could not plant a bug at difficulty {difficulty}")


def repair_domain(domain_id: str, bug_class: str, templates: tuple[BugTemplate, ...],
                  description: str = "") -> SingleTurnDomain:
    """Register and return the single-reply repair domain of one bug class."""

    def draw(rng: random.Random, difficulty: int) -> Draft:
        prob = make_repair(rng, templates, difficulty)
        prompt = (f"This program should satisfy: {prob.spec}\nIt has a bug ({bug_class}) and "
                  f"fails at least one of these examples (called in this order):\n{examples_text(prob.fn, prob.public)}\n"
                  f"```python\n{prob.buggy}```\n"
                  "Reply with the whole fixed program inside <answer>...</answer>.")
        return problem_draft(prob, prompt)

    return register_domain(SingleTurnDomain(domain_id, draw, code_check, program_exploits,
                                            reference=answer_reference, description=description,
                                            env_kind="sandbox"))
