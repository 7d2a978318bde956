"""The sharded RL entry: ``torchrun --nproc-per-node N -m posttrain.trainer.fsdp.run CONFIG --out DIR``.

What it runs: the synchronous reference loop (:mod:`posttrain.trainer.reference_loop`) with the
policy update sharded over ``N`` FSDP2 ranks. Rank 0 owns the rollout side — the task
stream, the in-process HF engine (over its own unsharded copy of the policy), the episodes,
filters, advantages and the PolicyBatch — and broadcasts the batch to every rank; each rank
trains on its slice (:mod:`.update`); the new weights are gathered whole onto rank 0 and
loaded into its engine. Why rank 0 alone samples: the run is then the same RL run as one
process (same tasks, same seeds, same episodes — only the update is spread), which is what
the parity tests pin; sampling on every rank would need a per-rank share of the prompts and
a gather of the groups, a different schedule, for a speed-up the HF engine on CPU would not
give. Under NCCL the same code runs with one GPU per rank.

The run folder: ``metrics.jsonl`` (rank 0; the reference loop's keys plus
``batch/micro_batches`` and ``dist/world_size``), ``dcp/step-N`` (DCP checkpoints every
``rl.checkpoint_every`` steps and at the end; the two newest are kept), ``model/`` (the final policy, HF format) and
``summary.json``. Started again on the same folder — with any number of ranks — it resumes
from the newest ``dcp/step-N``: weights, AdamW moments, LR schedule, task stream, step,
policy version, samples seen.

Not covered: SFT/DPO phases, held-out evaluation (run ``posttrain eval`` on ``model/``), the
async loop, vLLM engines, multi-turn sandbox pools beyond the run's own (it installs one
like the pipeline does). A KL reference is a frozen unsharded copy on every rank.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from posttrain.core.config import RunConfig, load_config
from posttrain.trainer.advantages import compute_advantages
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.engines import make_rollout_backend
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.phases import load_policy, set_threads
from posttrain.trainer.pipeline import _run_pool
from posttrain.trainer.reference_loop import (RLState, frozen_reference, rollout_metrics,
                                              sampling_params, step_filter)
from posttrain.trainer.sft import pad_id_of
from posttrain.trainer.tasks import make_stream
from posttrain.trainer.validate import check_sharded_config, episode_limits

from .dist import DistInfo, close_distributed, init_distributed, shard_model
from .state import full_model_state, latest_sharded, load_sharded, prune_sharded, save_sharded
from .update import sharded_policy_update

KEEP_CHECKPOINTS = 2  # newest complete dcp/step-N folders kept, as trainer/pipeline.py keeps


@dataclass
class Ctx:
    """One rank's share of the run (rollout members are None off rank 0)."""

    cfg: RunConfig
    info: DistInfo
    out: Path
    model: Any
    optimizer: Any
    schedule: Any
    ref_model: Any = None
    backend: Any = None
    stream: Any = None
    pad_id: int = 0
    tokenizer: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def _broadcast(obj: Any) -> Any:
    import torch.distributed as dist

    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def _sample(ctx: Ctx, state: RLState) -> tuple[Any, dict[str, float]]:
    """Rank 0: one step's episodes, filtered, as a PolicyBatch (None when nothing trains)."""
    from posttrain.scheduler.rollouts import play_scheduled
    from posttrain.trainer.algorithms import get_algorithm

    cfg, rl = ctx.cfg, ctx.cfg.rl
    t0 = time.perf_counter()
    tasks = ctx.stream.next(rl.prompts_per_step)
    groups, _, retries = play_scheduled(ctx.backend, tasks,
                                        sampling_params(rl, cfg.seed * 1_000_003 + state.step),
                                        limits=episode_limits(cfg.episode))
    metrics = {**rollout_metrics(groups), **retries, "time/sample_s": time.perf_counter() - t0}
    if hasattr(ctx.stream, "update"):  # the curriculum learns from every verified group
        ctx.stream.update(groups)
    chosen = step_filter(rl, cfg.filters).apply(groups)
    metrics.update(chosen.metrics())
    kept, algo = chosen.kept, get_algorithm(rl.algorithm)
    batch = build_policy_batch(kept, compute_advantages(kept, algo.advantage), ctx.pad_id) if kept else None
    metrics["rollout/step_samples"] = float(sum(len(g.trajectories) for g in groups))
    return batch, metrics


def rl_step(ctx: Ctx, state: RLState) -> dict[str, float]:
    """One sharded RL step on every rank; the metrics (complete on rank 0)."""
    t0 = time.perf_counter()
    batch, metrics = _sample(ctx, state) if ctx.info.is_main else (None, {})
    if ctx.info.world_size > 1:
        batch, metrics = _broadcast((batch, metrics))
    t1 = time.perf_counter()
    if batch is not None and batch.num_rows:
        metrics.update(batch.stats)
        metrics.update(sharded_policy_update(
            ctx.model, ctx.optimizer, batch, ctx.cfg.rl, _loss(ctx.cfg),
            micro_batch_tokens=ctx.cfg.distributed.micro_batch_tokens, ref_model=ctx.ref_model,
            lr_scheduler=ctx.schedule, policy_version=state.policy_version))
    else:
        metrics["loss/skipped"] = 1.0
    t2 = time.perf_counter()
    state.step += 1
    state.policy_version += 1
    state.samples_seen += int(metrics.pop("rollout/step_samples", 0))
    weights = full_model_state(ctx.model)  # a collective: every rank gathers, rank 0 keeps
    if ctx.info.is_main:
        ctx.backend.load_weights(state.policy_version, weights)
    metrics.update({"time/update_s": t2 - t1, "time/sync_s": time.perf_counter() - t2,
                    "time/step_s": time.perf_counter() - t0,
                    "rollout/policy_version": float(state.policy_version),
                    "rollout/samples_seen": float(state.samples_seen),
                    "dist/world_size": float(ctx.info.world_size)})
    return metrics


def _loss(cfg: RunConfig) -> str:
    from posttrain.trainer.algorithms import get_algorithm

    return get_algorithm(cfg.rl.algorithm).loss


def checkpoint(ctx: Ctx, state: RLState) -> Path:
    trainer = {"step": state.step, "policy_version": state.policy_version,
               "samples_seen": state.samples_seen, "lr_scheduler": ctx.schedule.state_dict(),
               "stream": ctx.stream.state_dict() if ctx.stream is not None else None}
    path = save_sharded(ctx.out / "dcp" / f"step-{state.step}", ctx.model, ctx.optimizer, trainer)
    if ctx.info.is_main:  # after every rank's barrier in save_sharded: the new one is complete
        prune_sharded(ctx.out, keep_last=KEEP_CHECKPOINTS)
    return path


def resume(ctx: Ctx) -> RLState:
    """The newest DCP checkpoint of the folder, if any, loaded on every rank."""
    path = latest_sharded(ctx.out) if ctx.info.is_main else None
    if ctx.info.world_size > 1:
        path = _broadcast(path)
    if path is None:
        return RLState()
    meta = load_sharded(path, ctx.model, ctx.optimizer)
    ctx.schedule.load_state_dict(meta["lr_scheduler"])
    if ctx.stream is not None:
        ctx.stream.load_state_dict(meta["stream"])
    ctx.extra["resumed_from_step"] = meta["step"]
    return RLState(meta["step"], meta["policy_version"], meta["samples_seen"])


def build(cfg: RunConfig, info: DistInfo, out: Path, make_backend: Any = None) -> Ctx:
    """Every rank builds the same initial policy; rank 0 also the engine and the stream.

    ``make_backend(cfg, model, tokenizer, out)``: rank 0's rollout engine (default: the
    in-process one; the Ray placement passes its engine actors, posttrain/distributed)."""
    model, tokenizer = load_policy(cfg)
    backend = stream = None
    if info.is_main:
        make = make_backend or make_rollout_backend
        backend = make(cfg, model, tokenizer, out)  # holds its own unsharded copy
        stream = make_stream(cfg.domains, cfg.seed, cfg.curriculum, cfg.rl.prompts_per_step)
    ref = frozen_reference(model).to(info.device) if cfg.rl.kl_coef > 0 else None
    model = shard_model(model, reshard_after_forward=cfg.distributed.reshard_after_forward)
    optimizer, schedule = optimizer_from_config(model, cfg.rl)
    return Ctx(cfg, info, out, model, optimizer, schedule, ref, backend, stream,
               pad_id_of(tokenizer), tokenizer)


def train(cfg: RunConfig, out: str | Path, *, make_backend: Any = None) -> dict[str, Any]:
    """The whole sharded RL run on this rank (every rank calls it); rank 0's summary.

    ``make_backend``: rank 0's rollout engine factory (see :func:`build`)."""
    from posttrain.eval.tracking import MetricsWriter
    from posttrain.models.loading import save_model

    info = init_distributed(cfg.distributed.backend)
    set_threads(cfg.torch_threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ctx = build(cfg, info, out, make_backend)
    state = resume(ctx)
    if state.step:  # resumed: the engine gets the loaded weights (a collective gather)
        weights = full_model_state(ctx.model)
        if info.is_main:
            ctx.backend.load_weights(state.policy_version, weights)
    writer = MetricsWriter(out, tensorboard=False) if info.is_main else None
    while state.step < cfg.rl.steps:
        metrics = rl_step(ctx, state)
        if writer is not None:
            writer.log(state.step, metrics)
        if cfg.rl.checkpoint_every and state.step % cfg.rl.checkpoint_every == 0:
            checkpoint(ctx, state)
    checkpoint(ctx, state)
    summary = {"rl_steps": state.step, "policy_version": state.policy_version,
               "world_size": info.world_size, "backend": info.backend, **ctx.extra,
               "wall_s": round(time.perf_counter() - t0, 3)}
    if info.is_main:
        writer.close()
        save_model(ctx.backend.model, ctx.tokenizer, out / "model")  # holds the gathered weights
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posttrain.trainer.fsdp.run",
                                     description="Sharded (FSDP2) RL run; launch with torchrun.")
    parser.add_argument("config")
    parser.add_argument("--out", default=None, help="run folder (default: the config's out)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config override, as `posttrain train --set`")
    args = parser.parse_args(argv)
    cfg = check_sharded_config(load_config(args.config, args.set))
    try:
        with _run_pool(cfg):
            train(cfg, args.out or cfg.out)
    finally:
        close_distributed()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
