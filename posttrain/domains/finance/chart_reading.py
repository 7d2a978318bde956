"""Chart reading: a matplotlib chart of a company's financial series → field-level answers.

Four visual domains (``vision = True``, single turn; the chart is the task's only image and
its values are written nowhere in the text, so the policy must read the image). The answer is
a JSON object scored field by field by the family's verifier
(:func:`posttrain.verifiers.fields.score_fields`: exactly the asked keys, units and ``%``
normalised):

- ``finance.chart_value-v1`` — ``{"first", "second"}``: a series in two named periods (level 1:
  printed on the bars, exact; 2-3: read against the grid, within ``READ_TOL`` of the top value);
- ``finance.chart_peak-v1`` — ``{"period", "value"}``: when a series was highest and how high
  (the peak leads the runner-up by more than twice the reading tolerance);
- ``finance.chart_growth-v1`` — ``{"start_value", "end_value", "growth_pct"}``: the printed
  values of two named periods and the percentage change (±0.5 points);
- ``finance.chart_cross-v1`` — ``{"period", "value"}``: the first period in which one series
  exceeds another, and its value then (every period's gap exceeds the reading tolerance).

Probes (each must score at the floor, so every field of each is wrong): the two values
swapped, the neighbouring periods' values, another series' values; the lowest, first, last and
runner-up periods with their values; the growth read backwards; the periods around the
crossing with their values.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._vision_kit import SeeDomain, visual_task
from posttrain.domains.base import register_domain
from posttrain.domains.finance._charts import ChartSpec, draw_chart, first_made, make_chart, with_series
from posttrain.verifiers.fields import FieldSpec, field_correct, score_fields

READ_TOL = {1: 0.5, 2: 0.03, 3: 0.025}  # level 1: absolute (printed); else share of the top value
TRIES = 400


def _ref(rng: random.Random) -> str:
    return hashlib.sha256(str(rng.random()).encode()).hexdigest()[:6]


def _tol(spec: ChartSpec) -> float:
    top = max(v for _, vals in spec.series for v in vals)
    return READ_TOL[1] if spec.labels or len(spec.series) == 1 else READ_TOL[spec.level] * top


def _amount(name: str, tol: float) -> FieldSpec:
    return FieldSpec(name, "amount", scale=1e6, rel_tol=0.0, abs_tol=tol + 1e-9)


def _period(name: str = "period") -> FieldSpec:
    return FieldSpec(name, "choice")


def _task(domain_id: str, level: int, rng: random.Random, spec: ChartSpec, question: str,
          fields: list[FieldSpec], expected: dict[str, Any], traps: dict[str, dict]) -> Task | None:
    """The task, or None when a trap is not wrong in every field (then it is not a probe)."""
    if any(any(field_correct(t[f.name], expected[f.name], f) for f in fields) for t in traps.values()):
        return None
    keys = ", ".join(f'"{f.name}": ...' for f in fields)
    text = (f"Chart {_ref(rng)} shows {spec.company}'s {spec.metric} ($ million) by period. "
            f"{question} Answer with one JSON object {{{keys}}}, amounts in $ million.")
    return visual_task(domain_id, level, text, [draw_chart(spec)], answer=json.dumps(expected),
                       hidden={"chart": spec.to_json(), "fields": [f.to_dict() for f in fields],
                               "expected": expected, "probes": traps})


def _score(task: Task, answer: str) -> Score:
    specs = [FieldSpec.from_dict(f) for f in task.hidden["fields"]]
    return score_fields(answer, specs, task.hidden["expected"], task.domain)


def _series(spec: ChartSpec, name: str) -> str:
    return f"the {name} series" if len(spec.names) > 1 else "the series"


# --------------------------------------------------------------------------- value
def _build_value(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals, tol = spec.values(name), _tol(spec)
        i, j = sorted(rng.sample(range(len(spec.periods)), 2))
        near = [vals[t] for t in (i - 1, i + 1, j - 1, j + 1) if 0 <= t < len(vals) and t not in (i, j)]
        near += [spec.values(n)[t] for n in spec.names if n != name for t in (i, j)]
        if any(abs(v - vals[t]) <= 2 * tol for v in near for t in (i, j)) or abs(vals[i] - vals[j]) <= 2 * tol:
            return None
        shift = lambda d: {"first": vals[i + d], "second": vals[j + d]}  # noqa: E731
        traps = {"swapped": {"first": vals[j], "second": vals[i]},
                 **({"previous_periods": shift(-1)} if i > 0 else {}),
                 **({"next_periods": shift(1)} if j + 1 < len(vals) else {}),
                 **{f"series_{n}": {"first": spec.values(n)[i], "second": spec.values(n)[j]}
                    for n in spec.names if n != name}}
        q = (f"What are the values of {_series(spec, name)} in {spec.periods[i]} (first) and in "
             f"{spec.periods[j]} (second)?")
        return _task("finance.chart_value-v1", level, rng, spec, q,
                     [_amount("first", tol), _amount("second", tol)],
                     {"first": vals[i], "second": vals[j]}, traps)
    return first_made(make, TRIES)


# --------------------------------------------------------------------------- peak
def _build_peak(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals, p, tol = spec.values(name), spec.periods, _tol(spec)
        order = sorted(range(len(vals)), key=lambda j: -vals[j])
        if vals[order[0]] - vals[order[1]] <= 2 * tol:
            return None
        idx = {"runner_up": order[1], "lowest": order[-1], "first": 0, "last": len(p) - 1}
        traps = {k: {"period": p[j], "value": vals[j]} for k, j in idx.items()
                 if abs(vals[j] - vals[order[0]]) > tol}
        for n in spec.names:
            if n != name:
                j = max(range(len(p)), key=lambda t: spec.values(n)[t])
                traps[f"peak_of_{n}"] = {"period": p[j], "value": spec.values(n)[j]}
        q = (f"In which period was {_series(spec, name)} at its highest (the period label exactly as "
             f"on the x-axis), and what was its value then?")
        return _task("finance.chart_peak-v1", level, rng, spec, q,
                     [_period(), _amount("value", tol)],
                     {"period": p[order[0]], "value": vals[order[0]]}, traps)
    return first_made(make, TRIES)


# --------------------------------------------------------------------------- growth
def _build_growth(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, level, n_series=level, labels=True)
        name = rng.choice(spec.names)
        vals = spec.values(name)
        i, j = sorted(rng.sample(range(len(vals)), 2))
        g = round(100.0 * (vals[j] - vals[i]) / vals[i], 1)
        top = max(v for _, vs in spec.series for v in vs)
        # the two printed values must stand clear of the other series' labels
        crowded = any(abs(spec.values(n)[t] - vals[t]) < 0.08 * top
                      for n in spec.names if n != name for t in (i, j))
        if abs(g) < 5.0 or crowded:
            return None
        back = round(100.0 * (vals[i] - vals[j]) / vals[j], 1)
        traps = {"read_backwards": {"start_value": vals[j], "end_value": vals[i], "growth_pct": back}}
        for n in spec.names:
            if n != name:
                o = spec.values(n)
                traps[f"series_{n}"] = {"start_value": o[i], "end_value": o[j],
                                        "growth_pct": round(100.0 * (o[j] - o[i]) / o[i], 1)}
        q = (f"Using the printed values of {_series(spec, name)}, give its value in {spec.periods[i]} "
             f"(start_value) and in {spec.periods[j]} (end_value), and the percentage change "
             f"between them to one decimal (growth_pct, negative for a fall).")
        fields = [_amount("start_value", 0.5), _amount("end_value", 0.5),
                  FieldSpec("growth_pct", "percent", rel_tol=0.0, abs_tol=0.5)]
        return _task("finance.chart_growth-v1", level, rng, spec, q, fields,
                     {"start_value": vals[i], "end_value": vals[j], "growth_pct": g}, traps)
    return first_made(make, TRIES)


# --------------------------------------------------------------------------- crossing
def _build_cross(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, max(level, 2), labels=level == 1)
        spec = ChartSpec(spec.company, spec.metric, spec.periods, spec.series, level, spec.labels)
        a, b = rng.sample(spec.names, 2)
        base, n = spec.values(b), len(spec.periods)
        k = rng.randint(1, n - 2)
        # a stays below b before period k and above from k on (at level 3 it may fall back later)
        sign = [(-1 if t < k else 1) if level < 3 or t <= k else rng.choice((-1, 1)) for t in range(n)]
        a_vals = [max(20, round(v * (1 + s * rng.uniform(0.1, 0.35)))) for v, s in zip(base, sign)]
        spec = with_series(spec, [(x, a_vals if x == a else spec.values(x)) for x in spec.names])
        tol = _tol(spec)
        if any(abs(x - y) <= 2 * tol or (x > y) != (s > 0) for x, y, s in zip(a_vals, base, sign)):
            return None
        p = spec.periods
        idx = {"period_before": k - 1, "period_after": k + 1, "first": 0, "last": n - 1}
        traps = {name: {"period": p[j], "value": a_vals[j]} for name, j in idx.items()
                 if j != k and abs(a_vals[j] - a_vals[k]) > tol}
        q = (f"In which period does the {a} series first rise above the {b} series (the period label "
             f"exactly as on the x-axis), and what is the {a} value in that period?")
        return _task("finance.chart_cross-v1", level, rng, spec, q, [_period(), _amount("value", tol)],
                     {"period": p[k], "value": a_vals[k]}, traps)
    return first_made(make, TRIES)


def _answer(task: Task) -> str:
    return json.dumps(task.hidden["expected"])


def _probes(task: Task) -> dict[str, str]:
    return {k: json.dumps(v) for k, v in task.hidden["probes"].items()}


for _id, _build, _what in (
    ("finance.chart_value-v1", _build_value, "the values of a series in two periods, read off a chart"),
    ("finance.chart_peak-v1", _build_peak, "when a series peaks and its value, read off a chart"),
    ("finance.chart_growth-v1", _build_growth, "two printed values and the growth between them"),
    ("finance.chart_cross-v1", _build_cross, "the first period one series rises above another"),
):
    register_domain(SeeDomain(_id, "finance", _build, _answer, _score, _probes,
                              description=f"Chart reading (visual): {_what}."))
