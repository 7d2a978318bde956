"""Resource limits, staged timeouts and network policy of a sandbox, as frozen records.

What it is: :class:`Limits` (memory, processes, CPUs, output and file caps),
:class:`Timeouts` (the staged timeout policy: create/claim budget, per-command wall, CPU and
idle budgets, sandbox lifetime, the TERM→KILL grace) and :class:`NetworkPolicy` (``none`` by
default, ``loopback`` or ``allowlist`` through the host proxy). ``from_mapping`` parses
user input (CLI ``--limits``, configs) and raises ``ConfigError`` naming field, value and
what is allowed.

Guarantees: every field has a safe default; a record is hashable, so it can key a pool.

Does not: enforce anything by itself (the backends do), or know which enforcement a host
supports (see ``cgroups.detect``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from posttrain.core.errors import ConfigError

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Per-sandbox quotas (cgroup) and per-command caps (rlimits, output)."""

    memory_bytes: int = 512 * MiB  # cgroup limit for commands; counts /work, /tmp and shm data
    pids: int = 128  # processes and threads, sandbox-wide
    cpus: float = 1.0  # CPU bandwidth (cgroup quota), in cores
    stdout_bytes: int = 1 * MiB  # cap per stream; more kills the command (output_limit)
    stderr_bytes: int = 1 * MiB
    file_size_bytes: int = 256 * MiB  # RLIMIT_FSIZE per file
    open_files: int = 1024
    store_bytes: int = 1024 * MiB  # size of the sandbox's private tmpfs holding all layers

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> "Limits":
        return _parse(cls, data)


@dataclass(frozen=True)
class Timeouts:
    """The staged timeout policy; every stage reports its own status when it fires."""

    create_s: float = 20.0  # starting a sandbox (or claiming one from a pool)
    wall_s: float = 30.0  # per command, wall clock -> status "timeout"
    cpu_s: float = 30.0  # per command, CPU seconds over the whole tree -> "cpu_limit"
    idle_s: float | None = None  # per command, no output at all for this long -> "timeout"
    lifetime_s: float | None = None  # whole sandbox; commands past it are "killed"
    kill_grace_s: float = 0.2  # between SIGTERM to the tree and SIGKILL

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> "Timeouts":
        return _parse(cls, data)


NETWORK_MODES = ("none", "loopback", "allowlist")


@dataclass(frozen=True)
class NetworkPolicy:
    """``none``: only AF_UNIX sockets, no interfaces; ``loopback``: inet sockets on ``lo`` only;
    ``allowlist``: loopback plus HTTP(S) to ``allow_hosts`` through the host proxy, which always
    refuses private, loopback and link-local addresses of the host."""

    mode: str = "none"
    allow_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in NETWORK_MODES:
            raise ConfigError(f"network.mode={self.mode!r}: allowed values are {NETWORK_MODES}")
        object.__setattr__(self, "allow_hosts", tuple(self.allow_hosts))

    @property
    def allow_inet(self) -> bool:
        return self.mode != "none"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> "NetworkPolicy":
        return _parse(cls, data)


def _parse(cls, data):
    if data is None:
        return cls()
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise ConfigError(f"{cls.__name__}: expected a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            raise ConfigError(
                f"{cls.__name__}.{key}={value!r}: unknown field; allowed: {sorted(fields)}")
        default = fields[key].default
        if value is not None and isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{cls.__name__}.{key}={value!r}: must be a number >= 0")
            value = type(default)(value) if isinstance(default, int) and float(value).is_integer() else value
        kwargs[key] = tuple(value) if isinstance(value, list) else value
    return cls(**kwargs)


@dataclass(frozen=True)
class SandboxSpec:
    """Everything that makes two sandboxes interchangeable (the pool key minus the template)."""

    limits: Limits = field(default_factory=Limits)
    timeouts: Timeouts = field(default_factory=Timeouts)
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
