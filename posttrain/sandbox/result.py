"""Structured results of sandbox operations: :class:`ExecResult` and :class:`FileChange`.

What it is: frozen, JSON-able records (``to_dict()``) returned by every backend.

Guarantees: ``ExecResult.status`` is one of :data:`STATUSES`; a command that ran to completion
with exit code 0 is ``ok`` and with another code ``nonzero_exit``; every budget the sandbox
enforced reports its own status (``timeout`` for the wall and idle budgets, ``cpu_limit``,
``memory_limit``, ``output_limit``, ``killed`` for the sandbox lifetime or an explicit kill)
and says which in ``reason``; ``sandbox_error`` means the sandbox failed, not the command.
Output fields hold at most the per-stream cap; ``*_truncated`` says when more was produced.

Does not: decode output beyond UTF-8 with replacement (``stdout_bytes`` keeps the raw bytes).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

STATUSES = ("ok", "nonzero_exit", "timeout", "cpu_limit", "memory_limit", "output_limit",
            "killed", "sandbox_error")
SnapshotId = str


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command in a sandbox."""

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout_bytes: bytes = b""
    stderr_bytes: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_memory_bytes: int = 0
    reason: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("stdout_bytes")
        d.pop("stderr_bytes")
        d["stdout"], d["stderr"] = self.stdout, self.stderr
        return d


@dataclass(frozen=True)
class FileChange:
    """One file that differs from a snapshot: ``kind`` is added, changed or deleted.

    ``size``/``sha256`` describe the current file (None when deleted); ``content`` holds the
    current bytes decoded as UTF-8 when the file is under the diff's size cap.
    """

    path: str
    kind: str
    size: int | None = None
    sha256: str | None = None
    content: str | None = None
    old_size: int | None = None
    old_sha256: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FileInfo:
    """An entry of ``list_files``: path relative to /work, kind (file, dir, link, other), size."""

    path: str
    kind: str
    size: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)
