"""Benchmark: the same small async run on the embedded default (threads) and on local Ray.

The run: the built-in tiny model (fresh weights), ``math.add-v1`` + ``math.compare-v1``,
``max_policy_lag: 1``, one rollout producer, ``--steps`` GRPO steps of 4 prompts x 4 samples.
Only ``AsyncConfig.executor`` differs (``thread`` vs ``ray``: a rollout-worker actor, a
verifier actor, weights through the object store). The two are interleaved (A B A B) so
drift on a shared machine hits both; the Ray cluster is started once (``ray.init``, timed
separately) and each Ray run pays its own actor start-up (worker processes importing torch
and transformers), which is reported apart from the per-step cost.

Reported: ``ray_init_s``; total wall per run and their ratio; steady per-step time (median
of ``time/step_s`` after the first two steps) on each side and its ratio. Expected: a fixed
start-up of a few seconds, per-step overhead small (an actor call is ~0.7 ms here; a weight
publish is one ``ray.put`` of a few MB).

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from posttrain.core.config import DomainSpec, RLConfig, RunConfig  # noqa: E402
from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.trainer.loop import AsyncConfig, train_async  # noqa: E402
from posttrain.trainer.optim import optimizer_from_config  # noqa: E402
from posttrain.trainer.phases import load_policy  # noqa: E402
from posttrain.trainer.sft import pad_id_of  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402


def one_run(executor: str, base, cfg: RunConfig) -> dict:
    model, tok = copy.deepcopy(base[0]), base[1]
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt, sched = optimizer_from_config(model, cfg.rl)
    rows: list[dict] = []
    acfg = AsyncConfig(executor=executor)
    t0 = time.perf_counter()
    train_async(model, opt, backend, TaskStream(cfg.domains, seed=cfg.seed), cfg.rl, pad_id=pad_id_of(tok),
                seed=cfg.seed, lr_scheduler=sched, on_step=lambda s, m: rows.append(m), config=acfg)
    wall = time.perf_counter() - t0
    steady = [r["time/step_s"] for r in rows[2:]] or [r["time/step_s"] for r in rows]
    return {"wall_s": wall, "step_s": statistics.median(steady),
            "first_step_s": rows[0]["time/step_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = RunConfig(seed=0, domains=[DomainSpec(id="math.add-v1"), DomainSpec(id="math.compare-v1")],
                    rl=RLConfig(steps=args.steps, prompts_per_step=4, group_size=4, max_new_tokens=6,
                                max_policy_lag=1, filter_zero_variance=False))
    base = load_policy(cfg)
    import ray

    from posttrain.distributed.ray_pool import ensure_ray

    t0 = time.perf_counter()
    ensure_ray(None, num_cpus=2)
    ray_init_s = time.perf_counter() - t0
    runs: dict[str, list[dict]] = {"thread": [], "ray": []}
    for _ in range(args.rounds):
        for executor in ("thread", "ray"):
            r = one_run(executor, base, cfg)
            runs[executor].append(r)
            print(f"{executor}: wall {r['wall_s']:.2f}s, steady step {r['step_s'] * 1000:.0f} ms, "
                  f"first step {r['first_step_s']:.2f}s", file=sys.stderr)
    ray.shutdown()
    wall = {k: statistics.mean(r["wall_s"] for r in v) for k, v in runs.items()}
    step = {k: statistics.mean(r["step_s"] for r in v) for k, v in runs.items()}
    print(json.dumps({
        "ray_init_s": round(ray_init_s, 3),
        "embedded_wall_s": round(wall["thread"], 3), "ray_wall_s": round(wall["ray"], 3),
        "wall_ratio": round(wall["ray"] / wall["thread"], 3),
        "ray_fixed_overhead_s": round(wall["ray"] - wall["thread"] - args.steps * (step["ray"] - step["thread"]), 3),
        "embedded_step_s": round(step["thread"], 4), "ray_step_s": round(step["ray"], 4),
        "step_ratio": round(step["ray"] / step["thread"], 3), "steps": args.steps, "rounds": args.rounds}))


if __name__ == "__main__":
    main()
