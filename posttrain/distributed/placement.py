"""Disaggregated placement on Ray: one config section decides where each piece of a run runs.

``posttrain train CONFIG --out DIR [--set key=value ...]`` with ``placement.enabled: true``
(:func:`run_placement` from Python) starts, on a Ray cluster:

- the **trainer group**: ``placement.trainer.count`` FSDP2 ranks (:mod:`.trainer_group`), each
  asking for ``trainer.num_cpus``/``num_gpus``/``resources``; they run the sharded RL entry
  (:mod:`posttrain.trainer.fsdp.run`) — its step, its DCP checkpoints, its resume;
- **rollout engines**: ``placement.engines.count`` actors (:mod:`.engine_group`), HF or vLLM by
  ``inference.backend``; trainer rank 0 samples through them and sends them every new
  version over ``placement.weight_transport`` (Ray's object store, or a torch.distributed
  broadcast);
- **sandbox / verifier hosts**: ``placement.sandboxes.count`` actors (:mod:`.sandbox_hosts`)
  where every tool call and sandboxed verification of the episodes executes (0: the trainer's
  rank 0 keeps a local pool).

The cluster: ``placement.ray_address`` null starts a local one with ``cluster_cpus``,
``cluster_gpus`` and ``cluster_resources`` (custom resources such as ``sandbox`` that only
some "nodes" offer); ``auto`` / ``ray://host:10001`` joins a running one. Before any actor
starts, the cluster's resources are checked against what the actors ask for: a placement
that cannot be scheduled is a ConfigError naming the field (exit 2), never a run that waits
forever.

Resume: the run folder is the sharded entry's (``dcp/step-N``, ``metrics.jsonl``,
``model/``, ``summary.json``); started again with the same command after a kill (the driver
SIGKILLed: Ray ends the actors the driver owned), the ranks resume from the newest complete
``dcp/step-N`` and ``metrics.jsonl`` is cut back to it, so the run ends with the weights an
uninterrupted one ends with (tests/distributed/test_placement_resume.py).
``summary.json`` gains ``placement``: the transport, each group's count, resources and the
Ray node ids its actors ran on, and the sandbox hosts' pool metrics (``sandbox/remote_calls``,
``sandbox/created``, ...).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import ray

from posttrain.core.config import RunConfig
from posttrain.core.errors import ConfigError

GROUPS = ("trainer", "engines", "sandboxes")


def start_cluster(cfg: RunConfig) -> bool:
    """Join or start the cluster; True when this call started it (and should shut it down)."""
    from .ray_pool import ensure_ray

    if ray.is_initialized():
        return False
    pl = cfg.placement
    kw: dict[str, Any] = {}
    if pl.ray_address is None:
        kw = {"num_cpus": pl.cluster_cpus, "num_gpus": pl.cluster_gpus,
              "resources": dict(pl.cluster_resources) or None}
    ensure_ray(pl.ray_address, **{k: v for k, v in kw.items() if v is not None})
    return True


def check_fits(cfg: RunConfig, available: dict[str, float]) -> None:
    """Raise ConfigError when the actors ask for more than the cluster has in all."""
    pl, need = cfg.placement, {}
    for name in GROUPS:
        g = getattr(pl, name)
        for key, amount in (("CPU", g.num_cpus), ("GPU", g.num_gpus), *g.resources.items()):
            need[key] = need.get(key, 0.0) + amount * g.count
    short = {k: (v, available.get(k, 0.0)) for k, v in need.items() if v > available.get(k, 0.0) + 1e-9}
    if short:
        lines = [f"placement: the actors ask for {v:g} {k!r} in all, the cluster has {have:g}"
                 for k, (v, have) in sorted(short.items())]
        raise ConfigError("invalid config:\n  " + "\n  ".join(lines) + "\n  allowed: lower "
                          "placement.<trainer|engines|sandboxes>.count/num_cpus/num_gpus/resources, "
                          "or a cluster that offers them")


def _resume_point(out: Path) -> int:
    from posttrain.trainer.fsdp.state import TRAINER_FILE, latest_sharded

    path = latest_sharded(out)
    if path is None:
        return 0
    import torch

    return int(torch.load(path / TRAINER_FILE, weights_only=False)["step"])


def _truncate_metrics(out: Path, step: int) -> None:
    """Drop ``metrics.jsonl`` rows after ``step``: a killed run logged steps it did not save."""
    path = out / "metrics.jsonl"
    if not path.exists():
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:  # the last line, cut by the kill
            continue
        if int(row.get("step", step + 1)) <= step:
            keep.append(line + "\n")
    path.write_text("".join(keep))


def _describe(cfg: RunConfig, actors: dict[str, list[Any]]) -> dict[str, Any]:
    pl = cfg.placement
    out: dict[str, Any] = {"weight_transport": pl.weight_transport,
                           "ray_address": pl.ray_address}
    for name in GROUPS:
        g = getattr(pl, name)
        nodes = ray.get([a.node.remote() for a in actors.get(name, [])])
        out[name] = {"count": len(actors.get(name, [])), "num_cpus": g.num_cpus,
                     "num_gpus": g.num_gpus, "resources": dict(g.resources), "nodes": nodes}
    if actors.get("sandboxes"):  # what the episodes ran there: leases, calls, sandboxes made
        from .sandbox_hosts import RemoteSandboxPool

        out["sandboxes"]["metrics"] = RemoteSandboxPool(actors["sandboxes"]).metrics()
    return out


def _wait_all(refs: list[Any]) -> list[Any]:
    """Every rank's result; the first rank that fails raises at once (the caller then kills
    the others, which would otherwise wait in a collective for the dead one)."""
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        ray.get(done)
    return ray.get(refs)


def run_placement(cfg: RunConfig, out: str | Path) -> dict[str, Any]:
    """Place the run's actors, train, and return rank 0's summary (also in summary.json)."""
    from posttrain.trainer.validate import check_run_config

    from .engine_group import start_engines
    from .ray_sync import WeightStore
    from .sandbox_hosts import start_sandbox_hosts
    from .trainer_group import start_trainer_group

    check_run_config(cfg)
    if not cfg.placement.enabled:
        raise ConfigError("invalid config:\n  placement.enabled: got false; the placement entry "
                          "runs placed runs only: allowed true (or run `posttrain train`)")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = start_cluster(cfg)
    actors: dict[str, list[Any]] = {}
    t0 = time.perf_counter()
    try:
        check_fits(cfg, ray.cluster_resources())
        _truncate_metrics(out, _resume_point(out))
        pl = cfg.placement
        sb = cfg.sandbox
        actors["sandboxes"] = (start_sandbox_hosts(pl.sandboxes, pool_size=pl.sandbox_pool_size,
                                                   backend=sb.backend, wall_s=sb.wall_s, cpu_s=sb.cpu_s)
                               if pl.sandboxes.count else [])
        actors["engines"] = start_engines(pl.engines, cfg, str(out), threads=cfg.torch_threads)
        store = WeightStore.remote(1) if pl.weight_transport == "object_store" else None
        actors["store"] = [store] if store is not None else []
        ranks = actors["trainer"] = start_trainer_group(pl.trainer)
        master = ray.get(ranks[0].address.remote())
        first = (actors["engines"], actors["sandboxes"], store)
        refs = [r.run.remote(cfg, str(out), master, *(first if i == 0 else (None, None, None)))
                for i, r in enumerate(ranks)]
        summaries = _wait_all(refs)
        summary = {**summaries[0], "placement": _describe(cfg, actors),
                   "placement_wall_s": round(time.perf_counter() - t0, 3)}
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
        return summary
    finally:
        for group in actors.values():
            for a in group:
                ray.kill(a)
        if started:
            ray.shutdown()
