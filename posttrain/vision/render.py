"""Procedural pictures with a question and its answer: the vision foundation's pre-training data.

What it is: :func:`example` draws one picture of a given ``kind`` from a seed — shapes,
colours, dot counts, bar charts, line charts, machined-plate silhouettes ("parts") and
business charts in the finance domains' layout (:mod:`.render_charts`) — and
returns the base64 PNG, a question and the answer, formatted as ``<answer>X</answer>`` like
posttrain's visual domains ask. Everything is drawn with PIL at ``size`` pixels (fast:
thousands per second), so a build needs no fonts and no display.

Guarantees: ``example(kind, seed, size)`` is deterministic (the same PNG bytes, question and
answer on every machine with the same Pillow); the answer is always readable from the
picture alone (a question never leaks it); :data:`KINDS` lists every kind.

What it does not do: render text into pictures (a tiny encoder at 48 px cannot read it), or
draw the visual domains' own images (their generators do; the foundation must not see
their tasks).
"""

from __future__ import annotations

import base64
import io
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw

from posttrain.vision.render_charts import KINDS as CHART_KINDS, chart_question

COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
           "black": (20, 20, 20), "orange": (240, 140, 20)}
SHAPES = ("circle", "square", "triangle")
BARS = "ABCD"
KINDS = ("shape", "colour", "count", "tallest_bar", "trend", "holes") + CHART_KINDS



@dataclass(frozen=True)
class Example:
    kind: str
    image: str  # base64 PNG
    question: str
    answer: str  # the full reply, ``<answer>X</answer>``


def _png(im: Image.Image) -> str:
    buf = io.BytesIO()
    im.save(buf, format="PNG", optimize=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _shape(draw: ImageDraw.ImageDraw, shape: str, box: tuple[int, int, int, int], fill) -> None:
    x0, y0, x1, y1 = box
    if shape == "circle":
        draw.ellipse(box, fill=fill)
    elif shape == "square":
        draw.rectangle(box, fill=fill)
    else:
        draw.polygon([((x0 + x1) // 2, y0), (x1, y1), (x0, y1)], fill=fill)


def _centred_box(rng: random.Random, size: int) -> tuple[int, int, int, int]:
    side = rng.randint(size // 2, size - 8)
    x0, y0 = rng.randint(2, size - side - 2), rng.randint(2, size - side - 2)
    return x0, y0, x0 + side, y0 + side


def _shape_or_colour(kind: str, rng: random.Random, size: int) -> tuple[Image.Image, str, str]:
    shape, colour = rng.choice(SHAPES), rng.choice(sorted(COLOURS))
    im = Image.new("RGB", (size, size), "white")
    _shape(ImageDraw.Draw(im), shape, _centred_box(rng, size), COLOURS[colour])
    if kind == "shape":
        return im, "What shape is in the picture? Answer circle, square or triangle.", shape
    return im, "What colour is the shape? Answer red, green, blue, black or orange.", colour


def _count(rng: random.Random, size: int) -> tuple[Image.Image, str, str]:
    n = rng.randint(1, 5)
    im = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(im)
    cells = rng.sample(range(9), n)  # a 3x3 grid keeps dots apart
    step = size // 3
    for c in cells:
        cx, cy = (c % 3) * step + step // 2, (c // 3) * step + step // 2
        r = max(3, step // 3)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=COLOURS["black"])
    return im, "How many dots are there? Answer with the number.", str(n)


def _bars(rng: random.Random, size: int) -> tuple[Image.Image, str, str]:
    heights = rng.sample(range(3, 11), 4)  # distinct: one tallest bar
    im = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(im)
    w = size // 5
    for i, h in enumerate(heights):
        x0 = w // 2 + i * (w + w // 4)
        draw.rectangle((x0, size - 2 - h * (size - 6) // 10, x0 + w - 1, size - 2), fill=COLOURS["blue"])
    tallest = BARS[heights.index(max(heights))]
    return (im, "The bar chart shows bars A, B, C and D from left to right. Which bar is the "
            "tallest? Answer with its letter.", tallest)


def _trend(rng: random.Random, size: int) -> tuple[Image.Image, str, str]:
    rising = rng.random() < 0.5
    n = 6
    values = sorted(rng.uniform(0.1, 0.9) for _ in range(n))
    if not rising:
        values.reverse()
    im = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(im)
    pts = [(3 + i * (size - 6) // (n - 1), int(size - 3 - v * (size - 6))) for i, v in enumerate(values)]
    draw.line(pts, fill=COLOURS["red"], width=max(2, size // 16))
    return im, "Does the line in the chart rise or fall from left to right? Answer rise or fall.", \
        "rise" if rising else "fall"


def _holes(rng: random.Random, size: int) -> tuple[Image.Image, str, str]:
    n = rng.randint(0, 4)
    im = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(im)
    m = size // 10
    draw.rectangle((m, 2 * m, size - m, size - 2 * m), fill=(120, 120, 130))
    slots = rng.sample(range(4), n)
    r = max(2, size // 12)
    for s in slots:
        cx = m + (s + 1) * (size - 2 * m) // 5
        cy = size // 2 + (r if s % 2 else -r)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="white")
    return im, "The picture shows a machined plate from above. How many holes does it have? " \
        "Answer with the number.", str(n)


def example(kind: str, seed: int, size: int = 48) -> Example:
    """One picture of ``kind`` (one of :data:`KINDS`) with its question and answer."""
    if kind not in KINDS:
        from posttrain.core.errors import ConfigError

        raise ConfigError(f"picture kind {kind!r} is not known; use one of {', '.join(KINDS)}")
    rng = random.Random(f"{kind}/{seed}")
    draw = {"shape": lambda: _shape_or_colour("shape", rng, size),
            "colour": lambda: _shape_or_colour("colour", rng, size),
            "count": lambda: _count(rng, size), "tallest_bar": lambda: _bars(rng, size),
            "trend": lambda: _trend(rng, size), "holes": lambda: _holes(rng, size),
            **{k: lambda: chart_question(kind, rng) for k in CHART_KINDS}}[kind]
    im, question, answer = draw()
    return Example(kind, _png(im), question, f"<answer>{answer}</answer>")
