"""The Sandbox protocol (DESIGN.md §3): what every backend offers its callers.

Guarantees: both backends (``IsolatedSandbox``, ``ProcessSandbox``) satisfy it structurally;
``tests/sandbox`` runs the same conformance tests against each.
Does not: say anything about isolation strength (see the package docstring).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .result import ExecResult, FileChange, FileInfo, SnapshotId


@runtime_checkable
class Sandbox(Protocol):
    backend: str
    is_security_boundary: bool

    def exec(self, cmd, *, stdin=None, env=None, cwd=None, timeout=None, cpu_time=None,
             idle_timeout=None) -> ExecResult: ...

    def run_python(self, code: str, *, stdin=None, env=None, cwd=None, timeout=None,
                   cpu_time=None) -> ExecResult: ...

    def write_file(self, path: str, data, mode: int = 0o644) -> None: ...

    def read_file(self, path: str, max_bytes: int = ...) -> bytes: ...

    def remove_file(self, path: str) -> None: ...

    def list_files(self, path: str = "", limit: int = ...) -> list[FileInfo]: ...

    def snapshot(self) -> SnapshotId: ...

    def restore(self, snapshot_id: SnapshotId) -> None: ...

    def diff(self, since: SnapshotId, content_cap: int = ...) -> list[FileChange]: ...

    def ping(self, timeout: float = ...) -> bool: ...

    def close(self) -> None: ...

    async def aexec(self, cmd, **kw) -> ExecResult: ...

    async def aclose(self) -> None: ...
