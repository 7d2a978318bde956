"""What a tool call returns: :class:`ToolResult` (text for the policy, ok flag, structured data).

Guarantees: frozen and JSON-able (``to_dict``); ``content`` is what the policy sees and is
always a string; ``data`` holds the structured facts (exit code, status, paths) for
environments and verifiers. Does not: carry raw bytes (binary output is decoded with
replacement).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ToolResult:
    content: str
    ok: bool = True
    data: dict = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, **data) -> "ToolResult":
        return cls(f"Error: {message}", False, {"error": message, **data})

    def to_dict(self) -> dict:
        return asdict(self)
