"""Where one RL step's time goes, against the step's arithmetic floor on this CPU.

The step is ``bench/learning_vs_trl.py``'s posttrain side: the built-in tiny model after a
short SFT warm-up on 2-digit addition, GRPO with 8 prompts x 8 samples, 6 new tokens, one
torch thread, the reference loop's ``rl_step`` exactly as it runs there (the backend a copy
of the policy, weights synced into it after each update).

How it measures: the functions a step calls are wrapped with timers for the profiled steps
(nothing in posttrain is changed): the backend's prefill, each decode forward, the sampler
(``sample``), the episode engine's verification time, advantages + batch building, the
update's forward (``policy_logprobs``), ``backward``, gradient clipping, the optimizer step
and the weight sync. "Python per decode step" is the decode loop's time outside its
forwards and draws (row bookkeeping, stop checks, mask growth) over its steps; "engine
rest" is the rollout's time outside generation and verification (env set-up, trajectory
assembly); "other" is the step outside every named part (loss, filters, metrics).

The floor: one extra step runs under ``torch.utils.flop_counter.FlopCounterMode``, which
counts the FLOPs of every matmul and attention kernel the step actually calls; the floor is
that count over the measured single-thread matmul throughput of this CPU (the best of
square products of 256 to 1024), so ``step / floor`` is the gap to the CPU's limit. The
*fixed cost* is what a step pays whatever its size: its number of model forwards times
the measured time of a 1-row, 1-token decode forward of this model (dispatch, not
arithmetic); ``step / (floor + fixed)`` is the remaining gap.

Printed: a table (rich) and, last line, one JSON object (seconds per step, medians over
the profiled steps). About 1-2 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

import posttrain.inference.hf as hf_mod  # noqa: E402
import posttrain.trainer.reference_loop as loop_mod  # noqa: E402
from posttrain.core.config import DomainSpec, RLConfig, RunConfig, SFTConfig  # noqa: E402
from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.models.loading import load_model, save_model  # noqa: E402
from posttrain.models.tiny import build_tiny_model  # noqa: E402
from posttrain.trainer.optim import build_optimizer  # noqa: E402
from posttrain.trainer.phases import run_sft  # noqa: E402
from posttrain.trainer.reference_loop import RLState, rl_step  # noqa: E402
from posttrain.trainer.sft import pad_id_of  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402

SPEC = DomainSpec(id="math.add-v1", difficulties=[2])
PARTS = ("prefill", "decode forwards", "sampling", "Python per decode step", "verification",
         "engine rest", "batch building", "update forward", "backward", "grad clip",
         "optimizer", "weight sync", "other")


class Timers:
    """Seconds per named part for the current step; wrappers add to it while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.cur: dict[str, float] = defaultdict(float)
        self.steps: list[dict[str, float]] = []

    def wrap(self, owner, name: str, part: str, count: str | None = None):
        orig = getattr(owner, name)

        def timed(*a, **kw):
            if not self.on:
                return orig(*a, **kw)
            t0 = time.perf_counter()
            try:
                return orig(*a, **kw)
            finally:
                self.cur[part] += time.perf_counter() - t0
                if count:
                    self.cur[count] += 1
        setattr(owner, name, timed)
        return orig


def matmul_gflops() -> tuple[float, dict[int, float]]:
    """Best single-thread float32 matmul throughput over square sizes (GFLOP/s)."""
    out = {}
    for n in (256, 512, 1024):
        a, b = torch.randn(n, n), torch.randn(n, n)
        reps = max(3, int(2e9 / (2 * n ** 3)))
        torch.mm(a, b)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(reps):
                torch.mm(a, b)
            best = min(best, (time.perf_counter() - t0) / reps)
        out[n] = 2 * n ** 3 / best / 1e9
    return max(out.values()), out


def one_row_forward_s(backend: HFBackend) -> float:
    """Median time of a 1-row, 1-token decode forward of this model (the dispatch floor)."""
    ids = torch.tensor([[5, 6, 7, 8]])
    times = []
    with torch.inference_mode():
        for _ in range(30):
            cache = backend._new_cache()
            backend._forward(ids, torch.ones_like(ids), torch.arange(4)[None], cache,
                             torch.arange(4)[None])
            t0 = time.perf_counter()
            backend._forward(ids[:, :1], torch.ones((1, 5), dtype=torch.long),
                             torch.tensor([[4]]), cache, torch.arange(5)[None])
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def instrument(backend: HFBackend, opt, timers: Timers) -> None:
    """Wrap what one step calls (see the module docstring)."""
    in_decode = {"on": False}
    decode = backend._decode

    def decode_timed(*a, **kw):
        in_decode["on"] = True
        t0 = time.perf_counter()
        try:
            return decode(*a, **kw)
        finally:
            in_decode["on"] = False
            if timers.on:
                timers.cur["_decode_total"] += time.perf_counter() - t0
    backend._decode = decode_timed
    forward = backend._forward

    def forward_timed(ids, *a, **kw):
        t0 = time.perf_counter()
        try:
            return forward(ids, *a, **kw)
        finally:
            if timers.on and in_decode["on"]:
                timers.cur["decode forwards"] += time.perf_counter() - t0
                timers.cur["_decode_steps"] += 1
                timers.cur["_decode_rows"] += ids.shape[0]
    backend._forward = forward_timed
    timers.wrap(backend, "_prefill", "prefill")
    timers.wrap(backend, "generate", "_generate")
    timers.wrap(hf_mod, "sample", "sampling")
    timers.wrap(loop_mod, "compute_advantages", "batch building")
    timers.wrap(loop_mod, "build_policy_batch", "batch building")
    timers.wrap(loop_mod, "policy_logprobs", "update forward")
    timers.wrap(torch.Tensor, "backward", "backward")
    timers.wrap(torch.nn.utils, "clip_grad_norm_", "grad clip")
    timers.wrap(opt, "step", "optimizer")
    timers.wrap(backend, "load_weights", "weight sync")
    timers.wrap(loop_mod, "sync_weights", "weight sync")
    play = loop_mod.play_scheduled

    def play_timed(*a, **kw):
        t0 = time.perf_counter()
        groups, times, retries = play(*a, **kw)
        if timers.on:
            timers.cur["_rollout"] += time.perf_counter() - t0
            timers.cur["verification"] += times.verify_s
        return groups, times, retries
    loop_mod.play_scheduled = play_timed


def finish_step(timers: Timers, step_s: float) -> dict[str, float]:
    c = timers.cur
    py = c["_decode_total"] - c["decode forwards"] - c["sampling"]
    c["Python per decode step"] = py
    c["engine rest"] = max(0.0, c["_rollout"] - c["_generate"] - c["verification"])
    named = sum(c[p] for p in PARTS if p != "other")
    c["other"] = max(0.0, step_s - named)
    c["step"] = step_s
    out = dict(c)
    timers.cur = defaultdict(float)
    return out


def count_flops(model, opt, backend, stream, rl, state, pad_id) -> tuple[float, dict[str, float]]:
    """FLOPs of one step (FlopCounterMode), split into generation and update."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    split = {}
    play = loop_mod.play_scheduled

    def play_counted(*a, **kw):
        before = counter.get_total_flops()
        out = play(*a, **kw)
        split["generation"] = counter.get_total_flops() - before
        return out
    loop_mod.play_scheduled = play_counted
    try:
        with counter:
            rl_step(model, opt, backend, stream, rl, state, pad_id=pad_id)
    finally:
        loop_mod.play_scheduled = play
    total = float(counter.get_total_flops())
    split["update"] = total - split.get("generation", 0)
    return total, split


def warm_start(sft_steps: int, folder: Path | None):
    if folder is not None and (folder / "config.json").exists():
        return load_model(folder)
    model, tok = build_tiny_model(seed=0)
    run_sft(model, tok, RunConfig(domains=[SPEC], sft=SFTConfig(steps=sft_steps, batch_size=64,
                                                                lr=1e-3)))
    if folder is not None:
        save_model(model, tok, folder)
    return model, tok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sft-steps", type=int, default=380,
                    help="warm-up steps, as bench/learning_vs_trl.py (a raw model earns no reward: no update)")
    ap.add_argument("--steps", type=int, default=30, help="profiled RL steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed RL steps first")
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument("--init", type=Path, default=None,
                    help="folder of the warmed-up model: loaded when it exists, else written "
                         "(so A/B runs of two builds start from the same weights)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, tok = warm_start(args.sft_steps, args.init)
    rl = RLConfig(algorithm="grpo", prompts_per_step=8, group_size=8, lr=args.lr,
                  max_new_tokens=6, filter_zero_variance=False)
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt = build_optimizer(model, args.lr)
    stream, state, pad = TaskStream([SPEC], seed=0), RLState(), pad_id_of(tok)
    for _ in range(args.warmup):
        rl_step(model, opt, backend, stream, rl, state, pad_id=pad)
    flops, flop_split = count_flops(model, opt, backend, stream, rl, state, pad)
    timers = Timers()
    instrument(backend, opt, timers)
    rows = []
    for _ in range(args.steps):
        timers.on = True
        t0, c0 = time.perf_counter(), time.process_time()
        metrics = rl_step(model, opt, backend, stream, rl, state, pad_id=pad)
        step_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
        timers.on = False
        rows.append({**finish_step(timers, step_s), "_cpu": cpu_s,
                     "_merged": metrics.get("batch/identical_rows_merged", 0.0),
                     "_inert": metrics.get("batch/inert_rows_skipped", 0.0),
                     "_reward": metrics["reward/mean"]})
    peak, by_size = matmul_gflops()
    one_row = one_row_forward_s(backend)
    med = {k: statistics.median(r.get(k, 0.0) for r in rows) for k in rows[0]}
    decode_steps = med["_decode_steps"]
    forwards = decode_steps + 1 + 1  # decode steps, the prefill, the update's forward
    floor = flops / (peak * 1e9)
    fixed = forwards * one_row
    step = med["step"]
    report = {
        "step_s": round(step, 5), "step_cpu_s": round(med["_cpu"], 5),
        "update_rows_merged": med["_merged"], "update_rows_inert": med["_inert"],
        "reward_mean": round(statistics.mean(r["_reward"] for r in rows), 3),
        "parts_s": {p: round(med[p], 5) for p in PARTS},
        "decode_steps": decode_steps, "decode_rows_per_step": round(med["_decode_rows"] / max(1, decode_steps), 1),
        "decode_s_per_token_step": round(med["decode forwards"] / max(1, decode_steps), 6),
        "python_s_per_decode_step": round(med["Python per decode step"] / max(1, decode_steps), 6),
        "flops_per_step": flops, "flops_split": flop_split,
        "matmul_gflops_1thread": round(peak, 2),
        "matmul_gflops_by_size": {str(k): round(v, 2) for k, v in by_size.items()},
        "floor_s": round(floor, 5), "step_over_floor": round(step / floor, 1),
        "one_row_forward_s": round(one_row, 6), "fixed_cost_s": round(fixed, 5),
        "step_over_floor_plus_fixed": round(step / (floor + fixed), 2),
        "steps_profiled": args.steps, "load_avg": os.getloadavg(),
    }
    print_table(report)
    print(json.dumps(report))


def print_table(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"one RL step: {r['step_s'] * 1e3:.1f} ms wall, {r['step_cpu_s'] * 1e3:.1f} ms CPU "
                    f"(median of {r['steps_profiled']})")
    for col in ("part", "ms / step", "share"):
        t.add_column(col, justify="left" if col == "part" else "right")
    for part, s in r["parts_s"].items():
        t.add_row(part, f"{s * 1e3:.2f}", f"{100 * s / r['step_s']:.0f}%")
    t.add_section()
    t.add_row("arithmetic floor", f"{r['floor_s'] * 1e3:.2f}",
              f"{r['flops_per_step'] / 1e9:.2f} GFLOP at {r['matmul_gflops_1thread']} GFLOP/s")
    t.add_row("fixed cost", f"{r['fixed_cost_s'] * 1e3:.2f}",
              f"{r['decode_steps'] + 2:.0f} forwards x {r['one_row_forward_s'] * 1e3:.2f} ms")
    t.add_row("step / floor", f"{r['step_over_floor']}x", "")
    t.add_row("step / (floor + fixed)", f"{r['step_over_floor_plus_fixed']}x", "")
    with contextlib.redirect_stdout(sys.stderr):
        Console(file=sys.stderr).print(t)
    print(f"decode: {r['decode_steps']:.0f} steps of {r['decode_rows_per_step']} rows, "
          f"{r['decode_s_per_token_step'] * 1e3:.2f} ms forward + "
          f"{r['python_s_per_decode_step'] * 1e3:.2f} ms Python each; load {r['load_avg']}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
