"""No reasoning-gym scorer evaluates a policy's answer as code (see :mod:`.reasoning_gym`).

Several reasoning-gym scorers run the answer they are given: ``eval(answer)``
(``binary_matrix``, ``spiral_matrix``) or sympy's ``parse_expr(answer)``, which is ``eval``
after a token rewrite (``puzzle24``, ``countdown``, ``polynomial_multiplication``,
``simple_integration``, ``intermediate_integration``). In the trainer's process that is host
code execution by the policy: ``__import__('os').system(...)`` as an answer ran, and
``10**10**10`` froze the whole process (a C loop holding the GIL, past every timeout).

:func:`harden` closes the class, not the instances: every loaded ``reasoning_gym`` module
whose source calls ``eval`` gets a module-global ``eval`` that shadows the builtin and only
computes literals and bounded arithmetic (:func:`safe_eval`); every module that reaches
sympy's ``parse_expr`` (by name, or as ``sympy.parse_expr``/``sp.parse_expr``) gets one that
first admits only a small expression grammar (:func:`check_expression`). Anything else
raises ``ValueError``, which the scorers treat as a wrong answer. Modules imported later are
covered by calling :func:`harden` again (the adapter does it before every scorer it builds).

Guarantees: neither replacement calls the builtin ``eval``/``exec`` on the text it checks;
both are bounded in size (characters, nodes, exponents, shifts), so no answer can make a
scorer run for long in them. Does not: change what a scorer accepts among safe answers (a
generator's own trusted ``eval`` of its arithmetic problem still computes the same value).
"""

from __future__ import annotations

import ast
import cmath
import operator
import re
import sys
import types
from pathlib import Path
from typing import Any

MAX_CHARS = 20_000
MAX_NODES = 400  # sympy's simplify() on the answer must stay quick
MAX_EXPONENT = 100
MAX_EXPONENT_PRODUCT = 1_000  # along a chain (a**b)**c: at most a**1000
MAX_SHIFT = 4_096
MAX_INT_DIGITS = 400

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
        ast.BitOr: operator.or_, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
          ast.Not: operator.not_}
# sympy callables an algebra/arithmetic answer may name (factorial/gamma are left out: 10**6!
# is a hang, and no generator's answer needs them)
SYMPY_FUNCTIONS = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "atan2",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "log", "ln", "sqrt", "Abs",
    "abs", "Rational", "Integer", "Float", "Symbol",
})
_EVAL_CALL = re.compile(r"(?<![\w.])eval\s*\(")


def _parse(text: Any, max_nodes: int) -> ast.Expression:
    if not isinstance(text, str):
        raise ValueError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ValueError(f"expression longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not an expression ({type(exc).__name__})") from None
    if sum(1 for _ in ast.walk(tree)) > max_nodes:
        raise ValueError(f"expression larger than {max_nodes} nodes")
    return tree


def _const_number(node: ast.AST) -> float | None:
    """The value of a plain (optionally signed) number literal, else None."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign, node = (-sign if isinstance(node.op, ast.USub) else sign), node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return sign * node.value
    return None


def _has_name(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) for n in ast.walk(node))


def _exponent_ok(node: ast.BinOp, depth_product: float) -> float:
    """Check one ``**``; return the exponent product along its base chain."""
    exp = node.right
    if isinstance(exp, ast.BinOp) and isinstance(exp.op, ast.Div):  # x**(1/2)
        a, b = _const_number(exp.left), _const_number(exp.right)
        if a is not None and b is not None and abs(a) <= MAX_EXPONENT and abs(b) <= MAX_EXPONENT:
            return depth_product
    value = _const_number(exp)
    if value is None:
        if _has_name(exp) and not _has_pow(exp):
            return depth_product  # a symbolic exponent (e**x) is not computed
        raise ValueError("exponent must be a number of at most "
                         f"{MAX_EXPONENT} or a plain symbolic expression")
    if abs(value) > MAX_EXPONENT:
        raise ValueError(f"exponent {value!r} above {MAX_EXPONENT}")
    product = depth_product * max(1.0, abs(value))
    if product > MAX_EXPONENT_PRODUCT:
        raise ValueError(f"nested powers multiply to more than {MAX_EXPONENT_PRODUCT}")
    return product


def _has_pow(node: ast.AST) -> bool:
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) for n in ast.walk(node))


def _check_int(value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_DIGITS * 4:
        raise ValueError("integer literal too large")


def check_expression(text: Any, *, functions: frozenset[str] = SYMPY_FUNCTIONS) -> ast.Expression:
    """Admit ``text`` only when it is a bounded arithmetic expression over numbers, plain
    names and calls of ``functions``: no attributes, subscripts, strings, lambdas,
    comprehensions, keywords, dunders; raise ``ValueError`` with the reason otherwise."""
    tree = _parse(text, MAX_NODES)

    def visit(node: ast.AST, pow_product: float) -> None:
        if isinstance(node, ast.Expression):
            return visit(node.body, pow_product)
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float, complex)) or isinstance(node.value, bool):
                raise ValueError(f"literal {type(node.value).__name__} not allowed")
            if isinstance(node.value, (float, complex)) and not cmath.isfinite(node.value):
                # 1e999999: sympy reads the digits as an arbitrary-precision Float (a hang)
                raise ValueError("number literal out of range")
            return _check_int(node.value)
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise ValueError(f"name {node.id!r} not allowed")
            return None
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return visit(node.operand, pow_product)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            if isinstance(node.op, ast.Pow):
                inner = _exponent_ok(node, pow_product)
                visit(node.left, inner)
                return visit(node.right, 1.0)
            if isinstance(node.op, (ast.LShift, ast.RShift)):
                shift = _const_number(node.right)
                if shift is None or abs(shift) > MAX_SHIFT:
                    raise ValueError(f"shift must be a number of at most {MAX_SHIFT}")
            visit(node.left, pow_product)
            return visit(node.right, pow_product)
        if isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                visit(elt, pow_product)
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in functions and not node.keywords:
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    raise ValueError("starred arguments not allowed")
                visit(arg, pow_product)
            return None
        raise ValueError(f"{type(node).__name__} not allowed in an answer expression")

    visit(tree, 1.0)
    return tree


def safe_eval(text: Any, *_scope: Any) -> Any:
    """``eval`` for literals and bounded arithmetic only: numbers, strings, bytes, booleans,
    None, tuples, lists, sets, dicts, and + - * / // % ** ^ & | << >> ~ not on them.
    Computed here by walking the tree (never the builtin ``eval``); ``ValueError`` otherwise."""
    # no node cap here: the character cap bounds the walk, and the generators' own trusted
    # problems (bitwise_arithmetic at level 5) are larger than any answer
    tree = _parse(text, MAX_CHARS)

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            _check_int(node.value)
            return node.value
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [ev(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else (
                items if isinstance(node, ast.List) else set(items))
        if isinstance(node, ast.Dict) and None not in node.keys:
            return {ev(k): ev(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) \
                    and abs(right) > MAX_EXPONENT and not (isinstance(left, (int, float)) and abs(left) <= 1):
                raise ValueError(f"exponent {right!r} above {MAX_EXPONENT}")
            if isinstance(node.op, (ast.LShift, ast.RShift)) and isinstance(right, int) \
                    and abs(right) > MAX_SHIFT:
                raise ValueError(f"shift {right!r} above {MAX_SHIFT}")
            if isinstance(node.op, ast.Mult) and (isinstance(left, (str, bytes, list, tuple))
                                                  or isinstance(right, (str, bytes, list, tuple))):
                raise ValueError("sequence repetition not allowed")  # "x" * 10**9
            value = _BIN[type(node.op)](left, right)
            _check_int(value)
            return value
        raise ValueError(f"{type(node).__name__} not allowed (literals and arithmetic only)")

    try:
        return ev(tree.body)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None
    except (TypeError, ZeroDivisionError, OverflowError) as exc:
        raise ValueError(f"cannot compute: {exc}") from None


def guarded_parse_expr(real: Any) -> Any:
    """sympy's ``parse_expr``, reached only by text :func:`check_expression` admits."""
    def parse_expr(s: Any, *args: Any, **kwargs: Any) -> Any:
        check_expression(s)
        return real(s, *args, **kwargs)

    parse_expr.__posttrain_guarded__ = True  # type: ignore[attr-defined]
    return parse_expr


class _GuardedSympy(types.ModuleType):
    """A stand-in for the ``sympy`` module inside one reasoning-gym module: every attribute is
    sympy's, except ``parse_expr``/``sympify``/``S``, which are guarded."""

    def __init__(self, real: types.ModuleType):
        super().__init__(real.__name__)
        self._real = real
        self.parse_expr = guarded_parse_expr(real.parse_expr)

        def sympify(a: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(a, str):
                check_expression(a)
            return real.sympify(a, *args, **kwargs)

        self.sympify = sympify

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


_DONE: set[str] = set()


def _source(mod: types.ModuleType) -> str:
    path = getattr(mod, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def harden_module(mod: types.ModuleType) -> list[str]:
    """Patch one module; return what was patched (``eval``, ``parse_expr``, a sympy name)."""
    src, done = _source(mod), []
    if _EVAL_CALL.search(src) and getattr(mod, "eval", None) is not safe_eval:
        mod.eval = safe_eval  # a module global shadows the builtin for the module's code
        done.append("eval")
    # every module holding sympy gets the guarded stand-in, whether its source names
    # parse_expr or not (sympify is reachable through any sympy attribute)
    for name, value in list(vars(mod).items()):
        if callable(value) and getattr(value, "__name__", "") == "parse_expr" \
                and str(getattr(value, "__module__", "")).startswith("sympy") \
                and not getattr(value, "__posttrain_guarded__", False):
            # sympy's only: a module's own parse_expr (propositional_logic's parser of
            # "¬Q ∧ P") reads its own language and runs nothing
            setattr(mod, name, guarded_parse_expr(value))
            done.append(name)
        elif isinstance(value, types.ModuleType) and value.__name__ == "sympy" \
                and not isinstance(value, _GuardedSympy):
            setattr(mod, name, _GuardedSympy(value))
            done.append(name)
    return done


def harden() -> dict[str, list[str]]:
    """Harden every loaded ``reasoning_gym`` module not yet seen; return what changed."""
    changed = {}
    for name, mod in list(sys.modules.items()):
        if not (name == "reasoning_gym" or name.startswith("reasoning_gym.")) or name in _DONE:
            continue
        if not isinstance(mod, types.ModuleType):
            continue
        _DONE.add(name)
        done = harden_module(mod)
        if done:
            changed[name] = done
    return changed
