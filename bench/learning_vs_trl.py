"""posttrain against TRL's GRPOTrainer: held-out accuracy over wall-clock time, same start, several seeds.

What runs (one process, one machine, one torch thread for both sides):
1. the built-in tiny model (about 1.8M parameters) gets a supervised warm-up with posttrain's
   SFT on 2-digit addition (``math.add-v1`` at difficulty 2) for ``--sft-steps`` steps of 64
   examples (a step count, not seconds, so a loaded machine gives the same start), and is
   saved with ``save_pretrained``: both sides of every seed start from this same folder;
2. TRL: ``GRPOTrainer`` (8 prompts x 8 generations per step, exact-match reward through the
   same posttrain verifier, no KL, the same learning rate and optimizer settings);
3. posttrain: the reference RL loop (GRPO, same group size, prompts per step, learning rate);
4. for each of ``--seeds`` seeds (the RL seed of both sides: task order and sampling) the two
   sides take turns (A B A B, the side that starts alternating from seed to seed): each trains
   for ``--slice`` seconds of its own training time, then hands over, until each has used
   ``--budget`` seconds — so a load spike on this shared machine hits both sides;
5. both are evaluated on the same ``--heldout`` held-out tasks with greedy decoding by the same
   evaluator, every ``--eval-every`` seconds of *training* time over the first quarter of the
   budget and every 3x that after (the clock is paused while evaluating and while waiting for
   the turn, so neither costs a side budget).

What is compared, per seed, then as the median and range over seeds (no single-run ratio on
a plateau: one evaluation of a plateau is one noisy draw, about ±0.015 at 500 tasks):
- TRL's *gain*: from the SFT accuracy to TRL's plateau (the mean of its evaluations over the
  last third of the budget); the time each side takes to reach 50 % and 80 % of that gain
  (first crossing, linearly interpolated between evaluations; a side that never reaches it
  is counted at the budget, so the ratio is then a lower bound); ratio = TRL's time over
  posttrain's;
- the area under accuracy-vs-time above the SFT accuracy over the budget (the mean gain);
- step time and completions per second (completions generated per second of training time,
  generation and update together).
The load average seen at the evaluations is reported with the figures. Last line: one JSON
object (``completions_per_s_ratio_median``, ``time_to_80pct_gain_ratio_median``, ...).

Why posttrain's steps are cheaper, with the same algorithm: its sampler prefills each prompt
once for its samples and computes each distinct sample history once per decode step, through
a lean forward over the same weights (``inference/hf.py``, ``inference/fast_decoder.py``);
its update packs each group's prompt once with its samples' completions and no padding
(``trainer/shared_prefix.py``), leaves rows whose advantage is exactly 0 out of the forward,
computes identical samples once with their summed weight (``trainer/merge_rows.py``; both
exact: the loss keeps the batch's normaliser), and steps a fused AdamW. TRL recomputes every
row in full. ``bench/profile_step.py`` shows where posttrain's step time goes.

Defaults: the warm-up length (380 steps, about 0.76-0.79 held-out) puts the start near
DESIGN.md's anchor (TRL 0.73 -> 0.89 in 300 s); the learning rate (``--lr``, the same for
both sides) is TRL's own default, 1e-6, at which the gain builds up over a few hundred steps
— at 1e-5 both sides plateau (about 0.89) within 10 s, too fast for a time ratio to mean
anything, and at 1e-4 both lose accuracy. Requires the ``bench`` extra (``pip install -e
'.[bench]'``). Runs about 2 x budget x seeds + SFT + evaluations (about 30 minutes at the
defaults); ``--budget 5 --seeds 2 --sft-steps 5 --heldout 20`` is a one-minute smoke run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

from posttrain.core.config import DomainSpec, RLConfig, RunConfig, SFTConfig  # noqa: E402
from posttrain.domains.base import get_domain  # noqa: E402
from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.models.loading import load_model, save_model  # noqa: E402
from posttrain.models.tiny import build_tiny_model  # noqa: E402
from posttrain.trainer.heldout import heldout_accuracy  # noqa: E402
from posttrain.trainer.optim import build_optimizer  # noqa: E402
from posttrain.trainer.phases import run_sft  # noqa: E402
from posttrain.trainer.reference_loop import RLState, rl_step  # noqa: E402
from posttrain.trainer.sft import pad_id_of  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402

SPEC = DomainSpec(id="math.add-v1", difficulties=[2])
SEED_OFFSET = 10_000_000
MAX_NEW = 6
SIDES = ("trl", "posttrain")


def evaluate(model, tokenizer, n: int) -> float:
    snapshot = copy.deepcopy(model).eval()
    # A trainer may have switched on gradient checkpointing, which disables the KV cache that
    # the sampler's decode loop relies on: evaluate a plain copy.
    if getattr(snapshot, "is_gradient_checkpointing", False):
        snapshot.gradient_checkpointing_disable()
    snapshot.config.use_cache = True
    backend = HFBackend(snapshot, tokenizer)
    return heldout_accuracy(backend, [SPEC], n, SEED_OFFSET, MAX_NEW)["overall"]


def warm_up(steps: int, out: Path, heldout: int) -> float:
    model, tok = build_tiny_model(seed=0)
    cfg = RunConfig(domains=[SPEC], sft=SFTConfig(steps=steps, batch_size=64, lr=1e-3))
    t0 = time.perf_counter()
    run_sft(model, tok, cfg)
    save_model(model, tok, out)
    print(f"SFT warm-up: {steps} steps in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return evaluate(model, tok, heldout)


class Baton:
    """Whose turn it is; a side that finished leaves the other to run alone."""

    def __init__(self, first: str) -> None:
        self.turn = first
        self.finished: set[str] = set()
        self.cv = threading.Condition()

    def wait(self, side: str) -> None:
        with self.cv:
            self.cv.wait_for(lambda: self.turn == side or set(SIDES) - {side} <= self.finished)

    def hand_over(self, side: str, done: bool = False) -> None:
        with self.cv:
            if done:
                self.finished.add(side)
            other = next(s for s in SIDES if s != side)
            if other not in self.finished:
                self.turn = other
            self.cv.notify_all()


class Clock:
    """One side's training time: evaluations and turn waits paused; slices and eval points."""

    def __init__(self, side: str, baton: Baton, budget: float, every: float, slice_s: float,
                 acc0: float):
        self.side, self.baton, self.budget, self.every = side, baton, budget, every
        self.slice_s, self.evaluate_fn = slice_s, None
        self.start = time.perf_counter()
        self.paused = 0.0
        self.next_eval, self.next_turn = every, slice_s
        self.curve: list[tuple[float, float]] = [(0.0, acc0)]
        self.loads: list[float] = []

    def elapsed(self) -> float:
        return time.perf_counter() - self.start - self.paused

    @contextmanager
    def hold(self):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.paused += time.perf_counter() - t0

    def begin(self) -> None:
        with self.hold():
            self.baton.wait(self.side)

    def tick(self) -> bool:
        """After a step: evaluate when due, hand over at the end of a slice; True when done."""
        t = self.elapsed()
        if t >= self.next_eval or t >= self.budget:
            with self.hold():
                self.curve.append((round(min(t, self.budget), 2), self.evaluate_fn()))
                self.loads.append(os.getloadavg()[0])
            # Dense early (where the two sides differ), sparser on the plateau.
            self.next_eval += self.every if t < self.budget / 4 else 3 * self.every
        done = t >= self.budget
        if done or t >= self.next_turn:
            self.next_turn += self.slice_s
            with self.hold():
                self.baton.hand_over(self.side, done)
                if not done:
                    self.baton.wait(self.side)
        return done


def run_posttrain(folder: Path, clock: Clock, lr: float, seed: int, heldout: int):
    torch.set_num_threads(1)
    model, tok = load_model(folder)
    clock.evaluate_fn = lambda: evaluate(model, tok, heldout)
    rl = RLConfig(algorithm="grpo", prompts_per_step=8, group_size=8, lr=lr,
                  max_new_tokens=MAX_NEW, filter_zero_variance=False)
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt = build_optimizer(model, lr)
    stream, state = TaskStream([SPEC], seed=seed), RLState()
    step_s = 0.0
    clock.begin()
    clock.start, clock.paused = time.perf_counter(), 0.0
    while True:
        t0 = time.perf_counter()
        rl_step(model, opt, backend, stream, rl, state, pad_id=pad_id_of(tok), seed=seed)
        step_s += time.perf_counter() - t0
        if clock.tick():
            break
    return state.step, step_s


def run_trl(folder: Path, clock: Clock, lr: float, workdir: Path, result: dict, seed: int,
            heldout: int) -> None:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # OpenMP's thread count is per thread: set it here too
    model, tok = load_model(folder)
    clock.evaluate_fn = lambda: evaluate(model, tok, heldout)
    dom = get_domain(SPEC.id)
    tasks = TaskStream([SPEC], seed=seed).next(64 * 3000)
    data = Dataset.from_list([{"prompt": [dict(m) for m in t.prompt], "key": t.key} for t in tasks])
    by_key = {t.key: t for t in tasks}

    def reward(prompts, completions, key, **_):
        return [dom.score(by_key[k], c[0]["content"] if isinstance(c, list) else c).value
                for c, k in zip(completions, key)]

    steps = {"n": 0, "train_s": 0.0, "t": None}

    class Budget(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            if steps["n"] == 0:  # TRL's set-up (dataloaders, accelerate) is not training time
                clock.begin()
                clock.start, clock.paused = time.perf_counter(), 0.0
            steps["t"] = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            steps["n"] += 1
            steps["train_s"] += time.perf_counter() - steps["t"]
            if clock.tick():
                control.should_training_stop = True

    args = GRPOConfig(output_dir=str(workdir), per_device_train_batch_size=64, num_generations=8,
                      max_completion_length=MAX_NEW, learning_rate=lr, beta=0.0, temperature=1.0,
                      loss_type="grpo", scale_rewards="group", lr_scheduler_type="constant",
                      warmup_steps=0, weight_decay=0.0, max_steps=10**6, logging_steps=10**6,
                      save_strategy="no", report_to=[], use_cpu=True, seed=seed,
                      disable_dropout=True, dataloader_num_workers=0, disable_tqdm=True,
                      # float32 like posttrain: TRL's default bf16 autocast is emulated, and
                      # ~20x slower, on CPUs without AVX512-BF16 (this machine's EPYC)
                      bf16=False, fp16=False,
                      gradient_checkpointing=False)  # posttrain does not use it either
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=data,
                          processing_class=tok, callbacks=[Budget()])
    try:
        trainer.train()
    finally:
        clock.baton.hand_over("trl", done=True)  # never leave posttrain waiting on a crash
    del trainer
    result.update(steps=steps["n"], train_s=steps["train_s"])


def plateau(curve, budget: float) -> float:
    """Mean accuracy over the last third of the budget (see the module docstring)."""
    tail = [acc for t, acc in curve if t >= budget * 2 / 3] or [curve[-1][1]]
    return round(sum(tail) / len(tail), 4)


def time_to_reach(curve, target: float) -> float | None:
    """First time the curve reaches ``target``, linear between evaluations; None if never."""
    for i, (t, acc) in enumerate(curve):
        if acc >= target - 1e-9:
            if i == 0:
                return t
            t0, a0 = curve[i - 1]
            return round(t0 + (target - a0) / (acc - a0) * (t - t0), 2)
    return None


def mean_gain(curve, acc0: float, budget: float) -> float:
    """Area under (accuracy - acc0) over [0, budget] (trapezoids), divided by the budget."""
    pts = [(min(t, budget), a) for t, a in curve if t <= budget] or [(0.0, acc0)]
    if pts[-1][0] < budget:  # the last evaluation holds until the end of the budget
        pts.append((budget, pts[-1][1]))
    area = sum((t1 - t0) * ((a0 + a1) / 2 - acc0) for (t0, a0), (t1, a1) in zip(pts, pts[1:]))
    return round(area / budget, 5)


def compare(trl_curve, pt_curve, acc0: float, budget: float) -> dict:
    """One seed's time-to-gain and area figures (see the module docstring)."""
    level = plateau(trl_curve, budget)
    out = {"trl_plateau_acc": level, "posttrain_plateau_acc": plateau(pt_curve, budget),
           "trl_gain": round(level - acc0, 4)}
    for pct in (50, 80):
        target = acc0 + pct / 100 * (level - acc0)
        t_trl, t_pt = time_to_reach(trl_curve, target), time_to_reach(pt_curve, target)
        out[f"trl_time_to_{pct}pct_gain_s"] = t_trl if t_trl is not None else budget
        out[f"posttrain_time_to_{pct}pct_gain_s"] = t_pt if t_pt is not None else budget
        out[f"posttrain_reached_{pct}pct"] = t_pt is not None
        # With a gain the targets are above the start, so both times are > 0.
        out[f"time_to_{pct}pct_gain_ratio"] = (round(
            out[f"trl_time_to_{pct}pct_gain_s"] / out[f"posttrain_time_to_{pct}pct_gain_s"], 3)
            if level > acc0 else None)
    out["trl_mean_gain"] = mean_gain(trl_curve, acc0, budget)
    out["posttrain_mean_gain"] = mean_gain(pt_curve, acc0, budget)
    out["mean_gain_ratio"] = (round(out["posttrain_mean_gain"] / out["trl_mean_gain"], 3)
                              if out["trl_mean_gain"] > 0 else None)
    return out


def run_seed(folder: Path, tmp: Path, seed: int, first: str, acc0: float, args) -> dict:
    """Both sides of one seed, in turns; its curves, speeds and comparison."""
    baton = Baton(first)
    clocks = {s: Clock(s, baton, args.budget, args.eval_every, args.slice, acc0) for s in SIDES}
    trl: dict = {}
    thread = threading.Thread(target=run_trl, name=f"trl-{seed}", daemon=True,
                              args=(folder, clocks["trl"], args.lr, tmp / f"trl{seed}", trl, seed,
                                    args.heldout))
    thread.start()
    try:
        pt_steps, pt_s = run_posttrain(folder, clocks["posttrain"], args.lr, seed, args.heldout)
    finally:
        baton.hand_over("posttrain", done=True)
    thread.join()
    if "steps" not in trl:
        raise SystemExit(f"the TRL side of seed {seed} failed (see its traceback above)")
    trl_curve, pt_curve = clocks["trl"].curve, clocks["posttrain"].curve
    trl_cps, pt_cps = 64 * trl["steps"] / trl["train_s"], 64 * pt_steps / pt_s
    out = {"seed": seed, "first": first, **compare(trl_curve, pt_curve, acc0, args.budget),
           "trl_steps": trl["steps"], "posttrain_steps": pt_steps,
           "trl_step_s": round(trl["train_s"] / max(1, trl["steps"]), 4),
           "posttrain_step_s": round(pt_s / max(1, pt_steps), 4),
           "trl_completions_per_s": round(trl_cps, 1), "posttrain_completions_per_s": round(pt_cps, 1),
           "completions_per_s_ratio": round(pt_cps / trl_cps, 3),
           "load_avg_seen": [round(x, 2) for x in clocks["trl"].loads + clocks["posttrain"].loads],
           "trl_curve": trl_curve, "posttrain_curve": pt_curve}
    print(f"seed {seed}: " + json.dumps({k: v for k, v in out.items()
                                         if not k.endswith("curve") and k != "load_avg_seen"}),
          file=sys.stderr)
    return out


SUMMARISED = ("completions_per_s_ratio", "time_to_50pct_gain_ratio", "time_to_80pct_gain_ratio",
              "mean_gain_ratio", "trl_time_to_50pct_gain_s", "posttrain_time_to_50pct_gain_s",
              "trl_time_to_80pct_gain_s", "posttrain_time_to_80pct_gain_s", "trl_plateau_acc",
              "posttrain_plateau_acc", "trl_mean_gain", "posttrain_mean_gain", "trl_step_s",
              "posttrain_step_s", "trl_completions_per_s", "posttrain_completions_per_s")


def summarise(seeds: list[dict]) -> dict:
    """Median and [min, max] over seeds of every figure in ``SUMMARISED``."""
    out: dict = {}
    for key in SUMMARISED:
        vals = [s[key] for s in seeds if s.get(key) is not None]
        if vals:
            out[f"{key}_median"] = round(statistics.median(vals), 4)
            out[f"{key}_range"] = [min(vals), max(vals)]
    loads = [x for s in seeds for x in s["load_avg_seen"]]
    out["load_avg_seen"] = {"min": min(loads), "median": round(statistics.median(loads), 2),
                            "max": max(loads)} if loads else None
    out["posttrain_reached_80pct_all_seeds"] = all(s["posttrain_reached_80pct"] for s in seeds)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=240.0, help="RL seconds per side and seed")
    ap.add_argument("--seeds", type=int, default=3, help="RL seeds (each runs both sides)")
    ap.add_argument("--sft-steps", type=int, default=380)
    ap.add_argument("--heldout", type=int, default=500, help="held-out tasks per evaluation")
    ap.add_argument("--eval-every", type=float, default=5.0,
                    help="seconds between evaluations over the first quarter (3x that after)")
    ap.add_argument("--slice", type=float, default=10.0, help="seconds per turn (A B A B)")
    ap.add_argument("--lr", type=float, default=1e-6,
                    help="both sides; 1e-6 is GRPOConfig's default")
    args = ap.parse_args()
    if args.seeds < 1 or args.budget <= 0:
        raise SystemExit(f"--seeds must be >= 1 and --budget > 0 (got {args.seeds}, {args.budget})")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sft"
        acc0 = warm_up(args.sft_steps, folder, args.heldout)
        print(f"after SFT: held-out {acc0:.3f}", file=sys.stderr)
        seeds = [run_seed(folder, Path(tmp), seed, SIDES[seed % 2], acc0, args)
                 for seed in range(args.seeds)]
    summary = summarise(seeds)
    print("figure  median  [range] over seeds", file=sys.stderr)
    for key in SUMMARISED:
        if f"{key}_median" in summary:
            print(f"{key:32s} {summary[key + '_median']:9.3f}  {summary[key + '_range']}",
                  file=sys.stderr)
    print(f"load average seen: {summary['load_avg_seen']}", file=sys.stderr)
    print(json.dumps({"sft_acc": acc0, **summary, "budget_s": args.budget, "seeds": seeds,
                      "lr": args.lr, "sft_steps": args.sft_steps, "slice_s": args.slice,
                      "heldout": args.heldout}))


if __name__ == "__main__":
    main()
