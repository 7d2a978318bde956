"""Silhouettes of simple parametric parts, their IoU, and the "target vs current" picture.

What it is: a part's view is a list of 2D primitives in millimetres — ``("rect", +1, x0, y0,
x1, y1)``, ``("circle", ±1, cx, cy, r)``; ``+1`` adds material, ``-1`` cuts it, applied in
order. :func:`mask` rasterises one view on the fixed window ``[0, WINDOW_MM]²`` at
``PX_PER_MM`` (pixel centres, numpy, exact for these primitives), :func:`iou` compares two
masks, :func:`draw_match` draws every view as a panel: the *current* part filled blue, the
*target* as a red outline, a 10 mm grid with labelled 20 mm ticks.

Why a 2D rasteriser: the render-matching domains are light tier (no CAD kernel, no sandbox);
a parametric part's orthographic silhouettes are unions and cuts of rectangles and circles,
so each panel costs well under a millisecond to rasterise and a few to encode.

Guarantees: deterministic (pure numpy and Pillow with bundled fonts); every panel has the same
size, so an image's size depends on the number of views only (:func:`image_size`).
Does not: shade, show hidden edges, or draw perspective.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from posttrain.domains._vision_kit import canvas, font, image_png

WINDOW_MM = 100
PX_PER_MM = 2
PANEL = WINDOW_MM * PX_PER_MM  # pixels per panel side
MARGIN, GAP, HEADER = 28, 26, 34
TARGET, CURRENT, OVERLAP = (214, 40, 40), (120, 160, 230), (70, 90, 200)

Prim = Sequence[object]
Views = Mapping[str, Sequence[Prim]]


def mask(prims: Sequence[Prim]) -> np.ndarray:
    """Boolean (PANEL, PANEL) silhouette, row 0 at the *top* (y = WINDOW_MM)."""
    c = (np.arange(PANEL) + 0.5) / PX_PER_MM
    x, y = np.meshgrid(c, c[::-1])
    out = np.zeros((PANEL, PANEL), bool)
    for p in prims:
        kind, sign = p[0], p[1]
        if kind == "rect":
            x0, y0, x1, y1 = (float(v) for v in p[2:6])
            hit = (x >= min(x0, x1)) & (x <= max(x0, x1)) & (y >= min(y0, y1)) & (y <= max(y0, y1))
        elif kind == "circle":
            cx, cy, r = (float(v) for v in p[2:5])
            hit = (x - cx) ** 2 + (y - cy) ** 2 <= r * r
        else:
            raise ValueError(f"unknown primitive {kind!r}; allowed: rect, circle")
        out = out | hit if sign > 0 else out & ~hit
    return out


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two silhouettes (1.0 when both are empty)."""
    union = np.count_nonzero(a | b)
    return 1.0 if union == 0 else np.count_nonzero(a & b) / union


def view_iou(got: Views, want: Views) -> float:
    """Mean IoU over the target's views."""
    return float(np.mean([iou(mask(got[v]), mask(want[v])) for v in want]))


def _outline(m: np.ndarray) -> np.ndarray:
    inner = m.copy()
    inner[1:-1, 1:-1] = m[1:-1, 1:-1] & m[:-2, 1:-1] & m[2:, 1:-1] & m[1:-1, :-2] & m[1:-1, 2:]
    edge = m & ~inner
    thick = edge.copy()  # two pixels wide, so the outline survives downscaling by a processor
    thick[1:, :] |= edge[:-1, :]
    thick[:, 1:] |= edge[:, :-1]
    return thick


def _panel(cur: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    rgb = np.full((PANEL, PANEL, 3), 255, np.uint8)
    grid = np.zeros((PANEL, PANEL), bool)
    step = 10 * PX_PER_MM
    grid[:, ::step] = True
    grid[::-1][::step, :] = True
    rgb[grid] = (225, 225, 225)
    rgb[cur] = CURRENT
    rgb[cur & tgt] = OVERLAP
    rgb[_outline(tgt)] = TARGET
    return rgb


def image_size(n_views: int) -> tuple[int, int]:
    """(width, height) of :func:`draw_match`'s image for ``n_views`` panels."""
    return MARGIN + n_views * PANEL + (n_views - 1) * GAP + 16, HEADER + PANEL + MARGIN


def draw_match(current: Views, target: Views, axes: Mapping[str, str]) -> bytes:
    """PNG: one panel per view of ``target`` (``axes[view]`` = "x-y" etc. names the axes)."""
    from PIL import Image

    views = list(target)
    w, h = image_size(len(views))
    img, d = canvas(w, h)
    small, label = font(10, mono=False), font(12, mono=False, bold=True)
    d.text((MARGIN, 2), "red outline = target, blue = current part; grid 10 mm", fill=(0, 0, 0),
           font=small)
    for k, v in enumerate(views):
        x0 = MARGIN + k * (PANEL + GAP)
        rgb = _panel(mask(current[v]), mask(target[v]))
        img.paste(Image.fromarray(rgb, "RGB"), (x0, HEADER))
        d.rectangle([x0 - 1, HEADER - 1, x0 + PANEL, HEADER + PANEL], outline=(0, 0, 0))
        d.text((x0, HEADER - 16), f"{v} view ({axes[v]})", fill=(0, 0, 0), font=label)
        for mm in range(0, WINDOW_MM + 1, 20):
            px = x0 + mm * PX_PER_MM
            d.text((px - 6, HEADER + PANEL + 2), str(mm), fill=(60, 60, 60), font=small)
            if k == 0:
                d.text((2, HEADER + PANEL - mm * PX_PER_MM - 6), str(mm), fill=(60, 60, 60), font=small)
    return image_png(img)
