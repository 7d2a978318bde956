"""Function synthesis from a specification: ``code.fn_synthesis-v1`` (one reply) and
``code.fn_synthesis_repl-v1`` (multi-turn: write, run the public tests, read errors, resubmit).

Trains: writing a Python function from a one-line specification and three public examples;
hidden tests (20 other inputs) decide. Difficulty: 1 = one-line arithmetic/list/string
functions, 2 = loops with state (run-length encoding, rotation, Caesar shift, running max),
3 = trickier invariants (longest increasing run, bracket depth, interval merging, bases).

Reward (:func:`posttrain.verifiers.code.verify_function`): static gate (parses, defines the
function, allow-listed imports, no exit/eval/exec/open/dunders, ≤ 20,000 characters), then
the hidden pass rate corrected for the best constant output, times (0.9 + 0.05 efficiency +
0.05 style). The single-turn answer is the program, in ``<answer>`` and/or a code fence.

Probes (≤ 0.05), single-turn: ``hardcode_public`` (a lookup table of the examples),
``constant_output`` (the most common hidden output), ``exit_zero`` (``raise SystemExit(0)``
at import), ``print_passed``, ``patch_json`` (patching the harness's serializer),
``always_equal`` (an object equal to everything), ``sys_exit_call``, ``read_results``
(writing fake results); multi-turn: ``edit_tests``, ``delete_tests``, ``read_hidden`` (search
the disk for the hidden tests: they are not there), ``delete_solution``, ``symlink_solution``,
and the hard-coding/exit/patching programs written to ``solution.py``; plus the generic ones.
"""

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer

from ._common import draw, examples, problem_task, program_probes, repl_env, repl_probes, repl_reference, score_answer


def _prompt(task_fn: str, spec: str, ex: str, repl: bool) -> str:
    how = ("Edit solution.py in the sandbox (tools read_file, write_file, edit_file, shell, "
           "run_tests), then reply <answer>done</answer>." if repl else
           "Reply with the Python program inside <answer>...</answer>.")
    return f"Write a Python function. {spec}\nExamples:\n{ex}\n{how}"


class _Synthesis:
    family = "code"
    difficulties = (1, 2, 3)
    repl = False

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        prob = draw(rng, difficulty, repair=False)
        from ._problems import examples_text

        prompt = _prompt(prob.fn, prob.spec, examples_text(prob.fn, prob.public), self.repl)
        return problem_task(self.id, difficulty, prob, prompt)

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["reference"])

    def score(self, task: Task, answer: str) -> Score:
        return score_answer(self.id, task, answer)

    def probes(self, task: Task) -> dict:
        if self.repl:
            return repl_probes(task)
        return {k: format_answer(v) for k, v in program_probes(task).items()}


@register_domain
class FnSynthesis(_Synthesis):
    id = "code.fn_synthesis-v1"
    env_kind = "sandbox"


@register_domain
class FnSynthesisRepl(_Synthesis):
    id = "code.fn_synthesis_repl-v1"
    env_kind = "sandbox"
    repl = True

    def make_env(self, task: Task):
        return repl_env(self.id, task)

    def reference_actions(self, task: Task) -> list[str]:
        return repl_reference(task)

    def solve(self, task: Task) -> str:
        return format_answer("done")


__all__ = ["FnSynthesis", "FnSynthesisRepl", "examples"]
