"""JSON round-trip for the core records.

``to_dict(record)`` gives plain JSON types (tuples become lists); ``from_dict(cls, data)``
rebuilds the frozen record, nested records included. ``from_dict(cls, to_dict(x)) == x``
for every record in :mod:`posttrain.core.types` (tested), so a Task or a Trajectory can be
written to JSONL, sent across processes, and read back unchanged. ``dumps(x, images=store)``
writes each image once into an :class:`~posttrain.core.images.ImageStore` and references it
by hash; ``loads(cls, line, images=store)`` restores it bit for bit.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, TypeVar

from .errors import ErrorInfo
from .images import ImageStore, externalize, internalize
from .types import Completion, Observation, Score, StepResult, Task, Trajectory, TrajectoryGroup, Turn

T = TypeVar("T")

# field name -> record class, for fields holding one record or a tuple of records.
_NESTED: dict[type, dict[str, type]] = {
    Turn: {"observation": Observation, "action": Completion},
    Trajectory: {"task": Task, "turns": Turn, "score": Score, "error": ErrorInfo},
    TrajectoryGroup: {"task": Task, "trajectories": Trajectory},
    Score: {"error": ErrorInfo},
    StepResult: {"observation": Observation},
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, typing.Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def to_dict(record: Any) -> dict[str, Any]:
    """Plain-JSON form of a record."""
    if not dataclasses.is_dataclass(record):
        raise TypeError(f"to_dict expects a record, got {type(record).__name__}")
    return _plain(record)


def _is_tuple_field(cls: type, name: str) -> bool:
    hints = typing.get_type_hints(cls)
    origin = typing.get_origin(hints.get(name))
    return origin is tuple


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild a record of type ``cls`` from :func:`to_dict` output."""
    nested = _NESTED.get(cls, {})
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        sub = nested.get(f.name)
        if sub is not None and value is not None:
            if isinstance(value, list):
                value = tuple(from_dict(sub, v) for v in value)
            else:
                value = from_dict(sub, value)
        elif isinstance(value, list) and _is_tuple_field(cls, f.name):
            value = tuple(tuple(v) if isinstance(v, list) and f.name == "components" else v for v in value)
        elif f.name == "components" and isinstance(value, dict):
            value = {k: tuple(v) for k, v in value.items()}
        kwargs[f.name] = value
    return cls(**kwargs)


def dumps(record: Any, images: ImageStore | None = None) -> str:
    """One-line JSON of a record; with ``images``, each image is stored there once and the
    line holds its ``sha256:`` reference (:mod:`posttrain.core.images`)."""
    data = to_dict(record)
    return json.dumps(externalize(data, images) if images is not None else data, sort_keys=True)


def loads(cls: type[T], text: str, images: ImageStore | None = None) -> T:
    """The record of a :func:`dumps` line (``images``: the store its references point into)."""
    data = json.loads(text)
    return from_dict(cls, internalize(data, images) if images is not None else data)
