"""Financial series and their charts, for the chart-reading domains (``chart_reading.py``).

What it is: :class:`ChartSpec` (a company, a metric, period labels, named series of values,
the level's style) with :func:`make_chart` (random, readable series for a level) and
:func:`draw_chart` (the PNG through :func:`posttrain.domains._vision_kit.figure_png`).

Levels: 1 = one series as bars with each value printed on its bar (read exactly);
2 = two series as lines with markers over a labelled grid (read against the grid);
3 = three series, more periods, a finer grid and no markers. ``labels`` prints every value
next to its point (the domains that ask for arithmetic on read values use it).

Guarantees: values are whole numbers (millions), at least ``MIN_VALUE``; the same spec draws
the same bytes (fixed pixel size, DPI, colours and font). The text of a task never carries
the values: they are in the image and in ``hidden`` only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from posttrain.domains._vision_kit import figure_png

T = TypeVar("T")
WIDTH, HEIGHT, DPI = 640, 400, 100
MIN_VALUE = 20
COMPANIES = ("Arcwell", "Brightmoor", "Castellan", "Dunmore", "Eastgate", "Fairhaven", "Greyson",
             "Halvard", "Ironbridge", "Juniper", "Kestrel", "Larkspur", "Meridian", "Northwind")
METRICS = ("revenue", "operating income", "free cash flow", "net sales", "gross profit", "EBITDA")
SEGMENTS = ("Retail", "Cloud", "Devices", "Services", "Licensing", "Logistics", "Energy", "Media")
COLOURS = ("#1f5fa8", "#d9661c", "#2e8b3e", "#8a3fa0")
PERIOD_COUNT = {1: (5, 6), 2: (6, 8), 3: (9, 12)}
SERIES_COUNT = {1: 1, 2: 2, 3: 3}


@dataclass(frozen=True)
class ChartSpec:
    """One chart: what it shows and how (see the module docstring for the levels)."""

    company: str
    metric: str
    periods: tuple[str, ...]
    series: tuple[tuple[str, tuple[int, ...]], ...]  # (name, one value per period)
    level: int
    labels: bool = False  # print every value next to its point (always on bars, level 1)

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.series]

    def values(self, name: str) -> tuple[int, ...]:
        return dict(self.series)[name]

    @property
    def span(self) -> int:
        """Range of every plotted value (the scale reading errors are measured against)."""
        allv = [v for _, vals in self.series for v in vals]
        return max(allv) - min(allv)

    def to_json(self) -> dict:
        return {"company": self.company, "metric": self.metric, "periods": list(self.periods),
                "series": [[n, list(v)] for n, v in self.series], "level": self.level,
                "labels": self.labels}

    @classmethod
    def from_json(cls, d: dict) -> "ChartSpec":
        return cls(d["company"], d["metric"], tuple(d["periods"]),
                   tuple((n, tuple(int(x) for x in v)) for n, v in d["series"]), int(d["level"]),
                   bool(d.get("labels", False)))


def period_labels(rng: random.Random, n: int) -> tuple[str, ...]:
    """``n`` consecutive periods: fiscal years (``FY2016``) or quarters (``Q3 2021``)."""
    if rng.random() < 0.5:
        y0 = rng.randint(2008, 2024 - n)
        return tuple(f"FY{y0 + i}" for i in range(n))
    y, q = rng.randint(2015, 2021), rng.randint(1, 4)
    out = []
    for _ in range(n):
        out.append(f"Q{q} {y}")
        q, y = (1, y + 1) if q == 4 else (q + 1, y)
    return tuple(out)


def random_walk(rng: random.Random, n: int, level: int) -> tuple[int, ...]:
    """A plausible series: a start, a drift and noise; whole millions, never below MIN_VALUE."""
    scale = rng.choice((100, 200, 400, 800)) if level > 1 else rng.choice((50, 100, 200))
    v = rng.uniform(0.4, 1.0) * scale + MIN_VALUE
    drift = rng.uniform(-0.08, 0.12)
    out = []
    for _ in range(n):
        out.append(max(MIN_VALUE, int(round(v))))
        v *= 1.0 + drift + rng.uniform(-0.18, 0.18)
    return tuple(out)


def make_chart(rng: random.Random, level: int, n_series: int | None = None,
               labels: bool = False) -> ChartSpec:
    """A random chart for ``level`` (series names are segments of one company)."""
    n = rng.randint(*PERIOD_COUNT[level])
    k = n_series or SERIES_COUNT[level]
    names = rng.sample(SEGMENTS, k) if k > 1 else ["Total"]
    series = tuple((name, random_walk(rng, n, level)) for name in names)
    return ChartSpec(rng.choice(COMPANIES), rng.choice(METRICS), period_labels(rng, n), series,
                     level, labels)


def with_series(spec: ChartSpec, series: Sequence[tuple[str, Sequence[int]]]) -> ChartSpec:
    """The same chart with other series (generators that shape the data themselves)."""
    return ChartSpec(spec.company, spec.metric, spec.periods,
                     tuple((n, tuple(int(x) for x in v)) for n, v in series), spec.level, spec.labels)


def _nice_step(span: float, ticks: int) -> float:
    raw = span / max(1, ticks)
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000):
        if step >= raw:
            return float(step)
    return float(raw)


def draw_chart(spec: ChartSpec) -> bytes:
    """The chart's PNG bytes (WIDTH × HEIGHT px)."""

    def draw(fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        xs = list(range(len(spec.periods)))
        allv = [v for _, vals in spec.series for v in vals]
        top = max(allv)
        step = _nice_step(top, 10 if spec.level == 3 else 6)
        if len(spec.series) == 1:
            _, vals = spec.series[0]
            bars = ax.bar(xs, vals, color=COLOURS[0], width=0.6)
            for rect, v in zip(bars, vals):
                ax.text(rect.get_x() + rect.get_width() / 2, v + top * 0.01, f"{v:,}",
                        ha="center", va="bottom", fontsize=9)
            ax.set_ylim(0, top * 1.15)
        else:
            for (name, vals), colour in zip(spec.series, COLOURS):
                ax.plot(xs, vals, color=colour, linewidth=1.8, label=name,
                        marker="o" if spec.level <= 2 or spec.labels else None, markersize=4)
                for x, v in zip(xs, vals) if spec.labels else ():
                    ax.annotate(f"{v:,}", (x, v), textcoords="offset points", xytext=(0, 5),
                                ha="center", fontsize=7, color=colour)
            ax.set_ylim(0, (int(top / step) + 1) * step)
            # above the plot area: inside it would hide points and their labels
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(spec.series),
                      fontsize=8, frameon=False)
        ax.set_yticks([i * step for i in range(int(ax.get_ylim()[1] / step) + 1)])
        ax.grid(axis="y", color="#bbbbbb", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.set_xticks(xs)
        ax.set_xticklabels(spec.periods, rotation=45 if len(xs) > 6 else 0, fontsize=8)
        ax.set_ylabel(f"{spec.metric} ($ million)")
        ax.set_title(f"{spec.company}: {spec.metric}", loc="left")
        fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.2)

    return figure_png(draw, WIDTH, HEIGHT, DPI)


def first_made(make: Callable[[], T | None], tries: int = 400) -> T:
    """The first non-None of up to ``tries`` calls of ``make`` (a generator that rejects
    charts whose answer would not be readable); RuntimeError when every call rejected."""
    for _ in range(tries):
        made = make()
        if made is not None:
            return made
    raise RuntimeError("no readable chart found (generator constraints too tight)")


def far_apart(values: Sequence[float], gap: float) -> bool:
    """True when every two values differ by more than ``gap``."""
    s = sorted(values)
    return all(b - a > gap for a, b in zip(s, s[1:]))
