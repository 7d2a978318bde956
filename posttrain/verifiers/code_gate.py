"""The static gate in front of the code verifier: what a policy's program may name.

:func:`static_check` parses the program (nothing is executed) and refuses anything that can
reach a module, a namespace or an evaluator the allow-list does not grant. The hidden tests
still run in a sandbox; the gate is the first of two walls, and it closes whole classes:

- **imports**: only the modules of :data:`ALLOWED_MODULES`, by their exact dotted names; no
  relative or ``*`` imports; ``from M import n`` only for a public ``n`` that exists and is
  neither a module off the list nor one of :data:`DENIED` (resolved on the real module);
- **module attributes**: a name bound to a module may only be the base of an attribute chain
  (never passed, stored or rebound: a stored module could not be followed); the chain is
  resolved at gate time by walking the real module's attributes, and is refused at the first
  attribute that starts with ``_`` (``random._os``), that does not exist, that is a module
  off the list (``statistics.random``, ``dataclasses.builtins``, ``json.codecs``), or that is
  one of :data:`DENIED`; through classes the walk goes on (``collections.OrderedDict.x``);
- **computed names and evaluators** (:data:`DENIED`): ``operator.attrgetter`` /
  ``methodcaller`` and ``string.Formatter`` (``getattr`` by a string), ``typing.
  get_type_hints`` / ``ForwardRef`` and ``functools.singledispatch`` (they ``eval`` string
  annotations in the program's globals), by identity, however they are reached;
- **names**: no dunder name but ``__name__`` (so no ``__builtins__``, ``__import__``), none of
  :data:`BANNED_CALLS` (``getattr``, ``vars``, ``globals``, ``eval``, ``exec``, ``open``...);
- **attributes on anything**: no dunder attribute, no frame/code/traceback attribute
  (:data:`FRAME_ATTRS`: ``gi_frame.f_builtins`` is ``__builtins__`` without a dunder), and
  no ``_private`` attribute except on ``self`` / ``cls`` (a policy's own class internals),
  which may therefore only be bound as parameters, never assigned;
- **strings**: no format field that reads a private or dunder attribute (``"{0.__class__}"``).

Does not: follow a value through the program (that is why modules may not be stored), judge
what allowed functions compute, or defend against a kernel or interpreter bug; a program that
passes is still untrusted and runs only in the sandbox.
"""

from __future__ import annotations

import ast
import functools
import importlib
import operator
import re
import string
import types
import typing
import warnings
from typing import Any

MAX_CODE_CHARS = 20_000
ALLOWED_IMPORTS = frozenset({
    "json", "math", "itertools", "functools", "collections", "heapq", "bisect", "re", "string",
    "typing", "dataclasses", "operator", "statistics", "fractions"})
# Submodules that are safe to name: their own attributes are walked like any other module's.
ALLOWED_MODULES = ALLOWED_IMPORTS | {"collections.abc", "json.decoder", "json.encoder",
                                     "json.scanner"}
BANNED_CALLS = frozenset({
    "exit", "quit", "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars",
    "getattr", "setattr", "delattr", "breakpoint", "input", "memoryview", "help"})
FRAME_ATTRS = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin",
    "ag_frame", "ag_code", "ag_await", "tb_frame", "tb_next", "f_back", "f_builtins",
    "f_globals", "f_locals", "f_code", "f_trace", "func_globals", "func_code"})
DENIED: dict[int, str] = {id(obj): name for obj, name in (
    (operator.attrgetter, "operator.attrgetter"), (operator.methodcaller, "operator.methodcaller"),
    (string.Formatter, "string.Formatter"), (typing.get_type_hints, "typing.get_type_hints"),
    (typing.ForwardRef, "typing.ForwardRef"), (functools.singledispatch, "functools.singledispatch"),
    (functools.singledispatchmethod, "functools.singledispatchmethod"))}
SELF_NAMES = frozenset({"self", "cls"})
_PRIVATE_FIELD = re.compile(r"\{[^{}]*(?:\.\s*_|\[\s*['\"]?_)")


class Refused(Exception):
    """Why the program fails the gate (the message is the Score's reason)."""


def _module(name: str) -> types.ModuleType:
    if name not in ALLOWED_MODULES:
        raise Refused(f"import of {name!r} is not allowed")
    return importlib.import_module(name)


def _step(obj: Any, attr: str, path: str) -> Any:
    """``getattr(obj, attr)`` for the gate's walk, refusing what may not be reached."""
    if attr.startswith("_"):
        raise Refused(f"private attribute {path}.{attr} is not allowed")
    with warnings.catch_warnings():  # typing.re / typing.io warn when touched
        warnings.simplefilter("ignore")
        try:
            value = getattr(obj, attr)
        except AttributeError:
            raise Refused(f"{path}.{attr} does not exist") from None
    _allowed_value(value, f"{path}.{attr}")
    return value


def _allowed_value(value: Any, path: str) -> None:
    if isinstance(value, types.ModuleType) and value.__name__ not in ALLOWED_MODULES:
        raise Refused(f"{path} is the module {value.__name__!r}, which is not allowed")
    if id(value) in DENIED:
        raise Refused(f"{path} is {DENIED[id(value)]}, which is not allowed (it reaches "
                      "attributes by computed names or evaluates strings)")


def _bind_imports(tree: ast.AST) -> dict[str, Any]:
    """Names bound to modules by the program's imports -> the module objects."""
    bound: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod = _module(a.name)
                if a.asname:
                    bound[a.asname] = mod
                else:
                    top = a.name.split(".")[0]
                    bound[top] = _module(top)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                raise Refused("relative imports are not allowed")
            mod = _module(node.module)
            for a in node.names:
                if a.name == "*":
                    raise Refused(f"'from {node.module} import *' is not allowed")
                value = _step(mod, a.name, node.module)
                if isinstance(value, types.ModuleType):
                    bound[a.asname or a.name] = value
    return bound


def _check_chain(name: ast.Name, parents: dict[int, ast.AST], module: Any) -> None:
    """``name`` is bound to ``module``: it must head an attribute chain that resolves."""
    node: ast.AST = name
    obj, path = module, name.id
    while True:
        up = parents.get(id(node))
        if not (isinstance(up, ast.Attribute) and up.value is node):
            break
        if not isinstance(obj, (types.ModuleType, type)):
            break  # past a function or value: the generic attribute rules apply
        obj, path, node = _step(obj, up.attr, path), f"{path}.{up.attr}", up
    if node is name:
        raise Refused(f"the module {name.id!r} may only be used as 'module.attribute'")


def _check_node(node: ast.AST) -> None:
    if isinstance(node, ast.Name):
        if node.id in BANNED_CALLS or (node.id.startswith("__") and node.id != "__name__"):
            raise Refused(f"use of {node.id!r} is not allowed")
        if node.id in SELF_NAMES and not isinstance(node.ctx, ast.Load):
            # self/cls may read private attributes, so they may only be bound as parameters
            raise Refused(f"assigning to {node.id!r} is not allowed")
    elif isinstance(node, ast.Attribute):
        attr = node.attr
        if attr.startswith("__"):
            raise Refused(f"dunder attribute {attr!r} is not allowed")
        if attr in FRAME_ATTRS:
            raise Refused(f"frame/code attribute {attr!r} is not allowed")
        base = node.value.id if isinstance(node.value, ast.Name) else None
        if attr.startswith("_") and base not in SELF_NAMES:
            raise Refused(f"private attribute {attr!r} is only allowed on self/cls")
    elif isinstance(node, ast.Global):
        raise Refused("global statements are not allowed")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        if _PRIVATE_FIELD.search(node.value):
            raise Refused("a format field reading a private attribute is not allowed")


def _gate(tree: ast.Module, fn_name: str) -> None:
    if not any(isinstance(n, ast.FunctionDef) and n.name == fn_name for n in tree.body):
        raise Refused(f"no top-level function {fn_name!r}")
    bound = _bind_imports(tree)
    parents = {id(child): parent for parent in ast.walk(tree)
               for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(tree):
        _check_node(node)
        if isinstance(node, ast.Name) and node.id in bound:
            if not isinstance(node.ctx, ast.Load):
                raise Refused(f"rebinding the module name {node.id!r} is not allowed")
            _check_chain(node, parents, bound[node.id])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name in bound:
            raise Refused(f"rebinding the module name {node.name!r} is not allowed")


def static_check(code: str, fn_name: str) -> str | None:
    """Why ``code`` fails the static gate, or None when it passes (see the module docstring)."""
    if len(code) > MAX_CODE_CHARS:
        return f"program of {len(code)} characters (at most {MAX_CODE_CHARS})"
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"does not parse: {type(exc).__name__}"
    try:
        _gate(tree, fn_name)
    except Refused as why:
        return str(why)
    except RecursionError:
        return "program nests too deeply"
    return None
