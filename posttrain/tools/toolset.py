"""ToolSet: validate a policy's tool call against its schema and dispatch it by name.

What it is: the one entry point multi-turn environments use: ``specs`` (the OpenAI
function-calling list to show the policy) and ``call(sandbox, name, arguments)``.

Guarantees: ``call`` never raises for anything the policy can send: an unknown tool, JSON
that does not parse, arguments that fail the schema, a refused path or a sandbox error all
come back as ``ToolResult(ok=False)`` with a message the policy can act on (``data["kind"]``
says which: unknown_tool, bad_json, invalid_arguments, refused, tool_error).
Does not: run tools concurrently on one sandbox (the sandbox serialises them).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Protocol

from posttrain.core.errors import SandboxError

from .result import ToolResult
from .schema import validate


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # NaN passes every numeric bound of a schema


class Tool(Protocol):
    name: str
    spec: dict

    def __call__(self, sandbox, **arguments) -> ToolResult: ...


class ToolSet:
    def __init__(self, tools: Iterable[Tool]):
        self.tools = {t.name: t for t in tools}

    @property
    def specs(self) -> list[dict]:
        return [t.spec for t in self.tools.values()]

    def call(self, sandbox, name: str, arguments: Any) -> ToolResult:
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult.error(f"unknown tool {name!r}; available: {sorted(self.tools)}",
                                    kind="unknown_tool")
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments, parse_constant=_not_json) if arguments.strip() else {}
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, too deep
                return ToolResult.error(f"arguments are not valid JSON: {str(exc)[:200]}",
                                        kind="bad_json")
        if arguments is None:
            arguments = {}
        problems = validate(arguments, tool.spec["function"]["parameters"])
        if problems:
            return ToolResult.error("; ".join(problems), kind="invalid_arguments")
        try:
            return tool(sandbox, **arguments)
        except PermissionError as exc:
            return ToolResult.error(f"refused: {exc}", kind="refused")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, UnicodeDecodeError) as exc:
            return ToolResult.error(str(exc), kind="tool_error")
        except SandboxError as exc:
            return ToolResult.error(f"sandbox: {exc}", kind="tool_error")
        except Exception as exc:  # noqa: BLE001 - a tool bug must not kill the episode
            return ToolResult.error(f"{type(exc).__name__}: {exc}", kind="tool_error")
