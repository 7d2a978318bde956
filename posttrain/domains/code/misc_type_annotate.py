"""Add type annotations: ``code.misc_type_annotate-v1``.

Trains: inferring precise types from code and an example call, and writing them as Python
annotations. The task is a module of 2, 3 or 4 functions (difficulty) without annotations;
the answer is the same module with every parameter and return annotated. Level 3 draws from
the harder types too (``X | None``, tuples, nested containers).

Verifier (a small checker, on the host, nothing executed): the answer must parse and, with
every annotation stripped, be the *same AST* as the given module (so behaviour is preserved by
construction — the only edits allowed are annotations); then each annotation slot is
compared with the expected type after canonicalisation (``typing.List[int]`` = ``List[int]``
= ``list[int]``; ``Optional[X]`` = ``Union[X, None]`` = ``X | None``, unions unordered;
string annotations parsed). Reward = share of slots right (component ``slots``), 0 when the
AST gate fails (component ``unchanged_code``).

Probes (≤ 0.05): the module unchanged, every slot ``Any``, every slot ``object``, the right
annotations on changed code (a function body replaced), annotations as comments only.
Does not: run a real type checker (mypy); the expected type is the one of the reference.
"""

from __future__ import annotations

import ast
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer
from posttrain.verifiers.code import extract_code

from ._kit import answer_reference

# (annotated source, example comment, hard?)
FUNCS = (
    ("def word_lengths(words: list[str]) -> dict[str, int]:\n    return {w: len(w) for w in words}\n",
     'word_lengths(["ab", "c"]) == {"ab": 2, "c": 1}', False),
    ("def scale(values: list[float], factor: float) -> list[float]:\n"
     "    return [v * factor for v in values]\n", "scale([1.5, 2.0], 0.5) == [0.75, 1.0]", False),
    ("def is_mirror(s: str) -> bool:\n    return s == s[::-1]\n", 'is_mirror("abba") == True', False),
    ("def join_words(words: list[str], sep: str) -> str:\n    return sep.join(words)\n",
     'join_words(["a", "b"], "-") == "a-b"', False),
    ("def lookup(table: dict[str, int], key: str, default: int) -> int:\n"
     "    return table.get(key, default)\n", 'lookup({"a": 1}, "b", 0) == 0', False),
    ("def mean(xs: list[float]) -> float:\n    return sum(xs) / len(xs) if xs else 0.0\n",
     "mean([1.0, 2.5]) == 1.75", False),
    ("def count_over(xs: list[int], limit: int) -> int:\n    return sum(1 for x in xs if x > limit)\n",
     "count_over([1, 5, 9], 4) == 2", False),
    ("def first_index(xs: list[int], target: int) -> int | None:\n"
     "    for i, x in enumerate(xs):\n        if x == target:\n            return i\n    return None\n",
     "first_index([4, 7], 7) == 1 and first_index([], 3) is None", True),
    ("def min_max(xs: list[int]) -> tuple[int, int]:\n    return (min(xs), max(xs))\n",
     "min_max([3, 1, 2]) == (1, 3)", True),
    ("def split_pairs(text: str) -> list[tuple[str, int]]:\n    out = []\n"
     "    for part in text.split(\",\"):\n        k, v = part.split(\"=\")\n"
     "        out.append((k, int(v)))\n    return out\n", 'split_pairs("a=1,b=2") == [("a", 1), ("b", 2)]',
     True),
    ("def group_sizes(groups: dict[str, list[str]]) -> dict[str, int]:\n"
     "    return {k: len(v) for k, v in groups.items()}\n", 'group_sizes({"x": ["a", "b"]}) == {"x": 2}',
     True),
    ("def parse_flag(s: str) -> bool | None:\n    if s in (\"yes\", \"no\"):\n        return s == \"yes\"\n"
     "    return None\n", 'parse_flag("yes") == True and parse_flag("?") is None', True),
)

_ALIASES = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset"}


def canon(node: ast.AST | None) -> str:
    """A canonical spelling of an annotation (see the module docstring); "" for none."""
    if node is None:
        return ""
    return "|".join(sorted(set(_union_parts(node))))


def _union_parts(node: ast.AST) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_parts(node.left) + _union_parts(node.right)
    if isinstance(node, ast.Subscript) and _single(node.value) in ("Optional", "Union"):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = [p for a in args for p in _union_parts(a)]
        return out + (["None"] if _single(node.value) == "Optional" else [])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _union_parts(ast.parse(node.value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            return ["?"]
    return [_single(node)]


def _single(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.Name):
        return _ALIASES.get(node.id, node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "typing":
        return _ALIASES.get(node.attr, node.attr)
    if isinstance(node, ast.Subscript):
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return f"{_single(node.value)}[{','.join(canon(a) for a in args)}]"
    return "?"


def slots(tree: ast.Module) -> dict[str, str]:
    """``fn.param`` / ``fn.return`` -> canonical annotation, for every top-level function."""
    out = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
                out[f"{fn.name}.{a.arg}"] = canon(a.annotation)
            out[f"{fn.name}.return"] = canon(fn.returns)
    return out


def strip(tree: ast.Module) -> str:
    """The AST dump of ``tree`` with every annotation removed (the code that runs)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
    return ast.dump(tree)


def _draw(rng: random.Random, difficulty: int) -> Draft:
    pool = [f for f in FUNCS if difficulty == 3 or not f[2]]
    chosen = rng.sample(pool, difficulty + 1)
    ref = "\n\n".join(src for src, _, _ in chosen)
    bare_tree = ast.parse(ref)
    strip(bare_tree)
    bare = ast.unparse(bare_tree) + "\n"
    notes = "\n".join(f"# {ex}" for _, ex, _ in chosen)
    prompt = (f"Add type annotations (every parameter and every return value) to this module "
              f"without changing anything else. Example calls:\n{notes}\n```python\n{bare}```\n"
              "Reply with the whole annotated module inside <answer>...</answer>.")
    return Draft(prompt, public={"module": bare},
                 hidden={"reference": ast.unparse(ast.parse(ref)) + "\n",
                         "expected": slots(ast.parse(ref))})


def _check(task: Task, answer: str) -> Score:
    code = extract_code(answer)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Score(0.0, components={"unchanged_code": (0.0, 0.0), "slots": (0.0, 1.0)},
                     reason="does not parse", verifier_version=task.domain)
    got = slots(tree)
    if strip(tree) != strip(ast.parse(task.public["module"])):
        return Score(0.0, components={"unchanged_code": (0.0, 0.0), "slots": (0.0, 1.0)},
                     reason="the code changed (only annotations may be added)",
                     verifier_version=task.domain)
    want = task.hidden["expected"]
    right = sum(got.get(k) == v for k, v in want.items())
    return Score(right / len(want), components={"unchanged_code": (1.0, 0.0),
                                                "slots": (right / len(want), 1.0)},
                 passed=right, total=len(want), reason=f"{right}/{len(want)} annotations right",
                 verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    ref = task.hidden["reference"]
    anys, objs = ast.parse(ref), ast.parse(ref)
    for t, name in ((anys, "Any"), (objs, "object")):
        for node in ast.walk(t):
            if isinstance(node, ast.arg):
                node.annotation = ast.Name(name)
            elif isinstance(node, ast.FunctionDef):
                node.returns = ast.Name(name)
    changed = ast.parse(ref)
    first = next(n for n in changed.body if isinstance(n, ast.FunctionDef))
    first.body = [ast.Return(ast.Constant(None))]
    comments = task.public["module"].replace("):", "):  # annotated")
    return {"unchanged": format_answer(task.public["module"]),
            "all_any": format_answer("from typing import Any\n" + ast.unparse(anys)),
            "all_object": format_answer(ast.unparse(objs)),
            "changed_body": format_answer(ast.unparse(changed)),
            "comments_only": format_answer(comments)}


TypeAnnotate = register_domain(SingleTurnDomain(
    "code.misc_type_annotate-v1", _draw, _check, _exploits, reference=answer_reference,
    description=__doc__))
