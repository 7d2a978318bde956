"""Benchmark: the async loop (policy lag 1, 2, 4) against the synchronous loop on a long-tail workload.

What the workload is. The built-in tiny model (1.8M parameters, briefly SFT-ed) trains with
GRPO on ``math.add-v1`` and ``math.compare-v1``; every episode's env step calls a *remote
sandbox*: a tool call whose latency is a sleep on an env worker thread — ``--base-s`` for 90%
of episodes and 10x that for the other 10% (the long tail of sandbox-heavy agent tasks),
drawn deterministically per (task, sample), so every configuration sees the same latencies.
At scale those sandboxes run on other machines, so their latency is wall time, not CPU
time on this host; sleeping models that honestly on a 2-core machine. The remote fleet has
one sandbox per episode of a step (``--env-workers 64`` = 8 prompts x 8 samples), so the
synchronous loop is never queued behind a pool that is too small — it waits only for the
slowest episode of its batch, which is the cost asynchrony is meant to hide. A smaller
fleet caps every configuration at the fleet's throughput instead (measured with 16: lag 4
2.0x, the fleet busy nearly all the time). Everything else is
real: sampling with the HF backend, verification by the domain verifiers on the reward
service's threads, GRPO updates, weight sync.

What is compared. "sync" is ``train_async`` with ``max_policy_lag: 0`` — the synchronous
schedule (sample, run envs, verify, then update, one after the other), which reproduces the
reference loop exactly (tested; both play episodes through the one engine) while sharing the
async runs' producer and env worker pool, so the comparison measures asynchrony alone, not
env parallelism. "lagL" runs L producers
with at most L versions of staleness. All runs train the same number of steps (hence the
same number of samples) from the same SFT-ed weights; configurations are interleaved
(sync, lag1, lag2, lag4, then again) so machine drift hits all of them.

Reported: training steps per minute, trainer idle fraction (time the trainer waited for
rollouts / wall time of the RL phase), speed-up over sync, and held-out greedy accuracy after
the run (with its standard error, so "within noise" can be judged). Anchors: AReaL 2.77x,
verl 2.35-2.67x against their own synchronous modes. Target: >= 2x at lag <= 4.

``--free-running`` adds ``lagL_free``: the same lags under ``async_rl.schedule: free_running``
(each job sampled by the newest weights available instead of its scheduled version), and
``free_over_deterministic_lagL``, the throughput ratio of the two schedules.

Last line: one JSON object (``speedup_lag1/2/4``, ``trainer_idle_sync``, ``trainer_idle_lag4``, ...).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from posttrain.core.config import DomainSpec, RLConfig, RunConfig, SFTConfig  # noqa: E402
from posttrain.domains.base import get_domain  # noqa: E402
from posttrain.envs.factory import make_env  # noqa: E402
from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.trainer.heldout import heldout_accuracy  # noqa: E402
from posttrain.trainer.loop import AsyncConfig, train_async  # noqa: E402
from posttrain.trainer.optim import optimizer_from_config  # noqa: E402
from posttrain.trainer.phases import load_policy, run_sft  # noqa: E402
from posttrain.rollout import EpisodeLimits  # noqa: E402
from posttrain.trainer.producers import RolloutSettings  # noqa: E402
from posttrain.trainer.sft import pad_id_of  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402

DOMAINS = [DomainSpec(id="math.add-v1", difficulties=[1, 2]), DomainSpec(id="math.compare-v1")]


class RemoteSandboxEnv:
    """The domain's env, with a remote tool call of long-tailed latency in ``step``."""

    def __init__(self, task, delay_s: float):
        self.task, self.delay_s = task, delay_s
        self.inner = make_env(get_domain(task.domain), task)

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        time.sleep(self.delay_s)
        return self.inner.step(action)

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


class LongTail:
    """Env factory: the k-th env of a task gets a latency drawn from ``(task key, k)``."""

    def __init__(self, base_s: float, tail_frac: float = 0.1, tail_mult: float = 10.0):
        self.base_s, self.tail_frac, self.tail_mult = base_s, tail_frac, tail_mult
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, task):
        with self._lock:
            k = self._seen.get(task.key, 0)
            self._seen[task.key] = k + 1
        tail = random.Random(f"{task.key}|{k}").random() < self.tail_frac
        return RemoteSandboxEnv(task, self.base_s * (self.tail_mult if tail else 1.0))


def warm_model(cfg: RunConfig):
    model, tok = load_policy(cfg)
    run_sft(model, tok, cfg)
    return model, tok


def one_run(name: str, lag: int, warm, cfg: RunConfig, args, schedule: str = "deterministic") -> dict:
    model, tok = copy.deepcopy(warm[0]), warm[1]
    rl = cfg.rl.model_copy(update={"max_policy_lag": lag})
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    stream = TaskStream(cfg.domains, seed=cfg.seed)
    opt, sched = optimizer_from_config(model, rl)
    settings = RolloutSettings(make_env=LongTail(args.base_s),
                               limits=EpisodeLimits(env_workers=args.env_workers))
    rows: list[dict] = []
    t0 = time.perf_counter()
    train_async(model, opt, backend, stream, rl, pad_id=pad_id_of(tok), seed=cfg.seed, lr_scheduler=sched,
                on_step=lambda s, m: rows.append(m),
                config=AsyncConfig(num_producers=max(1, lag), schedule=schedule),
                settings=settings)
    wall = time.perf_counter() - t0
    acc = heldout_accuracy(backend, cfg.domains, args.heldout, 10_000_000, rl.max_new_tokens)
    se = math.sqrt(sum(v ** 2 for v in acc["stderr"].values())) / len(acc["stderr"])
    return {"name": name, "wall_s": wall, "steps": len(rows),
            "idle_s": sum(r["time/wait_s"] for r in rows), "acc": acc["overall"], "acc_se": se,
            "reward_last": sum(r["reward/mean"] for r in rows[-5:]) / max(1, len(rows[-5:])),
            "stage_s": {k: sum(r.get(f"time/{k}", 0.0) for r in rows)
                        for k in ("sample_s", "env_s", "verify_s", "update_s", "wait_s")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--base-s", type=float, default=0.1, help="tool latency of a normal episode")
    ap.add_argument("--env-workers", type=int, default=64,
                    help="remote sandboxes (one per episode of a step by default)")
    ap.add_argument("--heldout", type=int, default=100)
    ap.add_argument("--sft-steps", type=int, default=150)
    ap.add_argument("--free-running", action="store_true",
                    help="also run each lag with async_rl.schedule: free_running (lagL_free)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = RunConfig(seed=0, domains=DOMAINS, sft=SFTConfig(steps=args.sft_steps, batch_size=32),
                    rl=RLConfig(steps=args.steps, prompts_per_step=8, group_size=8, max_new_tokens=6,
                                lr=5e-4, filter_zero_variance=False))
    t0 = time.perf_counter()
    warm = warm_model(cfg)
    print(f"warm-up (SFT {args.sft_steps} steps): {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    before = heldout_accuracy(HFBackend(copy.deepcopy(warm[0]).eval(), warm[1]), cfg.domains, args.heldout,
                              10_000_000, cfg.rl.max_new_tokens)["overall"]
    lags = {"sync": (0, "deterministic"), "lag1": (1, "deterministic"), "lag2": (2, "deterministic"),
            "lag4": (4, "deterministic")}
    if args.free_running:  # newest weights per job instead of the scheduled version
        lags.update({f"lag{L}_free": (L, "free_running") for L in (1, 2, 4)})
    runs: dict[str, list[dict]] = {k: [] for k in lags}
    for _ in range(args.rounds):  # interleaved: drift on a shared machine hits every configuration
        for name, (lag, schedule) in lags.items():
            r = one_run(name, lag, warm, cfg, args, schedule)
            runs[name].append(r)
            print(f"{name}: {r['steps'] / r['wall_s'] * 60:.1f} steps/min, idle "
                  f"{r['idle_s'] / r['wall_s']:.2f}, acc {r['acc']:.3f}±{r['acc_se']:.3f}, "
                  f"stages {({k: round(v, 1) for k, v in r['stage_s'].items()})}", file=sys.stderr)
    spm = {k: sum(r["steps"] for r in v) / sum(r["wall_s"] for r in v) * 60 for k, v in runs.items()}
    idle = {k: sum(r["idle_s"] for r in v) / sum(r["wall_s"] for r in v) for k, v in runs.items()}
    acc = {k: sum(r["acc"] for r in v) / len(v) for k, v in runs.items()}
    se = {k: math.sqrt(sum(r["acc_se"] ** 2 for r in v)) / len(v) for k, v in runs.items()}
    out = {f"steps_per_min_{k}": round(v, 2) for k, v in spm.items()}
    out.update({f"speedup_{k}": round(spm[k] / spm["sync"], 3) for k in lags if k != "sync"})
    out.update({f"free_over_deterministic_lag{L}": round(spm[f"lag{L}_free"] / spm[f"lag{L}"], 3)
                for L in (1, 2, 4) if f"lag{L}_free" in spm})
    out.update({f"trainer_idle_{k}": round(v, 3) for k, v in idle.items()})
    out.update({f"heldout_{k}": round(v, 4) for k, v in acc.items()})
    out.update({f"heldout_se_{k}": round(v, 4) for k, v in se.items()})
    out["heldout_before_rl"] = round(before, 4)
    out["heldout_lag4_within_noise"] = abs(acc["lag4"] - acc["sync"]) <= 2 * math.hypot(se["lag4"], se["sync"])
    out.update({"steps": args.steps, "rounds": args.rounds, "base_latency_s": args.base_s,
                "tail": "10% of episodes at 10x", "samples_per_step": 64})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
