"""Chart shape: what a financial chart shows at a glance, without reading a printed number.

Two visual domains (``vision = True``, single turn, the finance family's charts from
:func:`~posttrain.domains.finance._charts.draw_chart`: level 1 = one series as bars, 2 = two
lines with markers, 3 = three lines over 9-12 periods without markers). The answer is one
word or number, the whole reply or one ``<answer>`` block:

- ``finance.chart_direction-v1`` — did a series end *higher* or *lower* than it started
  (its last period against its first; the gap is at least ``GAP[level]`` of the chart's
  top value, so the answer is visible at a glance but not from the text); each answer is
  drawn with probability 1/2 before the chart, so no prior beats chance;
- ``finance.chart_high_point-v1`` — counting periods from the left, in which one a series
  was highest (it leads the runner-up by at least ``GAP[level]`` of the top value); the
  peak's position is drawn uniformly before the chart (the series' highest value is moved
  there), so "the first" or "the last" is right only as often as any other.

These are the questions an analyst answers by looking, before reading any value: the
direction and the peak of a series. They are the visual domains a small vision encoder
can learn (the other chart domains need the printed values and axis labels read).

Probes (each must score 0): the opposite direction; the lowest, runner-up, first and last
periods (those that are not the answer); two answers at once.
"""

from __future__ import annotations

import hashlib
import random

from posttrain.core.types import Score, Task
from posttrain.domains._vision_kit import SeeDomain, one_answer, visual_task
from posttrain.domains.base import register_domain
from posttrain.domains.finance._charts import (COLOURS, ChartSpec, draw_chart, first_made,
                                                make_chart, with_series)

GAP = {1: 0.15, 2: 0.12, 3: 0.08}  # share of the chart's top value
COLOUR_NAMES = dict(zip(COLOURS, ("blue", "orange", "green", "purple")))
TRIES = 400


def _which(spec: ChartSpec, name: str) -> str:
    """How the question names a series: by its legend name and its line colour."""
    if len(spec.series) == 1:
        return f"{spec.company}'s {spec.metric}"
    colour = COLOUR_NAMES[COLOURS[spec.names.index(name)]]
    return f"the {name} series (the {colour} line)"


def _task(domain_id: str, level: int, rng: random.Random, spec: ChartSpec, question: str,
          answer: str, wrong: dict[str, str]) -> Task:
    ref = hashlib.sha256(str(rng.random()).encode()).hexdigest()[:6]
    text = (f"Chart {ref} shows {spec.company}'s {spec.metric} ($ million) by period. {question}")
    return visual_task(domain_id, level, text, [draw_chart(spec)], answer=answer,
                       hidden={"chart": spec.to_json(), "choice": answer, "probes": wrong})


def _build_direction(rng: random.Random, level: int) -> Task:
    answer = rng.choice(("higher", "lower"))  # drawn first: series drift upwards more often

    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals, top = spec.values(name), max(v for _, vs in spec.series for v in vs)
        if abs(vals[-1] - vals[0]) < GAP[level] * top or (vals[-1] > vals[0]) != (answer == "higher"):
            return None
        q = (f"Was {_which(spec, name)} higher or lower in {spec.periods[-1]} (the last period) "
             f"than in {spec.periods[0]} (the first)? Answer higher or lower.")
        wrong = {"opposite": "lower" if answer == "higher" else "higher",
                 "both": "<answer>higher</answer><answer>lower</answer>"}
        return _task("finance.chart_direction-v1", level, rng, spec, q, answer, wrong)
    return first_made(make, TRIES)


def _build_high_point(rng: random.Random, level: int) -> Task:
    where = rng.random()  # drawn first: a random walk peaks at its ends far more often

    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals = list(spec.values(name))
        k, peak = int(where * len(vals)), max(range(len(vals)), key=lambda j: vals[j])
        vals[k], vals[peak] = vals[peak], vals[k]  # the series' highest value moves to period k
        spec = with_series(spec, [(n, vals if n == name else spec.values(n)) for n in spec.names])
        top = max(v for _, vs in spec.series for v in vs)
        order = sorted(range(len(vals)), key=lambda j: -vals[j])
        if vals[order[0]] - vals[order[1]] < GAP[level] * top:
            return None
        idx = {"runner_up": order[1], "lowest": order[-1], "first": 0, "last": len(vals) - 1}
        wrong = {k: str(j + 1) for k, j in idx.items() if j != order[0]}
        wrong["two_answers"] = f"<answer>{order[0] + 1}</answer><answer>{order[1] + 1}</answer>"
        q = (f"Counting periods from the left (the first, {spec.periods[0]}, is 1), in which period "
             f"was {_which(spec, name)} at its highest? Answer with the number.")
        return _task("finance.chart_high_point-v1", level, rng, spec, q, str(order[0] + 1), wrong)
    return first_made(make, TRIES)


def _score(task: Task, answer: str) -> Score:
    got = one_answer(answer)
    want = task.hidden["choice"]
    ok = got is not None and got.strip().strip(".").lower() == want
    return Score(float(ok), components={"answer": (float(ok), 1.0)},
                 reason="correct" if ok else f"expected {want!r}, got {got!r}",
                 verifier_version=task.domain)


def _answer(task: Task) -> str:
    # bare, as the other visual references: the conformance check pads a reference with
    # garbage, and padding around one <answer> block would still read as that answer
    return str(task.hidden["choice"])


def _probes(task: Task) -> dict[str, str]:
    return dict(task.hidden["probes"])


for _id, _build, _what in (
    ("finance.chart_direction-v1", _build_direction, "did a series end higher or lower than it began"),
    ("finance.chart_high_point-v1", _build_high_point, "the period in which a series peaked"),
):
    register_domain(SeeDomain(_id, "finance", _build, _answer, _score, _probes,
                              description=f"Chart shape (visual): {_what}, read off a chart."))
