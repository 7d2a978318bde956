"""posttrain against TRL's GRPOTrainer: held-out accuracy over wall-clock time, same start.

What runs (one process, one machine, one torch thread for both sides):
1. the built-in tiny model (about 1.8M parameters) gets a supervised warm-up with posttrain's
   SFT on 2-digit addition (``math.add-v1`` at difficulty 2) for ``--sft-steps`` steps of 64
   examples (a step count, not seconds, so a loaded machine gives the same start), and is
   saved with ``save_pretrained``: both sides start from this same folder;
2. TRL: ``GRPOTrainer`` (8 prompts x 8 generations per step, exact-match reward through the
   same posttrain verifier, no KL, the same learning rate and optimizer settings);
3. posttrain: the reference RL loop (GRPO, same group size, prompts per step, learning rate);
4. the two sides take turns (A B A B): each trains for ``--slice`` seconds of its own training
   time, then hands over, until each has used ``--budget`` seconds — so a load spike on this
   shared machine hits both sides, not one of them;
5. both are evaluated every ``--eval-every`` seconds of *training* time on the same 500
   held-out tasks with greedy decoding by the same evaluator (the clock is paused while
   evaluating and while waiting for the turn, so neither costs a side budget).

Printed: accuracy over time for both, completions per second (completions generated per
second of training time, generation and update together), and the ratio of the time TRL
took to reach its final accuracy over the time posttrain took to reach the same accuracy
(``inf`` is never printed: if posttrain never reaches it the ratio is TRL's time over the
budget, i.e. at most 1). TRL's *final accuracy* is the mean of its evaluations over the last
third of the budget: once learning plateaus a single evaluation is one noisy draw from the
plateau (about ±0.015 at 500 tasks, and the policy itself wanders more), and a lucky or
unlucky last point would decide the ratio. Last line: one JSON object.

Why posttrain's steps are cheaper, with the same algorithm and arithmetic: its update packs
each group's prompt once with its samples' completions and no padding
(``trainer/shared_prefix.py``), leaves rows whose advantage is exactly 0 out of the forward
(their gradient is 0; the loss keeps the batch's normaliser), and steps a fused AdamW; its
sampler prefills each prompt once for its 8 samples and decodes through a lean forward over
the same weights (``inference/fast_decoder.py``). TRL recomputes every row in full.

Defaults: the warm-up length (380 steps, about 0.79 held-out) puts the start near
DESIGN.md's anchor (TRL 0.73 -> 0.89 in 300 s); the learning rate (``--lr``, the same for
both sides) is TRL's own default, 1e-6, at which the gain builds up over a few hundred steps
— at 1e-5 both sides plateau (about 0.89) within 10 s, too fast for the time-to-accuracy
ratio to mean anything, and at 1e-4 both lose accuracy (the previous default). Requires
the ``bench`` extra (``pip install -e '.[bench]'``). Runs about 2 x budget + SFT +
evaluations (about 15 minutes).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
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
HELDOUT_N = 500
SEED_OFFSET = 10_000_000
MAX_NEW = 6
SIDES = ("trl", "posttrain")


def evaluate(model, tokenizer) -> float:
    snapshot = copy.deepcopy(model).eval()
    # A trainer may have switched on gradient checkpointing, which disables the KV cache that
    # the sampler's decode loop relies on: evaluate a plain copy.
    if getattr(snapshot, "is_gradient_checkpointing", False):
        snapshot.gradient_checkpointing_disable()
    snapshot.config.use_cache = True
    backend = HFBackend(snapshot, tokenizer)
    return heldout_accuracy(backend, [SPEC], HELDOUT_N, SEED_OFFSET, MAX_NEW)["overall"]


def warm_up(steps: int, out: Path) -> float:
    model, tok = build_tiny_model(seed=0)
    cfg = RunConfig(domains=[SPEC], sft=SFTConfig(steps=steps, batch_size=64, lr=1e-3))
    t0 = time.perf_counter()
    run_sft(model, tok, cfg)
    save_model(model, tok, out)
    print(f"SFT warm-up: {steps} steps in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return evaluate(model, tok)


class Baton:
    """Whose turn it is; a side that finished leaves the other to run alone."""

    def __init__(self) -> None:
        self.turn = SIDES[0]
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
                 evaluate_fn, acc0: float):
        self.side, self.baton, self.budget, self.every = side, baton, budget, every
        self.slice_s, self.evaluate_fn = slice_s, evaluate_fn
        self.start = time.perf_counter()
        self.paused = 0.0
        self.next_eval, self.next_turn = every, slice_s
        self.curve: list[tuple[float, float]] = [(0.0, acc0)]

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
                self.curve.append((round(min(t, self.budget), 1), self.evaluate_fn()))
            self.next_eval += self.every
        done = t >= self.budget
        if done or t >= self.next_turn:
            self.next_turn += self.slice_s
            with self.hold():
                self.baton.hand_over(self.side, done)
                if not done:
                    self.baton.wait(self.side)
        return done


def run_posttrain(folder: Path, clock: Clock, lr: float):
    model, tok = load_model(folder)
    clock.evaluate_fn = lambda: evaluate(model, tok)
    rl = RLConfig(algorithm="grpo", prompts_per_step=8, group_size=8, lr=lr,
                  max_new_tokens=MAX_NEW, filter_zero_variance=False)
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt = build_optimizer(model, lr)
    stream, state = TaskStream([SPEC], seed=0), RLState()
    step_s = 0.0
    clock.begin()
    clock.start, clock.paused = time.perf_counter(), 0.0
    while True:
        t0 = time.perf_counter()
        rl_step(model, opt, backend, stream, rl, state, pad_id=pad_id_of(tok))
        step_s += time.perf_counter() - t0
        if clock.tick():
            break
    return state.step, step_s


def run_trl(folder: Path, clock: Clock, lr: float, workdir: Path, result: dict) -> None:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # OpenMP's thread count is per thread: set it here too
    model, tok = load_model(folder)
    clock.evaluate_fn = lambda: evaluate(model, tok)
    dom = get_domain(SPEC.id)
    tasks = TaskStream([SPEC], seed=0).next(64 * 3000)
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
                      save_strategy="no", report_to=[], use_cpu=True, seed=0,
                      disable_dropout=True, dataloader_num_workers=0,
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
    result.update(steps=steps["n"], train_s=steps["train_s"])


def plateau(curve, budget: float) -> float:
    """Mean accuracy over the last third of the budget (see the module docstring)."""
    tail = [acc for t, acc in curve if t >= budget * 2 / 3] or [curve[-1][1]]
    return round(sum(tail) / len(tail), 4)


def time_to_reach(curve, target: float) -> float | None:
    for t, acc in curve:
        if acc >= target - 1e-9:
            return t
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=300.0, help="RL seconds per side")
    ap.add_argument("--sft-steps", type=int, default=380)
    ap.add_argument("--eval-every", type=float, default=5.0)
    ap.add_argument("--slice", type=float, default=10.0, help="seconds per turn (A B A B)")
    ap.add_argument("--lr", type=float, default=1e-6,
                    help="both sides; 1e-6 is GRPOConfig's default")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sft"
        acc0 = warm_up(args.sft_steps, folder)
        print(f"after SFT: held-out {acc0:.3f}", file=sys.stderr)
        baton = Baton()
        clocks = {s: Clock(s, baton, args.budget, args.eval_every, args.slice, None, acc0)
                  for s in SIDES}
        trl: dict = {}
        thread = threading.Thread(target=run_trl, name="trl", daemon=True,
                                  args=(folder, clocks["trl"], args.lr, Path(tmp) / "trl", trl))
        thread.start()
        try:
            pt_steps, pt_s = run_posttrain(folder, clocks["posttrain"], args.lr)
        finally:
            baton.hand_over("posttrain", done=True)
        thread.join()
    if "steps" not in trl:
        raise SystemExit("the TRL side failed (see its traceback above)")
    trl_curve, pt_curve = clocks["trl"].curve, clocks["posttrain"].curve
    trl_final, pt_final = plateau(trl_curve, args.budget), plateau(pt_curve, args.budget)
    trl_t = time_to_reach(trl_curve, trl_final) or args.budget
    pt_t = time_to_reach(pt_curve, trl_final)
    ratio = trl_t / pt_t if pt_t else trl_t / args.budget
    trl_cps, pt_cps = 64 * trl["steps"] / trl["train_s"], 64 * pt_steps / pt_s
    print("time_s  trl_acc  posttrain_acc", file=sys.stderr)
    for (t, a), (_, b) in zip(trl_curve, pt_curve):
        print(f"{t:6.0f}  {a:7.3f}  {b:13.3f}", file=sys.stderr)
    print(json.dumps({
        "sft_acc": acc0, "trl_final_acc": trl_final, "posttrain_final_acc": pt_final,
        "trl_last_acc": trl_curve[-1][1], "posttrain_last_acc": pt_curve[-1][1],
        "trl_best_acc": max(a for _, a in trl_curve), "posttrain_best_acc": max(a for _, a in pt_curve),
        "trl_time_to_final_s": trl_t, "posttrain_time_to_trl_acc_s": pt_t,
        "time_to_trl_acc_ratio": round(ratio, 3),
        "trl_steps": trl["steps"], "posttrain_steps": pt_steps,
        "trl_step_s": round(trl["train_s"] / max(1, trl["steps"]), 4),
        "posttrain_step_s": round(pt_s / max(1, pt_steps), 4),
        "trl_completions_per_s": round(trl_cps, 1), "posttrain_completions_per_s": round(pt_cps, 1),
        "completions_per_s_ratio": round(pt_cps / trl_cps, 3),
        "trl_curve": trl_curve, "posttrain_curve": pt_curve, "budget_s": args.budget,
        "lr": args.lr, "sft_steps": args.sft_steps, "slice_s": args.slice,
    }))


if __name__ == "__main__":
    main()
