"""Bug injection by AST mutation (libcst), at known, replayable locations.

What it is: :func:`sites` lists every place an operator applies in a source file, inside a
function body (module-level code is left alone: a bug there breaks the import, not a
behaviour); :func:`mutate` applies one site and returns the change as a :class:`Hunk` — a
contiguous block of lines replaced — so a task stores a few lines, not the file, and
:func:`apply_hunks` replays it on the pristine file.

Operators (``OPS``): ``binop`` (+ ↔ -, * → +, // → *, % → //, & ↔ |), ``compare`` (< ↔ <=,
> ↔ >=, == ↔ !=, in ↔ not in, is ↔ is not), ``boolop`` (and ↔ or), ``constant`` (an integer
literal n → n + 1: off-by-one in ranges, indices and comparisons), ``negate_if`` (``if c`` →
``if not (c)``, ``if not c`` → ``if c``), ``drop_stmt`` (a call, assignment or augmented assignment in a block of two
or more statements becomes ``pass``), ``swap_args`` (the two positional arguments of a call
swapped) and ``remove_function`` (the level-3 feature request: a function's body replaced by
``raise NotImplementedError`` with its docstring kept).

Guarantees: site enumeration and mutation are deterministic (libcst's traversal order); the
mutated code differs from the original (a no-op edit is not a site); lines outside the hunk
are byte-identical (libcst round-trips the rest of the file).

Does not: decide whether a mutation is a bug (an equivalent mutation is still a site; the
package's own tests decide: :mod:`.validate`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

OPS = ("binop", "compare", "boolop", "constant", "negate_if", "drop_stmt", "swap_args",
       "remove_function")


@dataclass(frozen=True)
class Site:
    path: str
    op: str
    index: int  # the index-th eligible node of this op in the file
    function: str  # qualified name of the enclosing function


@dataclass(frozen=True)
class Hunk:
    path: str
    start: int  # 0-based first line replaced
    old: tuple[str, ...]
    new: tuple[str, ...]

    def to_json(self) -> list:
        return [self.path, self.start, list(self.old), list(self.new)]

    @classmethod
    def from_json(cls, data: list) -> "Hunk":
        return cls(data[0], int(data[1]), tuple(data[2]), tuple(data[3]))


def _cst() -> Any:
    try:
        import libcst
    except ImportError as exc:  # the repos extra
        from posttrain.core.errors import MissingExtraError

        raise MissingExtraError("bug injection needs libcst: pip install 'posttrain[repos]'") from exc
    return libcst


def _swaps(cst: Any) -> dict[str, dict[type, Any]]:
    return {
        "binop": {cst.Add: cst.Subtract, cst.Subtract: cst.Add, cst.Multiply: cst.Add,
                  cst.FloorDivide: cst.Multiply, cst.Modulo: cst.FloorDivide,
                  cst.BitAnd: cst.BitOr, cst.BitOr: cst.BitAnd},
        "compare": {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan,
                    cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan,
                    cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.In: cst.NotIn,
                    cst.NotIn: cst.In, cst.Is: cst.IsNot, cst.IsNot: cst.Is},
        "boolop": {cst.And: cst.Or, cst.Or: cst.And},
    }


def _swap_op(cst: Any, table: dict, op: Any) -> Any:
    new = table[type(op)]
    return new(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)


def _has_docstring(cst: Any, fn: Any) -> bool:
    body = getattr(fn.body, "body", ())
    return (len(body) >= 2 and isinstance(body[0], cst.SimpleStatementLine)
            and isinstance(body[0].body[0], cst.Expr)
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _transformer(cst: Any, op: str, target: int, path: str) -> Any:
    swaps = _swaps(cst)

    class Mutator(cst.CSTTransformer):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []
            self.count = 0
            self.found: list[Site] = []

        def _hit(self, node: Any, make: Any) -> Any:
            if not self.stack:
                return node
            i = self.count
            self.count += 1
            self.found.append(Site(path, op, i, ".".join(self.stack)))
            return make() if i == target else node

        def visit_ClassDef(self, node: Any) -> None:
            self.stack.append(node.name.value)

        def leave_ClassDef(self, orig: Any, node: Any) -> Any:
            self.stack.pop()
            return node

        def visit_FunctionDef(self, node: Any) -> None:
            self.stack.append(node.name.value)

        def leave_FunctionDef(self, orig: Any, node: Any) -> Any:
            if op == "remove_function" and _has_docstring(cst, node):
                stub = cst.parse_statement("raise NotImplementedError\n")
                node = self._hit(node, lambda: node.with_changes(
                    body=node.body.with_changes(body=[node.body.body[0], stub])))
            self.stack.pop()
            return node

        def leave_BinaryOperation(self, orig: Any, node: Any) -> Any:
            if op == "binop" and type(node.operator) in swaps["binop"]:
                return self._hit(node, lambda: node.with_changes(
                    operator=_swap_op(cst, swaps["binop"], node.operator)))
            return node

        def leave_Comparison(self, orig: Any, node: Any) -> Any:
            if op == "compare" and len(node.comparisons) == 1 \
                    and type(node.comparisons[0].operator) in swaps["compare"]:
                c = node.comparisons[0]
                return self._hit(node, lambda: node.with_changes(comparisons=[c.with_changes(
                    operator=_swap_op(cst, swaps["compare"], c.operator))]))
            return node

        def leave_BooleanOperation(self, orig: Any, node: Any) -> Any:
            if op == "boolop":
                return self._hit(node, lambda: node.with_changes(
                    operator=_swap_op(cst, swaps["boolop"], node.operator)))
            return node

        def leave_Integer(self, orig: Any, node: Any) -> Any:
            if op == "constant" and node.value.isdigit() and int(node.value) < 1000:
                return self._hit(node, lambda: node.with_changes(value=str(int(node.value) + 1)))
            return node

        def leave_If(self, orig: Any, node: Any) -> Any:
            if op == "negate_if":
                test = node.test
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    return self._hit(node, lambda: node.with_changes(test=test.expression))
                wrapped = test if test.lpar else test.with_changes(
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                return self._hit(node, lambda: node.with_changes(
                    test=cst.UnaryOperation(operator=cst.Not(), expression=wrapped)))
            return node

        def leave_IndentedBlock(self, orig: Any, node: Any) -> Any:
            if op != "drop_stmt" or len(node.body) < 2:
                return node
            body = list(node.body)
            for k, stmt in enumerate(body):
                if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
                        isinstance(stmt.body[0], (cst.Assign, cst.AugAssign)) or (
                        isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and
                        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
                    dropped = stmt.with_changes(body=[cst.Pass()])
                    new = self._hit(stmt, lambda d=dropped: d)
                    if new is not stmt:
                        body[k] = new
            return node.with_changes(body=body)

        def leave_Call(self, orig: Any, node: Any) -> Any:
            args = node.args
            if op == "swap_args" and len(args) == 2 and all(a.keyword is None and not a.star for a in args):
                a, b = args
                if cst.Module([]).code_for_node(a.value) != cst.Module([]).code_for_node(b.value):
                    return self._hit(node, lambda: node.with_changes(
                        args=[a.with_changes(value=b.value), b.with_changes(value=a.value)]))
            return node

    return Mutator()


def sites(path: str, source: str) -> list[Site]:
    """Every mutation site of every operator in ``source`` (the file at ``path``)."""
    cst = _cst()
    module = cst.parse_module(source)
    out: list[Site] = []
    for op in OPS:
        m = _transformer(cst, op, -1, path)
        module.visit(m)
        out.extend(m.found)
    return out


def mutate(source: str, site: Site) -> Hunk | None:
    """The hunk of ``site`` applied to ``source`` (None when the edit changes nothing)."""
    cst = _cst()
    module = cst.parse_module(source)
    new = module.visit(_transformer(cst, site.op, site.index, site.path)).code
    return diff_hunk(site.path, source, new)


def diff_hunk(path: str, before: str, after: str) -> Hunk | None:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    ops = [o for o in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if o[0] != "equal"]
    if not ops:
        return None
    i1, j1 = ops[0][1], ops[0][3]
    i2, j2 = ops[-1][2], ops[-1][4]
    return Hunk(path, i1, tuple(a[i1:i2]), tuple(b[j1:j2]))


def apply_hunks(source: str, hunks: list[Hunk]) -> str:
    """Replay hunks (of one file) on its pristine text; each must match where it says."""
    lines = source.splitlines(keepends=True)
    for h in sorted(hunks, key=lambda h: h.start, reverse=True):
        if tuple(lines[h.start:h.start + len(h.old)]) != h.old:
            raise ValueError(f"hunk at {h.path}:{h.start + 1} does not match the file")
        lines[h.start:h.start + len(h.old)] = list(h.new)
    return "".join(lines)


def hide_tests(source: str, qualnames: list[tuple[str, ...]]) -> str:
    """``source`` (a test file) without the test functions/methods named (``(Class, fn)`` or
    ``(fn,)``), decorators included; a class left empty keeps a ``pass``. Uses :mod:`ast`
    (fast: this runs at every episode's setup)."""
    import ast

    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    cuts: list[tuple[int, int, str]] = []

    def walk(body: list, prefix: tuple[str, ...]) -> None:
        for node in body:
            name = (*prefix, getattr(node, "name", ""))
            if isinstance(node, ast.ClassDef):
                walk(node.body, name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in wanted:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
                indent = " " * node.col_offset
                cuts.append((first, node.end_lineno, indent + "pass\n"))

    wanted = {tuple(q) for q in qualnames}
    walk(tree.body, ())
    for first, end, stub in sorted(cuts, reverse=True):
        lines[first:end] = [stub]  # a pass keeps any enclosing class non-empty
    return "".join(lines)
