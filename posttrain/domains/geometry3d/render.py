"""Rendering a modelling script as a PNG, for "look and correct" multi-turn environments.

``render_png(script) -> bytes``: three orthographic depth views (top: looking down -z; front:
looking along +y; side: looking along -x) of the voxelised model, shaded by distance so holes,
steps and pockets are visible, with axes in millimetres. ``render_observation(script)`` gives
the base64 string an :class:`~posttrain.core.types.Observation` carries in ``images``.

Guarantees: never raises on a script: an invalid one renders a PNG showing the parser's
message; the cost is bounded by the interpreter's caps (a few hundred milliseconds). Uses the
matplotlib Agg canvas directly (no pyplot global state, safe in threads).
"""

from __future__ import annotations

import base64
import io

import numpy as np

from posttrain.verifiers.geometry import Program, grid_for, parse, voxelize
from posttrain.verifiers.structured import answer_text

VIEWS = (("top (looking down)", 2, (0, 1)), ("front (looking along +y)", 1, (0, 2)), ("side (looking along -x)", 0, (1, 2)))


def _depth(vox: np.ndarray, axis: int, from_high: bool) -> np.ndarray:
    """Per pixel, how near the first solid cell is to the viewer (1 = nearest, NaN = none)."""
    n = vox.shape[axis]
    v = np.flip(vox, axis=axis) if from_high else vox
    hit = v.any(axis=axis)
    first = np.argmax(v, axis=axis).astype(float)
    d = 1.0 - first / max(1, n)
    d[~hit] = np.nan
    return d


def render_png(script: str, *, dpi: int = 80) -> bytes:
    """The PNG bytes of the three views of ``script`` (see the module docstring)."""
    # imported here: the domain library is loaded to check run configs, which must stay fast
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.2), dpi=dpi)
    FigureCanvasAgg(fig)
    prog = parse(answer_text(script or "") or "")
    if not isinstance(prog, Program):
        ax = fig.add_subplot(1, 1, 1)
        ax.axis("off")
        ax.text(0.5, 0.5, f"script rejected:\n{prog}"[:200], ha="center", va="center", wrap=True)
    else:
        grid = grid_for(prog.root)
        vox = voxelize(prog.root, grid)
        for k, (title, axis, (a, b)) in enumerate(VIEWS):
            ax = fig.add_subplot(1, 3, k + 1)
            img = _depth(vox, axis, from_high=axis == 2)
            img = img if (a, b) == tuple(i for i in range(3) if i != axis) else img.T
            lo = [grid.lo[i] for i in (a, b)]
            hi = [grid.lo[i] + grid.shape[i] * grid.v for i in (a, b)]
            ax.imshow(img.T, origin="lower", extent=(lo[0], hi[0], lo[1], hi[1]), cmap="viridis", vmin=0, vmax=1)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("xyz"[a] + " (mm)", fontsize=8)
            ax.set_ylabel("xyz"[b] + " (mm)", fontsize=8)
            ax.tick_params(labelsize=7)
        fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def render_observation(script: str) -> str:
    """``render_png`` as base64 text, the form ``Observation.images`` holds."""
    return base64.b64encode(render_png(script)).decode("ascii")
