"""posttrain against TRL's GRPOTrainer: held-out accuracy over wall-clock time, same start.

What runs (one process, one machine, one torch thread for both sides):
1. the built-in tiny model (about 1.8M parameters) gets a supervised warm-up with posttrain's
   SFT on 2-digit addition (``math.add-v1`` at difficulty 2) for ``--sft-steps`` steps of 64
   examples (a step count, not seconds, so a loaded machine gives the same start), and is
   saved with ``save_pretrained``: both sides start from this same folder;
2. TRL: ``GRPOTrainer`` (8 prompts x 8 generations per step, exact-match reward through the
   same posttrain verifier, no KL, the same learning rate and optimizer) for ``--budget``
   seconds of training;
3. posttrain: the reference RL loop (GRPO, same group size, prompts per step, learning rate
   and budget);
4. both are evaluated every ``--eval-every`` seconds of *training* time on the same 200
   held-out tasks with greedy decoding (the evaluation clock is paused, so evaluation costs
   neither side budget).

Printed: accuracy over time for both, completions per second (completions generated per
second of training time, generation and update together), and the ratio of the time TRL
took to reach its final accuracy over the time posttrain took to reach the same accuracy
(``inf`` is never printed: if posttrain never reaches it the ratio is the budget over
itself, i.e. below 1). Last line: one JSON object.

Requires the ``bench`` extra (``pip install -e '.[bench]'``). Runs about 2 x budget + SFT.
The learning rate (``--lr``, default 1e-4) is the same for both sides and was not tuned on
this benchmark: it is the quickstart's RL learning rate.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
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
HELDOUT_N = 200
SEED_OFFSET = 10_000_000
MAX_NEW = 6


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


class Clock:
    """Training time with evaluation pauses; evaluates at every ``every`` seconds of it."""

    def __init__(self, budget: float, every: float, evaluate_fn):
        self.budget, self.every, self.evaluate_fn = budget, every, evaluate_fn
        self.start = time.perf_counter()
        self.paused = 0.0
        self.next_eval = every
        self.curve: list[tuple[float, float]] = []

    def elapsed(self) -> float:
        return time.perf_counter() - self.start - self.paused

    def tick(self) -> bool:
        """Evaluate when due; True when the budget is spent."""
        if self.elapsed() >= self.next_eval or self.elapsed() >= self.budget:
            t0 = time.perf_counter()
            self.curve.append((round(min(self.elapsed(), self.budget), 1), self.evaluate_fn()))
            self.paused += time.perf_counter() - t0
            self.next_eval += self.every
        return self.elapsed() >= self.budget


def run_posttrain(folder: Path, budget: float, every: float, lr: float, acc0: float):
    model, tok = load_model(folder)
    rl = RLConfig(algorithm="grpo", prompts_per_step=8, group_size=8, lr=lr,
                  max_new_tokens=MAX_NEW, filter_zero_variance=False)
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt = build_optimizer(model, lr)
    stream, state = TaskStream([SPEC], seed=0), RLState()
    clock = Clock(budget, every, lambda: evaluate(model, tok))
    clock.curve.append((0.0, acc0))
    step_times = []
    while True:
        t0 = time.perf_counter()
        rl_step(model, opt, backend, stream, rl, state, pad_id=pad_id_of(tok))
        step_times.append(time.perf_counter() - t0)
        if clock.tick():
            break
    return clock.curve, state.step, sum(step_times)


def run_trl(folder: Path, budget: float, every: float, lr: float, acc0: float, workdir: Path):
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model, tok = load_model(folder)
    dom = get_domain(SPEC.id)
    stream = TaskStream([SPEC], seed=0)
    tasks = stream.next(64 * 2000)
    data = Dataset.from_list([{"prompt": [dict(m) for m in t.prompt], "answer": t.hidden["answer"],
                               "key": t.key} for t in tasks])
    by_key = {t.key: t for t in tasks}

    def reward(prompts, completions, key, **_):
        return [dom.score(by_key[k], c[0]["content"] if isinstance(c, list) else c).value
                for c, k in zip(completions, key)]

    clock = Clock(budget, every, lambda: evaluate(model, tok))
    clock.curve.append((0.0, acc0))
    steps = {"n": 0, "train_s": 0.0, "t": None}

    class Budget(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
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
                      gradient_checkpointing=False)  # posttrain does not use it either
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=data,
                          processing_class=tok, callbacks=[Budget()])
    clock.start = time.perf_counter()
    trainer.train()
    return clock.curve, steps["n"], steps["train_s"]


def time_to_reach(curve, target: float) -> float | None:
    for t, acc in curve:
        if acc >= target - 1e-9:
            return t
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=300.0, help="RL seconds per side")
    ap.add_argument("--sft-steps", type=int, default=600)
    ap.add_argument("--eval-every", type=float, default=20.0)
    ap.add_argument("--lr", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "sft"
        acc0 = warm_up(args.sft_steps, folder)
        print(f"after SFT: held-out {acc0:.3f}", file=sys.stderr)
        # TRL first, then posttrain: the same order every run.
        trl_curve, trl_steps, trl_s = run_trl(folder, args.budget, args.eval_every, args.lr, acc0,
                                              Path(tmp) / "trl")
        pt_curve, pt_steps, pt_s = run_posttrain(folder, args.budget, args.eval_every, args.lr, acc0)
    trl_final, pt_final = trl_curve[-1][1], pt_curve[-1][1]
    trl_t = time_to_reach(trl_curve, trl_final) or args.budget
    pt_t = time_to_reach(pt_curve, trl_final)
    ratio = trl_t / pt_t if pt_t else trl_t / args.budget
    trl_cps, pt_cps = 64 * trl_steps / trl_s, 64 * pt_steps / pt_s
    print("time_s  trl_acc  posttrain_acc", file=sys.stderr)
    for (t, a), (_, b) in zip(trl_curve, pt_curve):
        print(f"{t:6.0f}  {a:7.3f}  {b:13.3f}", file=sys.stderr)
    print(json.dumps({
        "sft_acc": acc0, "trl_final_acc": trl_final, "posttrain_final_acc": pt_final,
        "trl_time_to_final_s": trl_t, "posttrain_time_to_trl_acc_s": pt_t,
        "time_to_trl_acc_ratio": round(ratio, 3),
        "trl_steps": trl_steps, "posttrain_steps": pt_steps,
        "trl_step_s": round(trl_s / max(1, trl_steps), 4),
        "posttrain_step_s": round(pt_s / max(1, pt_steps), 4),
        "trl_completions_per_s": round(trl_cps, 1), "posttrain_completions_per_s": round(pt_cps, 1),
        "completions_per_s_ratio": round(pt_cps / trl_cps, 3),
        "trl_curve": trl_curve, "posttrain_curve": pt_curve, "budget_s": args.budget,
    }))


if __name__ == "__main__":
    main()
