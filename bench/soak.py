"""Soak: one asynchronous run for N minutes; does any resource grow without bound?

What runs. The real pipeline (``run_pipeline``, what ``posttrain train`` runs) on
``configs/soak.yaml``: the tiny model, asynchronous RL (lag 2, deterministic schedule) over a
single-turn domain (``math.add-v1``), a multi-turn tool domain (``tools.calendar_booking-v1``)
and two sandboxed ones (``terminal.dedupe-v1`` multi-turn, ``code.humaneval-v1`` with hidden
tests), rollouts through the SQLite work store, sandboxes from the run's own bubblewrap pool.
The run is in this process (the sampler reads the pool's leases directly); it is stopped at
the deadline right after a trained step, by the same exception path a Ctrl-C takes.

What is sampled, every ``--interval-s`` (60 s by default) from the host's ``/proc`` and disk:
``rss_mb``, ``fds``, ``threads``, ``processes`` (this process and every descendant: sandbox
supervisors, bubblewrap, snippet servers), ``sandbox_leases`` (the pool's leased sandboxes),
``sandbox_leases_peak`` (the most seen at the once-a-second probes
since the last sample: evidence that leases are taken and given back), ``live_sandboxes``
(isolated sandboxes alive: outer bubblewrap processes), ``temp_dirs`` (entries in the run's private
TMPDIR and hostdirs-stamped directories in ``/dev/shm`` owned by a process of the tree),
``run_dir_mb``, ``run_state_mb`` (the run folder without its append-only records: metrics,
groups, tensorboard, the work store), ``work_store_mb`` (``work.sqlite`` with its WAL).

Verdict. Each resource's slope per hour is the Theil–Sen fit (median of pairwise slopes,
robust to a single spike) over the samples after the warm-up (``--warmup-min``, default a
sixth of the run, at most 10 min). The run fails (exit 1) when a slope exceeds its tolerance
in ``TOLERANCE_PER_H`` both over that window and over its later half — growth without bound
goes on, while the sandbox pool adding one sandbox of its bounded size mid-run (about 6
processes, 5 threads and 30 fds at once; the hour-long soak saw it at minute 23) is a step
that a whole-window fit alone would call a slope — or when the records grow faster per trained step than
``RECORD_BUDGET_KB_PER_STEP`` (they grow with the steps by design: one metrics row and the
step's groups; what must not happen is state that is never pruned — ``run_state_mb`` holds
the checkpoints, pruned to the last two; the work store drops result bodies once no kept
checkpoint needs them).
After the stop a last sample checks that the run's shutdown left no process, sandbox or
lease behind (``after_stop``).

Last line: one JSON object with ``ok``, ``slopes_per_hour`` (and ``later_half_slopes_per_hour``),
``kb_per_step``, ``tolerance_per_hour``,
``violations``, ``steps``, ``after_stop``, ``load_avg`` and the ``samples``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _reliability_probe as probe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ("rss_mb", "fds", "threads", "processes", "sandbox_leases", "live_sandboxes",
             "temp_dirs", "run_dir_mb", "run_state_mb", "work_store_mb")
# Per hour, after warm-up. Counts: a leak of one per few minutes fails, producer threads
# that come and go do not (Theil–Sen). RSS: allocator and import caches settle in the warm-up;
# 48 MiB/h is about 1 KiB per episode at this run's rate. run_state_mb: checkpoints are
# pruned to two, so it is flat.
TOLERANCE_PER_H = {"rss_mb": 48.0, "fds": 4.0, "threads": 4.0, "processes": 2.0,
                   "sandbox_leases": 1.0, "live_sandboxes": 2.0, "temp_dirs": 2.0,
                   "run_state_mb": 1.0}
# Records per trained step. groups.jsonl keeps every trajectory (prompt, tool specs, tokens,
# logprobs: ~20 KiB each as JSON, 8 a step, ~180 KiB a step here) and metrics a row; the work
# store keeps a slim item row and the outcomes ledger (3-4 KiB a step measured), full
# payloads and result bodies only for the last two checkpoint intervals (it kept every body,
# ~176 KiB a step, and then every payload, ~11 KiB a step, before the soak found them).
RECORD_BUDGET_KB_PER_STEP = {"run_dir_mb": 512.0, "work_store_mb": 8.0}
RECORDS = ("metrics.jsonl", "groups.jsonl", "tensorboard", "work.sqlite", "work.sqlite-wal",
           "work.sqlite-shm", "tasks.jsonl")


class _Deadline(Exception):
    """Raised after the first trained step past the deadline: ends the run like a Ctrl-C."""


class Sampler:
    """Samples the tree of this process every ``interval_s`` (a daemon thread); remembers
    every pid it saw (every second) so that a stamped temp dir of a child is attributed."""

    def __init__(self, run: Path, tmp: Path, interval_s: float):
        self.run, self.tmp, self.interval_s = run, tmp, interval_s
        self.t0, self.samples, self.step, self.lease_peak = time.time(), [], 0, 0
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        next_at = self.t0
        while not self._stop.is_set():
            self.seen.update(probe.tree(os.getpid()))
            self.lease_peak = max(self.lease_peak, self._leases())
            if time.time() >= next_at:
                self.samples.append(self.sample())
                next_at += self.interval_s
            self._stop.wait(min(1.0, max(0.05, next_at - time.time())))

    @staticmethod
    def _pool_metrics() -> dict:
        from posttrain.envs import tool_env

        pool = tool_env._POOL  # the run's pool while it runs (never create one here)
        return pool.metrics() if pool is not None and not getattr(pool, "_closed", False) else {}

    def _leases(self) -> int:
        return int(self._pool_metrics().get("sandbox/in_use", 0))

    def sample(self) -> dict[str, float]:
        pm = self._pool_metrics()
        leases, peak, self.lease_peak = int(pm.get("sandbox/in_use", 0)), self.lease_peak, 0
        run_bytes = probe.dir_bytes(self.run) if self.run.exists() else 0
        records = sum(probe.dir_bytes(self.run / n) if (self.run / n).is_dir() else
                      ((self.run / n).stat().st_size if (self.run / n).exists() else 0) for n in RECORDS)
        store = sum((self.run / n).stat().st_size for n in RECORDS[3:6] if (self.run / n).exists())
        temp = len(os.listdir(self.tmp)) + len(probe.stamped_dirs(["/dev/shm"], self.seen))
        return {"t_s": round(time.time() - self.t0, 2), "step": self.step,
                **probe.tree_resources(os.getpid()), "sandbox_leases": float(leases),
                "sandbox_leases_peak": float(max(peak, leases)),
                # cumulative (not fitted): the sandbox traffic behind the counts above
                "sandbox_created": float(pm.get("sandbox/created", 0)),
                "sandbox_recycled": float(pm.get("sandbox/recycled", 0)),
                "temp_dirs": float(temp), "run_dir_mb": run_bytes / 2**20,
                "run_state_mb": (run_bytes - records) / 2**20, "work_store_mb": store / 2**20}


def _patch_writer(sampler: Sampler, deadline: float, sft_steps: int):
    """Count trained steps and stop after the first one past ``deadline`` (the pipeline's own
    ``MetricsWriter``, with one check after each row)."""
    import posttrain.trainer.pipeline as pipeline

    real = pipeline.MetricsWriter

    class SoakWriter(real):
        def log(self, step, metrics):
            super().log(step, metrics)
            if step > sft_steps and any(k.startswith("loss/") for k in metrics):
                sampler.step = step - sft_steps
                if time.time() >= deadline:
                    raise _Deadline()

    pipeline.MetricsWriter = SoakWriter
    return lambda: setattr(pipeline, "MetricsWriter", real)


def verdict(samples: list[dict], warmup_s: float) -> dict:
    """Slopes per hour (and KiB per step for the records) after warm-up; the violations."""
    late = [s for s in samples if s["t_s"] >= warmup_s]
    half = late[len(late) // 2:]

    def per_hour(xs: list[dict]) -> dict[str, float]:
        return {r: round(probe.theil_sen([s["t_s"] / 3600.0 for s in xs], [s[r] for s in xs]), 4)
                for r in RESOURCES}

    def per_step(xs: list[dict]) -> dict[str, float]:
        return {r: round(1024.0 * probe.theil_sen([float(s["step"]) for s in xs], [s[r] for s in xs]), 3)
                for r in RECORD_BUDGET_KB_PER_STEP}

    slopes, late_slopes, kb, late_kb = per_hour(late), per_hour(half), per_step(late), per_step(half)
    # growth without bound goes on: over the whole window and over its later half alike; a
    # pool that adds a sandbox (of its bounded size) once, mid-run, is a step, not a slope
    violations = [f"{r}: {slopes[r]:+.3f}/h (later half {late_slopes[r]:+.3f}/h) > {tol}/h"
                  for r, tol in TOLERANCE_PER_H.items() if min(slopes[r], late_slopes[r]) > tol]
    violations += [f"{r}: {kb[r]:+.2f} KiB/step (later half {late_kb[r]:+.2f}) > {tol} KiB/step"
                   for r, tol in RECORD_BUDGET_KB_PER_STEP.items() if min(kb[r], late_kb[r]) > tol]
    if len(late) < 3:
        violations.append(f"only {len(late)} samples after the warm-up: nothing to fit")
    return {"slopes_per_hour": slopes, "later_half_slopes_per_hour": late_slopes, "kb_per_step": kb,
            "later_half_kb_per_step": late_kb, "violations": violations, "fitted_samples": len(late)}


def _progress_line(s: dict) -> str:
    return (f"[{s['t_s']:7.0f}s] step {s['step']:5d}  rss {s['rss_mb']:7.1f} MiB  fds {s['fds']:4.0f}  "
            f"threads {s['threads']:3.0f}  procs {s['processes']:3.0f}  leases {s['sandbox_leases']:2.0f}/{s['sandbox_leases_peak']:2.0f}  "
            f"bwrap {s['live_sandboxes']:2.0f} (made {s['sandbox_created']:.0f}, reused {s['sandbox_recycled']:.0f})  tmp {s['temp_dirs']:3.0f}  run {s['run_dir_mb']:6.2f} MiB  "
            f"store {s['work_store_mb']:6.2f} MiB")


def run(minutes: float, interval_s: float, warmup_min: float, config: Path, out: Path,
        overrides: list[str] | None = None) -> dict:
    from rich.console import Console

    from posttrain.core.config import load_config
    from posttrain.trainer.pipeline import run_pipeline

    console = Console(stderr=True)
    cfg = load_config(config, overrides=overrides or [])
    run_dir = out / "run"
    sampler = Sampler(run_dir, Path(tempfile.gettempdir()), interval_s)
    deadline = sampler.t0 + minutes * 60.0
    restore = _patch_writer(sampler, deadline, cfg.sft.steps)
    printed = [0]

    def show() -> None:
        for s in sampler.samples[printed[0]:]:
            console.print(_progress_line(s), highlight=False)
        printed[0] = len(sampler.samples)

    def watch() -> None:  # prints each sample as it comes (the sampler itself stays silent)
        while not sampler._stop.wait(1.0):
            show()

    sampler.start()
    threading.Thread(target=watch, name="soak-printer", daemon=True).start()
    try:
        run_pipeline(cfg, run_dir, show_progress=False)
        raise RuntimeError(f"the run ended on its own before the deadline (rl.steps={cfg.rl.steps})")
    except _Deadline:
        pass
    finally:
        restore()
        sampler.stop()
        show()
    time.sleep(1.0)  # processes the shutdown signalled a moment ago
    after = sampler.sample()
    warmup_s = 60.0 * (warmup_min if warmup_min >= 0 else min(10.0, minutes / 6.0))
    result = verdict(sampler.samples, warmup_s)
    leftovers = [f"after_stop: {k} = {after[k]:.0f}" for k in ("sandbox_leases", "live_sandboxes")
                 if after[k] > 0] + ([f"after_stop: {after['processes']:.0f} processes"]
                                     if after["processes"] > 1 else [])
    result["violations"] += leftovers
    return {"ok": not result["violations"], **result, "tolerance_per_hour": TOLERANCE_PER_H,
            "record_budget_kb_per_step": RECORD_BUDGET_KB_PER_STEP, "minutes": minutes,
            "interval_s": interval_s, "warmup_s": warmup_s, "steps": sampler.step,
            "steps_per_hour": round(3600.0 * sampler.step / (time.time() - sampler.t0), 1),
            "after_stop": after, "load_avg": [round(x, 2) for x in os.getloadavg()],
            "samples": sampler.samples}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--interval-s", type=float, default=60.0, help="seconds between samples")
    ap.add_argument("--warmup-min", type=float, default=-1.0,
                    help="minutes left out of the fit (default: a sixth of the run, at most 10)")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "soak.yaml")
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a new temp dir)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, as posttrain train --set (e.g. sft.steps=4)")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="posttrain-soak-"))
    tmp = out / "tmp"  # a private TMPDIR: its entry count is the run's temp dirs, nobody else's
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = str(tmp)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    result = run(args.minutes, args.interval_s, args.warmup_min, args.config, out, args.overrides)
    for v in result["violations"]:
        print(f"LEAK? {v}", file=sys.stderr)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
