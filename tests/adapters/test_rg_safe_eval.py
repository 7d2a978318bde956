"""No reasoning-gym scorer runs a policy's answer as code (found by tests/fuzz).

Before the fix, ``__import__('os').system('touch F')`` as the answer of
``algorithms.rg_binary_matrix``, ``games.rg_puzzle24`` or ``math.rg_simple_integration``
created F on the host (their scorers ``eval`` or sympy-``parse_expr`` the answer), and
``10**10**10`` / ``1e999999`` froze the trainer's process holding the GIL.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("reasoning_gym")

from posttrain.domains.adapters import _rg_safe_eval as safe  # noqa: E402
from posttrain.domains.base import get_domain, sample_task  # noqa: E402

EVALUATING = ["algorithms.rg_binary_matrix-v1", "algorithms.rg_spiral_matrix-v1", "games.rg_puzzle24-v1",
              "games.rg_countdown-v1", "math.rg_simple_integration-v1",
              "math.rg_intermediate_integration-v1", "math.rg_polynomial_multiplication-v1"]


def test_safe_eval_computes_literals_and_bounded_arithmetic_only():
    assert safe.safe_eval("[[1, 0], [0, 1]]") == [[1, 0], [0, 1]]
    assert safe.safe_eval("(0x3a + 0x4b) << 2") == (0x3a + 0x4b) << 2
    assert safe.safe_eval("-3 // 2 + 2 ** 10") == -2 + 1024
    for bad in ["__import__('os')", "open('/etc/passwd').read()", "(1).__class__", "[x for x in ()]",
                "lambda: 1", "10**10**10", "9**9**9", "1 << 10**9", "'a' * 10**9", "[0] * 10**9",
                "(" * 100_000, "f'{1}'"]:
        t0 = time.perf_counter()
        with pytest.raises(ValueError):
            safe.safe_eval(bad)
        assert time.perf_counter() - t0 < 0.5, bad


def test_expression_gate_admits_algebra_and_nothing_that_runs():
    for ok in ["7*x**9/10 - 6*x**5 + x**4 + C", "-3*x*atan(3*x) + log(9*x**2 + 1)/6 + C",
               "(3 + 5) * 3 - 0", "sqrt(x)**(1/2)", "exp(x**2)", "x^2 + 1"]:
        safe.check_expression(ok)
    for bad in ["__import__('os').system('id')", "x.__class__", "sin.__globals__", "9**9**9",
                "(x**99)**99", "1e999999", "factorial(10**6)", "lambda: 1", "eval('1')", "'s'",
                "x[0]", "Symbol('x', real=True)", "_x"]:
        with pytest.raises(ValueError):
            safe.check_expression(bad)


@pytest.mark.parametrize("did", EVALUATING)
def test_no_answer_runs_on_the_host(did, tmp_path):
    dom = get_domain(did)
    task = sample_task(dom, 0, tuple(dom.difficulties)[0])
    assert dom.score(task, dom.solve(task)).value == 1.0
    marker = tmp_path / "pwned"
    for payload in [f"__import__('os').system('touch {marker}')",
                    f"[__import__('pathlib').Path('{marker}').touch()]"]:
        score = dom.score(task, payload)
        assert score.value == 0.0 and score.error is None, score
        assert not marker.exists(), f"{did}: the answer ran as code"
    for hang in ["10**10**10", "9**9**9", "1e999999", "2**2**2**2**2**2"]:
        t0 = time.perf_counter()
        assert dom.score(task, hang).value == 0.0
        assert time.perf_counter() - t0 < 5.0, (did, hang)


def test_the_class_is_closed_in_every_loaded_module():
    """Every reasoning-gym module whose source calls eval or parse_expr is patched, not only
    the generators named above (a new generator that evals is covered on import)."""
    get_domain(EVALUATING[0]).score(sample_task(get_domain(EVALUATING[0]), 0, 1), "x")
    safe.harden()
    checked = 0
    for name, mod in list(sys.modules.items()):
        if not name.startswith("reasoning_gym.") or not getattr(mod, "__file__", None):
            continue
        src = Path(mod.__file__).read_text(errors="replace") if mod.__file__.endswith(".py") else ""
        if safe._EVAL_CALL.search(src):
            assert mod.eval is safe.safe_eval, name
            checked += 1
        for value in vars(mod).values():
            if getattr(value, "__name__", "") == "parse_expr" and callable(value):
                # sympy's parse_expr is guarded; a module's own parser (propositional_logic's
                # reader of "¬Q ∧ P", which runs nothing) is left alone
                if not getattr(value, "__posttrain_guarded__", False):
                    assert not str(getattr(value, "__module__", "")).startswith("sympy"), name
            if getattr(value, "__name__", "") == "sympy" and hasattr(value, "parse_expr"):
                assert isinstance(value, safe._GuardedSympy), name
    assert checked >= 4
