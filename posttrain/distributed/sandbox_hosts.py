"""Sandbox / verifier actors: the run's sandboxes live on the nodes the placement names.

What it is: :class:`SandboxHost` is a Ray actor holding a warm
:class:`~posttrain.sandbox.pool.SandboxPool` (placed by its resources, typically a custom
``sandbox`` resource that only CPU-only nodes offer); :class:`RemoteSandboxPool` is the pool
the trainer's rollout side installs (``tool_env.use_pool``) in its place: a lease picks the
host with the fewest open leases, opens a sandbox there, and hands out a
:class:`RemoteSandbox` whose method calls (``exec``, ``write_file``, ``read_file``,
``list_files``, ``snapshot``, ``restore``, ``diff``, ...) run on that host. Every tool call and
every sandboxed verification of an episode (test suites, the HumanEval judge) thus executes
in the sandbox actors, while the episode itself stays on the live env that was stepped (the
one episode engine; DESIGN.md §1).

Guarantees: a host serves many callers at once (a threaded actor: a lease that waits for a
free sandbox does not hold up the others' calls and releases); a lease is released on its
host (the sandbox reset to its clean snapshot by the host's pool) when the ``with`` block
ends, also when it raised; arguments and results cross as pickles (``ExecResult`` and friends
are plain records); an error raised in the sandbox is raised again on the caller's side with
its type. ``metrics()`` sums the hosts' pool metrics
and adds ``sandbox/remote_calls`` and ``sandbox/hosts``.

Not covered: attributes that are not methods (a host-local path means nothing elsewhere),
async twins (an ``a*`` method runs the host's coroutine function and returns
nothing awaitable: call the plain method), moving a live lease to another host.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

import ray


@ray.remote
class SandboxHost:
    def __init__(self, backend: str = "auto", max_total: int = 4, wall_s: float = 10.0,
                 cpu_s: float = 10.0):
        from posttrain.sandbox import SandboxPool, Timeouts

        self.pool = SandboxPool(backend=backend, max_total=max_total, warm=0,
                                timeouts=Timeouts(wall_s=wall_s, cpu_s=cpu_s, create_s=60.0))
        self.open: dict[str, Any] = {}
        self.calls = 0

    def lease(self, template: Any = None, limits: Any = None, network: Any = None,
              timeout: float | None = None) -> str:
        lease = self.pool.lease(template, limits, network, timeout)
        sb = lease.__enter__()
        key = uuid.uuid4().hex
        self.open[key] = (lease, sb)
        return key

    def call(self, key: str, method: str, args: tuple, kwargs: dict) -> Any:
        self.calls += 1
        return getattr(self.open[key][1], method)(*args, **kwargs)

    def release(self, key: str) -> None:
        lease, _ = self.open.pop(key)
        lease.__exit__(None, None, None)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def metrics(self) -> dict[str, float]:
        return {**self.pool.metrics(), "sandbox/remote_calls": float(self.calls)}

    def close(self) -> None:
        for key in list(self.open):
            self.release(key)
        self.pool.close()


class RemoteSandbox:
    """A leased sandbox on a host: each method call runs there (module docstring)."""

    def __init__(self, host: Any, key: str):
        self._host, self._key = host, key

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # no private state crosses (and pickling probes stay local)
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return ray.get(self._host.call.remote(self._key, name, args, kwargs))

        return call


class RemoteSandboxPool:
    """The ``SandboxPool`` the rollout side leases from, backed by :class:`SandboxHost` actors."""

    def __init__(self, hosts: list[Any]):
        self.hosts = list(hosts)
        self._open = [0] * len(self.hosts)
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def _lease(self, template: Any, limits: Any, network: Any, timeout: float | None) -> Iterator[Any]:
        with self._lock:
            i = min(range(len(self.hosts)), key=lambda j: (self._open[j], j))
            self._open[i] += 1
        host = self.hosts[i]
        try:
            key = ray.get(host.lease.remote(template, limits, network, timeout))
            try:
                yield RemoteSandbox(host, key)
            finally:
                ray.get(host.release.remote(key))
        finally:
            with self._lock:
                self._open[i] -= 1

    def lease(self, template: Any = None, limits: Any = None, network: Any = None,
              timeout: float | None = None) -> Any:
        return self._lease(template, limits, network, timeout)

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for m in ray.get([h.metrics.remote() for h in self.hosts]):
            for k, v in m.items():
                if not k.startswith("sandbox/acquire_ms"):  # percentiles do not add up
                    out[k] = out.get(k, 0.0) + float(v)
        out["sandbox/hosts"] = float(len(self.hosts))
        return out

    def close(self) -> None:
        self._closed = True


def start_sandbox_hosts(spec: Any, *, pool_size: int, backend: str = "auto", wall_s: float = 10.0,
                        cpu_s: float = 10.0) -> list[Any]:
    """``spec.count`` hosts with ``spec``'s resources (a placement's ``sandboxes``)."""
    # threaded: a lease waiting for a free sandbox must not block the calls and releases
    # of the leases in hand (a one-method-at-a-time actor deadlocks there)
    return [SandboxHost.options(num_cpus=spec.num_cpus, num_gpus=spec.num_gpus,
                                resources=dict(spec.resources), max_restarts=0,
                                max_concurrency=4 * pool_size + 4).remote(
        backend, pool_size, wall_s, cpu_s) for _ in range(spec.count)]
