"""Business charts drawn with PIL, with a question about their shape: pre-training pictures.

What it is: :func:`chart_question` draws a chart in the layout of the finance domains'
matplotlib charts (one series as bars with a mark over each, or 2-3 coloured lines over a
grid; title, axis and tick labels as grey marks) and asks one of two things about a series:
where it peaks (``*_top``: its position counted from the left) or whether it ended
higher or lower than it began (``*_ends``); ``bar_*`` kinds draw one series as bars,
``line_*`` kinds 2-3 lines. Questions come in several phrasings, with
made-up company names, metrics and period labels, so the decoder learns the question and
the answer form rather than one sentence.

Guarantees: deterministic in ``rng``; the answer is visible in the picture alone (the peak
leads the runner-up and the ends differ by a clear share of the plot's height); answers are
balanced — the peak's position is uniform over the periods and "higher"/"lower" are equally
likely — so no prior beats chance. Drawing takes about 1.5 ms (matplotlib takes 80).

Does not: draw the domains' charts or their tasks (the foundation never sees those), or
print readable text.
"""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

# The finance charts' palette and the colour names their questions use.
SERIES = (("blue", (31, 95, 168)), ("orange", (217, 102, 28)), ("green", (46, 139, 62)),
          ("purple", (138, 63, 160)))
CHART_W, CHART_H = 320, 200  # the finance charts' 640 x 400 aspect; the processor resizes
METRICS = ("sales", "revenue", "orders", "output", "cash flow", "margin", "profit", "bookings")
SEGMENTS = ("North", "South", "Parts", "Online", "Stores", "Export", "Rental", "Support")
SYLLABLES = ("ka", "lo", "mer", "vin", "tor", "sel", "dra", "pum", "rix", "ben", "ol", "ga")


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _periods(rng: random.Random, n: int) -> list[str]:
    if rng.random() < 0.5:
        y = rng.randint(1995, 2030)
        return [f"FY{y + i}" for i in range(n)]
    y, q = rng.randint(1995, 2030), rng.randint(1, 4)
    return [f"Q{(q + i - 1) % 4 + 1} {y + (q + i - 1) // 4}" for i in range(n)]


def _series(rng: random.Random, n: int, k: int) -> list[list[float]]:
    out = []
    for _ in range(k):
        v, drift, vals = rng.uniform(0.3, 0.8), rng.uniform(-0.12, 0.12), []
        for _ in range(n):
            vals.append(min(1.0, max(0.1, v)))
            v *= 1.0 + drift + rng.uniform(-0.2, 0.2)
        out.append(vals)
    return out


def _draw(series: list[tuple[str, list[float]]], bars: bool, rng: random.Random) -> Image.Image:
    im = Image.new("RGB", (CHART_W, CHART_H), "white")
    d = ImageDraw.Draw(im)
    x0, x1, y0, y1 = int(0.12 * CHART_W), int(0.97 * CHART_W), int(0.1 * CHART_H), int(0.8 * CHART_H)
    grey = (190, 190, 190)
    for t in range(1, rng.randint(5, 8)):  # grid lines and y tick-label marks
        y = y1 - t * (y1 - y0) // 6
        d.line((x0, y, x1, y), fill=(215, 215, 215))
        d.rectangle((x0 - 14, y - 2, x0 - 4, y + 1), fill=grey)
    d.rectangle((4, y0, 7, y1), fill=grey)  # y-axis label
    d.rectangle((x0, 4, x0 + rng.randint(60, 140), 10), fill=(60, 60, 60))  # title
    d.rectangle((x0, y0, x1, y1), outline=(40, 40, 40))
    n = len(series[0][1])
    slot, colour = (x1 - x0) / n, dict(SERIES)
    for name, vals in series:
        pts = [(int(x0 + slot * (i + 0.5)), int(y1 - v * (y1 - y0) * 0.85)) for i, v in enumerate(vals)]
        if bars:
            for x, y in pts:
                d.rectangle((x - int(0.3 * slot), y, x + int(0.3 * slot), y1), fill=colour[name])
                d.rectangle((x - 5, y - 6, x + 5, y - 3), fill=(70, 70, 70))  # the printed value
            continue
        d.line(pts, fill=colour[name], width=2)
        for x, y in pts if n <= 8 else ():
            d.ellipse((x - 2, y - 2, x + 2, y + 2), fill=colour[name])
    for i in range(n):  # x tick-label marks
        x = int(x0 + slot * (i + 0.5))
        d.rectangle((x - 8, y1 + 5, x + 8, y1 + 9), fill=grey)
    return im


def _intro(rng: random.Random) -> str:
    company, metric = _name(rng), rng.choice(METRICS)
    return rng.choice(("", f"Chart {rng.getrandbits(24):06x} shows {company}'s {metric} ($ million) "
                       "by period. ", f"The picture is a chart of {company}'s {metric}. ",
                       f"Here is a {metric} chart for {company}. "))


def _which(rng: random.Random, colour: str, bars: bool) -> str:
    if bars:
        return rng.choice(("the bars", "the series", f"{_name(rng)}'s {rng.choice(METRICS)}"))
    return rng.choice((f"the {colour} line", f"the {colour} series",
                       f"the {rng.choice(SEGMENTS)} series (the {colour} line)"))


KINDS = ("bar_top", "bar_ends", "line_top", "line_ends")


def chart_question(kind: str, rng: random.Random) -> tuple[Image.Image, str, str]:
    """(picture, question, answer) of a ``kind`` in :data:`KINDS`: ``bar_*`` draw one series
    as bars, ``line_*`` 2-3 lines; ``*_top`` ask where the series peaks, ``*_ends`` whether
    it ended higher or lower."""
    bars = kind.startswith("bar_")
    n = rng.randint(5, 6) if bars else rng.randint(5, 12)
    k = 1 if bars else rng.randint(2, 3)
    colours = [SERIES[0][0]] if bars else rng.sample([c for c, _ in SERIES], k)
    target = rng.randrange(k)
    want_top, want_higher = rng.randrange(n), rng.random() < 0.5
    for _ in range(200):
        values = _series(rng, n, k)
        vals = values[target]
        if kind.endswith("_top"):  # the series' highest value moves to a uniformly drawn period
            j = vals.index(max(vals))
            vals[want_top], vals[j] = vals[j], vals[want_top]
            if sorted(vals)[-1] - sorted(vals)[-2] >= 0.08:
                break
        elif abs(vals[-1] - vals[0]) >= 0.1 and (vals[-1] > vals[0]) == want_higher:
            break
    else:
        raise RuntimeError("no chart with a clear answer in 200 draws")
    im = _draw(list(zip(colours, values)), bars, rng)
    what, periods = _which(rng, colours[target], bars), _periods(rng, n)
    if kind.endswith("_top"):
        q = rng.choice((
            f"Counting from the left (the first is 1), which point of {what} is the highest?",
            f"Counting periods from the left (the first, {periods[0]}, is 1), in which period was "
            f"{what} at its highest?",
            f"Which position from the left (1 = {periods[0]}) holds the highest value of {what}?"))
        return im, f"{_intro(rng)}{q} Answer with the number.", str(want_top + 1)
    q = rng.choice((
        f"Is the last point of {what} higher or lower than the first?",
        f"Was {what} higher or lower in {periods[-1]} (the last period) than in {periods[0]} "
        "(the first)?",
        f"Did {what} end higher or lower than it began?"))
    return im, f"{_intro(rng)}{q} Answer higher or lower.", "higher" if want_higher else "lower"
