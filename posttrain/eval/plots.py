"""The report's figures, drawn with matplotlib (Agg) and returned as base64 PNG strings.

Each function takes plain data (the JSON a report embeds) and returns a ``data:`` URI body,
so a report stays one self-contained file that needs no network to view. A figure with
nothing to draw returns ``None`` (the report then says so instead of showing an empty axis).
"""

from __future__ import annotations

import base64
import io
from typing import Any, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

_DPI = 100


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def pass_at_k_curves(results: Mapping[str, Any]) -> str | None:
    """pass@k against k for each domain (and overall, bold), with bootstrap intervals as bands."""
    scopes = list(results["domains"].items()) + [("overall", results["overall"])]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    drawn = 0
    for name, s in scopes:
        pts = sorted((int(k), iv) for k, iv in s["pass@k"].items() if iv is not None)
        if not pts:
            continue
        ks = [k for k, _ in pts]
        val = [iv["value"] for _, iv in pts]
        lo = [iv["low"] for _, iv in pts]
        hi = [iv["high"] for _, iv in pts]
        bold = name == "overall"
        line, = ax.plot(ks, val, marker="o", lw=2.6 if bold else 1.4, label=name,
                        color="black" if bold else None)
        ax.fill_between(ks, lo, hi, alpha=0.15, color=line.get_color())
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k (attempts)")
    ax.set_ylabel("pass@k")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("pass@k with 95% bootstrap intervals")
    return _png(fig)


def metric_curves(rows: Sequence[Mapping[str, Any]], prefix: str, title: str) -> str | None:
    """Every ``prefix*`` key of ``metrics.jsonl`` rows against ``step``."""
    series: dict[str, tuple[list[float], list[float]]] = {}
    for r in rows:
        for key, v in r.items():
            if key.startswith(prefix) and isinstance(v, (int, float)):
                xs, ys = series.setdefault(key, ([], []))
                xs.append(float(r.get("step", len(xs))))
                ys.append(float(v))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for key, (xs, ys) in sorted(series.items()):
        ax.plot(xs, ys, lw=1.4, label=key[len(prefix):] or key)
    ax.set_xlabel("step")
    ax.set_ylabel(prefix.rstrip("/"))
    ax.grid(alpha=0.3)
    if len(series) <= 12:
        ax.legend(fontsize=8)
    ax.set_title(title)
    return _png(fig)


def heatmap(rows: Sequence[str], cols: Sequence[Any], values: Sequence[Sequence[float | None]],
            title: str, label: str) -> str | None:
    """A rows × cols heatmap (the curriculum: domains × difficulties), values printed in cells."""
    if not rows or not cols:
        return None
    import numpy as np

    grid = np.array([[np.nan if v is None else float(v) for v in r] for r in values])
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(cols), 0.9 + 0.38 * len(rows)))
    im = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), list(rows), fontsize=8)
    ax.set_xlabel("difficulty")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] < np.nanmax(grid) * 0.6 else "black")
    fig.colorbar(im, ax=ax, label=label)
    ax.set_title(title)
    return _png(fig)
