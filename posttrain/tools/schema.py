"""A small JSON-schema validator for tool arguments, and the OpenAI tool-spec shape.

What it is: :func:`validate` checks arguments against the subset of JSON Schema that tool
specs use (``type`` object/string/integer/number/boolean/array/null or a list of them,
``properties``, ``required``, ``additionalProperties: false``, ``enum``,
``minimum``/``maximum``, ``minLength``/``maxLength``, ``items``, ``minItems``/``maxItems``)
and returns a list of human-readable problems (empty when valid);
:func:`function_spec` builds ``{"type": "function", "function": {...}}``.

Guarantees: never raises on any input (malformed arguments are reported, not thrown);
``true``/``false`` are not accepted as integers or numbers, nor NaN or infinities as numbers.
Does not: support ``$ref``, ``oneOf`` or formats.
"""

from __future__ import annotations

import math
from typing import Any

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _kind_of(value: Any, declared: Any) -> tuple[str | None, bool]:
    """The declared type that ``value`` matches (a ``type`` may list several), and whether any does."""
    if not declared:
        return None, True
    kinds = declared if isinstance(declared, list) else [declared]
    for kind in kinds:
        if not isinstance(kind, str) or _TYPES.get(kind, lambda v: True)(value):
            return (kind if isinstance(kind, str) else None), True
    return None, False


def function_spec(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


def validate(value: Any, schema: dict, where: str = "arguments") -> list[str]:
    if not isinstance(schema, dict):
        return []  # a malformed schema constrains nothing; never raise
    problems: list[str] = []
    kind, ok = _kind_of(value, schema.get("type"))
    if not ok:
        return [f"{where}: expected {schema.get('type')}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if kind in ("integer", "number"):
        if isinstance(value, float) and not math.isfinite(value):
            # NaN compares false with every bound: it would pass minimum and maximum
            return [f"{where}: expected a finite number, got {value!r}"]
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where}: {value} > maximum {schema['maximum']}")
    if kind == "string" and "maxLength" in schema and len(value) > schema["maxLength"]:
        problems.append(f"{where}: longer than {schema['maxLength']} characters")
    if kind == "string" and "minLength" in schema and len(value) < schema["minLength"]:
        problems.append(f"{where}: shorter than {schema['minLength']} characters")
    if kind == "array":
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{where}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                problems += validate(item, schema["items"], f"{where}[{i}]")
    if kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: missing required field {key!r}")
        for key, item in value.items():
            if key in props:
                problems += validate(item, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{where}: unknown field {key!r} (allowed: {sorted(props)})")
    return problems
