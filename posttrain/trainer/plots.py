"""Reward curves of a run, one PNG per domain, drawn from ``metrics.jsonl``.

Each PNG shows the raw per-step mean reward of one domain and a moving average over
``window`` steps (the raw series of a small batch is noisy). Steps without that domain's
key (no task of it in the batch) are skipped, not drawn as zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _series(metrics_path: Path, key: str) -> tuple[list[int], list[float]]:
    steps, values = [], []
    for line in metrics_path.read_text().splitlines():
        row = json.loads(line)
        if key in row:
            steps.append(int(row["step"]))
            values.append(float(row[key]))
    return steps, values


def _moving_average(values: list[float], window: int) -> list[float]:
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def reward_curves(metrics_path: Path, out_dir: Path, domains: list[str],
                  window: int = 10) -> list[str]:
    """Write ``reward_<domain>.png`` for each domain with data; returns the file names."""
    written = []
    for dom in domains:
        steps, values = _series(metrics_path, f"reward/{dom}")
        if not steps:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
        ax.plot(steps, values, color="#9bb7d4", lw=0.8, label="per step")
        ax.plot(steps, _moving_average(values, window), color="#1f4e79", lw=2,
                label=f"moving average ({window})")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("step")
        ax.set_ylabel("mean reward")
        ax.set_title(f"RL reward: {dom}")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        name = f"reward_{dom}.png"
        fig.savefig(out_dir / name)
        plt.close(fig)
        written.append(name)
    return written
