"""RL on visual domains with the built-in chart VLM: held-out success before and after, paired.

What runs (issue 16, item 5):
1. the chart-reading foundation is built from ``configs/foundation/vision-charts.yaml``
   (``posttrain foundation build-vision``; skipped when ``--model`` already holds it);
2. for each of ``--seeds`` seeds, ``posttrain train configs/vision_charts.yaml`` with that
   seed: GRPO on ``finance.chart_direction-v1`` and ``finance.chart_high_point-v1`` (level
   1: one series as bars), no SFT, the vision tower kept fixed as the foundation declares;
3. the foundation and each run's saved policy answer the *same* ``--heldout`` held-out
   tasks per domain (seeds the training stream never draws; greedy; one verifier call each),
   so the gain is measured per task: its standard error is that of the paired differences
   (``sd(after - before) / sqrt(n)``), and ``z`` = gain / SE.

Prints, per seed and domain, before / after / gain / SE / z, the RL wall time and the load;
writes ``vision_learning.json`` and ``vision_learning.png`` (per-domain success before and
after, with ±2 SE bars) into ``--out``. The last line is one JSON object.

Measured figures and what they mean are in docs/vision.md ("Learning on visual domains").
A smoke run: ``--seeds 1 --heldout 20 --steps 2 --build-steps 20``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from posttrain.eval.paired import paired_z as paired

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "configs" / "foundation" / "vision-charts.yaml"
CONFIG = ROOT / "configs" / "vision_charts.yaml"
EVAL_OFFSET = 20_000_000  # held-out seeds of this bench: neither training nor the run's own eval


def _posttrain(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "posttrain", *args], check=True, cwd=ROOT)


def per_task_rewards(folder: Path, domains: list[str], n: int, threads: int) -> dict[str, list]:
    """Greedy reward of every held-out task, per domain and in task order, for the VLM in
    ``folder`` (the run's own held-out evaluation, at this bench's seeds)."""
    import torch

    from posttrain.core.config import DomainSpec
    from posttrain.inference.vlm import VLMBackend, load_vlm
    from posttrain.trainer.heldout import heldout_accuracy

    torch.set_num_threads(threads)
    backend = VLMBackend(*load_vlm(folder))
    specs = [DomainSpec(id=d, difficulties=[1]) for d in domains]
    return heldout_accuracy(backend, specs, n, EVAL_OFFSET, max_new_tokens=32)["rewards"]


def _z(z: float | None) -> str:
    return "n/a (every task moved alike)" if z is None else f"{z:.1f}"


def _plot(results: list[dict], domains: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / (len(results) + 1)
    xs = range(len(domains))
    first = results[0]["domains"]
    ax.bar([x - 0.4 + width / 2 for x in xs], [first[d]["before"] for d in domains], width,
           color="#999999", label="foundation (before RL)")
    for i, r in enumerate(results, start=1):
        vals = [r["domains"][d]["after"] for d in domains]
        errs = [2 * r["domains"][d]["se"] for d in domains]
        ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], vals, width, yerr=errs, capsize=3,
               label=f"after RL, seed {r['seed']} (±2 SE of the gain)")
    ax.set_xticks(list(xs), [d.replace("finance.", "") for d in domains])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("held-out success (greedy)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"RL on visual chart domains, {first[domains[0]]['n']} paired tasks per domain",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "vision-charts"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "bench_vision"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--heldout", type=int, default=500, help="paired held-out tasks per domain")
    ap.add_argument("--steps", type=int, default=None, help="RL steps (default: the config's)")
    ap.add_argument("--build-steps", type=int, default=None, help="foundation steps (default: the recipe's)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    out, model = Path(args.out), Path(args.model)
    out.mkdir(parents=True, exist_ok=True)
    if not (model / "config.json").is_file():
        extra = ["--set", f"training.steps={args.build_steps}"] if args.build_steps else []
        _posttrain("foundation", "build-vision", "--recipe", str(RECIPE), "--out", str(model),
                   "--no-register", *extra)
    import yaml

    domains = [d["id"] for d in yaml.safe_load(CONFIG.read_text())["domains"]]
    t0 = time.perf_counter()
    before = per_task_rewards(model, domains, args.heldout, args.threads)
    print("foundation: " + ", ".join(f"{d} {paired(v, v)['before']:.3f}" for d, v in before.items()),
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    results = []
    for seed in range(args.seeds):
        run = out / f"seed{seed}"
        shutil.rmtree(run, ignore_errors=True)  # a fresh run: an old folder would be resumed
        sets = ["--set", f"seed={seed}", "--set", f"out={run}", "--set", f"model.path={model}",
                "--set", "eval.heldout_per_domain=20"]
        sets += ["--set", f"rl.steps={args.steps}"] if args.steps else []
        t1 = time.perf_counter()
        _posttrain("train", str(CONFIG), *sets)
        wall = json.loads((run / "summary.json").read_text())["wall_s"]
        after = per_task_rewards(run / "model", domains, args.heldout, args.threads)
        r = {"seed": seed, "rl_wall_s": wall.get("rl"), "run_wall_s": round(time.perf_counter() - t1, 1),
             "load_average_1m": round(os.getloadavg()[0], 2),
             "domains": {d: paired(before[d], after[d]) for d in domains}}
        allb = [x for d in domains for x in before[d]]
        alla = [x for d in domains for x in after[d]]
        r["overall"] = paired(allb, alla)
        results.append(r)
        for d, v in [*r["domains"].items(), ("overall", r["overall"])]:
            print(f"seed {seed} {d}: {v['before']:.3f} -> {v['after']:.3f}  gain {v['gain']:+.3f} "
                  f"± {v['se']:.3f} (z {_z(v['z'])}, n {v['n']})", flush=True)
    summary = {"heldout_per_domain": args.heldout, "domains": domains, "runs": results,
               "overall_z_min": min(r["overall"]["z"] if r["overall"]["z"] is not None else float("inf")
                                    for r in results),
               "overall_gain_range": [min(r["overall"]["gain"] for r in results),
                                      max(r["overall"]["gain"] for r in results)]}
    (out / "vision_learning.json").write_text(json.dumps(summary, indent=2))
    _plot(results, domains, out / "vision_learning.png")
    print(json.dumps({k: summary[k] for k in ("heldout_per_domain", "overall_z_min", "overall_gain_range")}))


if __name__ == "__main__":
    main()
