"""File tools: ``read_file``, ``write_file``, ``edit_file``, ``list_files`` on /work.

Guarantees: every path is relative to /work; ``..``, absolute paths outside /work and links
planted in the sandbox are refused (the sandbox's own harness file operations never follow
links); ``edit_file`` replaces an exact snippet that must occur exactly once (or every
occurrence with ``replace_all``), so an ambiguous edit fails loudly instead of editing the
wrong place; errors come back as ``ok=False`` results.
Does not: handle binary files beyond UTF-8 decoding with replacement.
"""

from __future__ import annotations

from .result import ToolResult
from .schema import function_spec

_PATH = {"type": "string", "description": "Path relative to /work."}


class ReadFileTool:
    name = "read_file"

    def __init__(self, max_chars: int = 20000):
        self.max_chars = max_chars
        self.spec = function_spec(
            self.name, "Read a text file. Optionally a line range (1-based, inclusive).",
            {"path": _PATH, "start_line": {"type": "integer", "minimum": 1},
             "end_line": {"type": "integer", "minimum": 1}}, ["path"])

    def __call__(self, sandbox, path: str, start_line: int | None = None,
                 end_line: int | None = None) -> ToolResult:
        text = sandbox.read_file(path, max_bytes=4 * self.max_chars).decode("utf-8", "replace")
        lines = text.splitlines(keepends=True)
        lo = (start_line or 1) - 1
        hi = end_line or len(lines)
        body = "".join(lines[lo:hi])
        cut = len(body) > self.max_chars
        body = body[:self.max_chars] + ("\n[... cut]" if cut else "")
        return ToolResult(body, True, {"path": path, "lines": len(lines), "truncated": cut})


class WriteFileTool:
    name = "write_file"
    spec = function_spec(
        "write_file", "Create or overwrite a text file (parent directories are created).",
        {"path": _PATH, "content": {"type": "string"}}, ["path", "content"])

    def __call__(self, sandbox, path: str, content: str) -> ToolResult:
        sandbox.write_file(path, content)
        return ToolResult(f"wrote {len(content.encode())} bytes to {path}", True,
                          {"path": path, "bytes": len(content.encode())})


class EditFileTool:
    name = "edit_file"
    spec = function_spec(
        "edit_file", "Replace an exact snippet of a file with new text. The snippet must occur "
        "exactly once unless replace_all is true.",
        {"path": _PATH, "old": {"type": "string", "description": "Exact text to replace."},
         "new": {"type": "string", "description": "Replacement text."},
         "replace_all": {"type": "boolean"}}, ["path", "old", "new"])

    def __call__(self, sandbox, path: str, old: str, new: str, replace_all: bool = False) -> ToolResult:
        if not old:
            return ToolResult.error("'old' must not be empty")
        text = sandbox.read_file(path).decode("utf-8")
        count = text.count(old)
        if count == 0:
            return ToolResult.error(f"the text to replace was not found in {path}", path=path)
        if count > 1 and not replace_all:
            return ToolResult.error(f"the text occurs {count} times in {path}; add context or "
                                    "set replace_all", path=path, occurrences=count)
        sandbox.write_file(path, text.replace(old, new) if replace_all else text.replace(old, new, 1))
        done = count if replace_all else 1
        return ToolResult(f"replaced {done} occurrence(s) in {path}", True,
                          {"path": path, "replacements": done})


class ListFilesTool:
    name = "list_files"

    def __init__(self, limit: int = 500):
        self.limit = limit
        self.spec = function_spec(
            self.name, "List files and directories under a directory of /work, recursively.",
            {"path": {"type": "string", "description": "Directory relative to /work ('' for /work)."}},
            [])

    def __call__(self, sandbox, path: str = "") -> ToolResult:
        entries = sandbox.list_files(path, limit=self.limit + 1)
        cut = len(entries) > self.limit
        lines = [e.path + ("/" if e.kind == "dir" else "") for e in entries[:self.limit]]
        text = "\n".join(lines) or "(empty)"
        return ToolResult(text + ("\n[... more entries cut]" if cut else ""), True,
                          {"entries": [e.to_dict() for e in entries[:self.limit]], "truncated": cut})
