"""The trainer and the sandbox pools as Ray actors, with their resource requests.

- :class:`TrainerActor` runs a training entry point (any picklable callable, e.g.
  ``posttrain.trainer.pipeline.run_pipeline`` with its config) inside an actor placed by its
  resources (``num_gpus=1`` on a GPU node); the rollout workers it starts are actors too.
- :class:`SandboxPoolActor` holds a warm :class:`posttrain.sandbox.pool.SandboxPool` on a
  CPU-only node (``num_gpus=0``; add a custom resource such as ``{"sandbox": 1}`` to pin it)
  and runs commands in a freshly reset sandbox per call, so tool and test execution never
  share a machine with inference or training unless the cluster says so.

Guarantees: a sandbox is always released back to its pool (reset to its clean snapshot),
also when the command fails; an ``ExecResult`` crosses the wire as the pool's record.
Not covered: sandbox sessions spanning several calls (lease a sandbox per episode instead,
with :meth:`SandboxPoolActor.session_exec`'s ``files`` argument carrying the state).
"""

from __future__ import annotations

from typing import Any, Callable

import ray


@ray.remote
class TrainerActor:
    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import torch

        torch.set_num_threads(int(kwargs.pop("torch_threads", 1)))
        return fn(*args, **kwargs)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


def start_trainer(*, num_cpus: float = 1.0, num_gpus: float = 0.0,
                  resources: dict[str, float] | None = None) -> Any:
    return TrainerActor.options(num_cpus=num_cpus, num_gpus=num_gpus,
                                resources=resources or {}).remote()


@ray.remote(num_gpus=0)
class SandboxPoolActor:
    def __init__(self, backend: str = "auto", max_total: int = 4, warm: int = 1):
        from posttrain.sandbox.pool import SandboxPool

        self.pool = SandboxPool(backend=backend, max_total=max_total, warm=warm)

    def session_exec(self, cmd: Any, files: dict[str, str] | None = None, **kw: Any) -> Any:
        """Write ``files`` then run ``cmd`` in one leased sandbox; returns the ExecResult."""
        with self.pool.lease() as sb:
            for path, text in (files or {}).items():
                sb.write_file(path, text.encode())
            return sb.exec(cmd, **kw)

    def metrics(self) -> dict:
        return self.pool.metrics()

    def close(self) -> None:
        self.pool.close()


def start_sandbox_pools(n: int, *, num_cpus: float = 1.0, resources: dict[str, float] | None = None,
                        backend: str = "auto", max_total: int = 4) -> list[Any]:
    return [SandboxPoolActor.options(num_cpus=num_cpus, resources=resources or {}).remote(
        backend, max_total) for _ in range(n)]
