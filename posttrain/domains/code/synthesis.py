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

from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._kit import ReplDomain, answer_reference, code_check, draw_problem, problem_draft, program_exploits
from ._problems import examples_text


def _prompt(task_fn: str, spec: str, ex: str, repl: bool) -> str:
    how = ("Edit solution.py in the sandbox (tools read_file, write_file, edit_file, shell, "
           "run_tests), then reply <answer>done</answer>." if repl else
           "Reply with the Python program inside <answer>...</answer>.")
    return f"Write a Python function. {spec}\nExamples:\n{ex}\n{how}"


def _draw(rng: random.Random, difficulty: int, repl: bool = False) -> Draft:
    prob = draw_problem(rng, difficulty, repair=False)
    return problem_draft(prob, _prompt(prob.fn, prob.spec, examples_text(prob.fn, prob.public), repl))


def _draw_repl(rng: random.Random, difficulty: int) -> Draft:
    return _draw(rng, difficulty, repl=True)


FnSynthesis = register_domain(SingleTurnDomain(
    "code.fn_synthesis-v1", _draw, code_check, program_exploits, reference=answer_reference,
    description="Write a Python function from a specification and examples, in one reply.\n\n" + __doc__,
    env_kind="sandbox"))
FnSynthesisRepl = register_domain(ReplDomain(
    "code.fn_synthesis_repl-v1", _draw_repl,
    description="Write a Python function in a sandbox: edit, run the public tests, resubmit.\n\n" + __doc__))
