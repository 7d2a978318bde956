"""Config mutations generated from the pydantic schema of :class:`RunConfig` (not a hand list).

What it is: :func:`leaf_fields` walks ``RunConfig`` (sections, nested sections, models in
lists) and yields every settable field with its annotation and its ``Field`` constraints;
:func:`mutations` turns each into hostile configs — a wrong type for its annotation, values
just outside each bound (and non-finite floats, booleans for numbers), an unknown key beside
it — each one a whole config dict (the defaults plus one change), named by the dotted path
the error message must name. :func:`combination_configs` draws schema-valid configs whose
fields sit at their bounds, so the cross-field rules of
:func:`posttrain.trainer.validate.check_run_config` fire without being listed here.

Used by ``tests/fuzz/test_fuzz_config.py`` and ``bench/fuzz.py``.
"""

from __future__ import annotations

import copy
import random
import types
import typing
from dataclasses import dataclass
from typing import Any, Iterator, Literal

import annotated_types as at
from pydantic import BaseModel

from posttrain.core.config import RunConfig

UNKNOWN = "zz_not_a_field"


@dataclass(frozen=True)
class Leaf:
    path: tuple[Any, ...]  # ("rl", "lr") or ("domains", 0, "weight")
    annotation: Any
    constraints: tuple[Any, ...]
    default: Any

    @property
    def dotted(self) -> str:
        return ".".join(str(p) for p in self.path)


@dataclass(frozen=True)
class Mutation:
    """One hostile config: ``data`` differs from the defaults at ``path`` only."""

    path: str  # the dotted path the error must name
    kind: str  # wrong_type | out_of_range | unknown_key | combination
    data: dict
    shown: Any  # the bad value

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.path}={str(self.shown)[:40]}"


def _strip_optional(ann: Any) -> tuple[Any, bool]:
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]), True
    return ann, False


def _model_of(ann: Any) -> type[BaseModel] | None:
    ann, _ = _strip_optional(ann)
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def leaf_fields(model: type[BaseModel] = RunConfig, prefix: tuple[Any, ...] = ()) -> Iterator[Leaf]:
    """Every settable field below ``model`` (a section is walked, not yielded)."""
    for name, field in model.model_fields.items():
        path, ann = prefix + (name,), field.annotation
        sub = _model_of(ann)
        if sub is not None:
            yield from leaf_fields(sub, path)
            continue
        inner, _ = _strip_optional(ann)
        if typing.get_origin(inner) is list and _model_of(typing.get_args(inner)[0]):
            yield Leaf(path, ann, tuple(field.metadata), field.get_default(call_default_factory=True))
            yield from leaf_fields(typing.get_args(inner)[0], path + (0,))
            continue
        yield Leaf(path, ann, tuple(field.metadata), field.get_default(call_default_factory=True))


def section_paths(model: type[BaseModel] = RunConfig, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every model (the root, each section, a model inside a list)."""
    yield prefix
    for name, field in model.model_fields.items():
        sub = _model_of(field.annotation)
        inner, _ = _strip_optional(field.annotation)
        if sub is None and typing.get_origin(inner) is list:
            sub, name = _model_of(typing.get_args(inner)[0]), name
            if sub is not None:
                yield from section_paths(sub, prefix + (name, 0))
            continue
        if sub is not None:
            yield from section_paths(sub, prefix + (name,))


def base_config() -> dict:
    """The defaults as plain data (what a full YAML file of the defaults would hold)."""
    return RunConfig().model_dump(mode="json")


def _set(data: dict, path: tuple[Any, ...], value: Any) -> dict:
    out = copy.deepcopy(data)
    node: Any = out
    for part in path[:-1]:
        if isinstance(node, dict) and node.get(part) is None:
            node[part] = {}  # an optional section off by default (model.lora): on, with its defaults
        node = node[part]
    node[path[-1]] = value
    return out


def _wrong_types(ann: Any) -> list[Any]:
    """Values of a different JSON type than ``ann`` accepts (YAML can write each of them)."""
    inner, optional = _strip_optional(ann)
    origin = typing.get_origin(inner)
    if inner is bool:
        return ["maybe", [True], 2]
    if inner in (int, float):
        return ["not-a-number", [1], {"a": 1}, True]
    if inner is str:
        return [[1, 2], {"a": "b"}, 3]
    if origin is Literal:
        return ["not-one-of-them", 7, [typing.get_args(inner)[0]]]
    if origin is list:
        item = typing.get_args(inner)[0]
        bad_item = "not-a-number" if item in (int, float) else {"a": [1]} if item is str else 5
        return ["not-a-list", {"a": 1}, [bad_item]]
    if origin is dict:
        value = typing.get_args(inner)[1]
        bad_value = "not-a-number" if value in (int, float) else None
        return ["not-a-mapping", [1, 2]] + ([{"k": bad_value}] if bad_value is not None else [])
    if _model_of(inner):
        return ["not-a-section", 5]
    return []


def _out_of_range(leaf: Leaf) -> list[Any]:
    inner, _ = _strip_optional(leaf.annotation)
    out: list[Any] = []
    step = 1 if inner is int else 1e-3
    for c in leaf.constraints:
        if isinstance(c, at.Ge):
            out.append(c.ge - step)
        elif isinstance(c, at.Gt):
            out.append(c.gt)
        elif isinstance(c, at.Le):
            out.append(c.le + step)
        elif isinstance(c, at.Lt):
            out.append(c.lt)
        elif isinstance(c, at.MinLen):
            out.append([] if c.min_length >= 1 else None)
    if inner is float:
        out += [float("nan"), float("inf"), float("-inf")]
    return [v for v in out if v is not None]


def _base_for(path: tuple[Any, ...]) -> dict:
    data = base_config()
    if "domains" in path[:1] and len(path) > 2:  # a field of a list item: keep one item there
        data["domains"] = [{"id": "math.add-v1"}]
    return data


def mutations(leaves: list[Leaf] | None = None) -> list[Mutation]:
    """Every field's wrong types and out-of-range values, and an unknown key in every section."""
    out: list[Mutation] = []
    for leaf in leaves if leaves is not None else list(leaf_fields()):
        base = _base_for(leaf.path)
        for value in _wrong_types(leaf.annotation):
            out.append(Mutation(leaf.dotted, "wrong_type", _set(base, leaf.path, value), value))
        for value in _out_of_range(leaf):
            out.append(Mutation(leaf.dotted, "out_of_range", _set(base, leaf.path, value), value))
    for sec in section_paths():
        base = _base_for(sec + ("x", "y"))
        path = sec + (UNKNOWN,)
        out.append(Mutation(".".join(map(str, path)), "unknown_key", _set(base, path, 1), 1))
    return out


# ----------------------------------------------------------------- cross-field combinations
def _valid_values(leaf: Leaf, rng: random.Random) -> Any:
    """A schema-valid value of ``leaf``, biased to its bounds (where the rules bite)."""
    inner, optional = _strip_optional(leaf.annotation)
    if optional and rng.random() < 0.2:
        return None
    lo = next((c.ge for c in leaf.constraints if isinstance(c, at.Ge)), None)
    lo = next((c.gt + (1 if inner is int else 0.5) for c in leaf.constraints if isinstance(c, at.Gt)), lo)
    hi = next((c.le for c in leaf.constraints if isinstance(c, at.Le)), None)
    if inner is bool:
        return rng.random() < 0.5
    if inner in (int, float):
        picks = [leaf.default] + [v for v in (lo, hi) if v is not None]
        if lo is not None:
            picks.append(lo + (1 if inner is int else 0.5))
        v = rng.choice([p for p in picks if p is not None] or [1])
        return int(v) if inner is int else float(v)
    if typing.get_origin(inner) is Literal:
        return rng.choice(typing.get_args(inner))
    return leaf.default


# Fields whose valid values are registry ids, paths or plugins: drawn from their default only
# (a random string there is a typo, covered by the single-field mutations and the CLI tests).
_KEEP = {"model.path", "async_rl.worker_imports", "async_rl.ray_address", "curriculum.config",
         "domains", "out", "run_name", "rl.algorithm", "inference.backend", "async_rl.executor"}


def combination_configs(n: int, seed: int = 0) -> Iterator[dict]:
    """``n`` configs that pydantic accepts, with several fields at once at their bounds."""
    rng = random.Random(seed)
    leaves = [lf for lf in leaf_fields() if lf.path[0] != "domains" and lf.dotted not in _KEEP]
    for _ in range(n):
        data = base_config()
        for leaf in rng.sample(leaves, k=min(len(leaves), rng.randint(2, 8))):
            data = _set(data, leaf.path, _valid_values(leaf, rng))
        yield data
