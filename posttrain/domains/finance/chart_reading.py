"""Chart reading: a matplotlib chart of a company's financial series → one field-level answer.

Four visual domains (``vision = True``, single turn; the chart is the task's only image and
its values are written nowhere in the text, so the policy must read the image):

- ``finance.chart_value-v1`` — the value of a series in a named period (level 1: printed on
  the bar, exact; 2-3: read against the grid, within ``READ_TOL`` of the axis top);
- ``finance.chart_peak-v1`` — the period in which a series was highest (the peak leads the
  runner-up by more than the reading tolerance);
- ``finance.chart_growth-v1`` — the percentage change of a series between two named periods,
  from the printed values (one decimal, ±0.5 points; levels add series and periods);
- ``finance.chart_cross-v1`` — the first period in which one series exceeds another (every
  period's gap is larger than the reading tolerance).

Probes (each must score at the floor): the neighbouring periods' values, another series' value,
the series' maximum; the lowest, first, last and runner-up periods; the sign-flipped,
reversed, absolute and fractional growth; the periods around the crossing.
"""

from __future__ import annotations

import hashlib
import random
from typing import Callable

from posttrain.core.types import Score, Task
from posttrain.domains._vision_kit import SeeDomain, one_answer, visual_task
from posttrain.domains.base import register_domain
from posttrain.domains.finance._charts import ChartSpec, draw_chart, make_chart, with_series
from posttrain.verifiers.text import exact_match, numeric_match

READ_TOL = {1: 0.5, 2: 0.03, 3: 0.025}  # level 1: absolute (printed); else share of the top value
TRIES = 400


def _ref(rng: random.Random) -> str:
    return hashlib.sha256(str(rng.random()).encode()).hexdigest()[:6]


def _tol(spec: ChartSpec) -> float:
    top = max(v for _, vals in spec.series for v in vals)
    return READ_TOL[1] if spec.labels or len(spec.series) == 1 else READ_TOL[spec.level] * top


def _task(domain_id: str, level: int, rng: random.Random, spec: ChartSpec, question: str,
          answer: str, tol: float, probes: dict[str, str], kind: str) -> Task:
    text = (f"Chart {_ref(rng)} shows {spec.company}'s {spec.metric} ($ million) by period. "
            f"{question}")
    return visual_task(domain_id, level, text, [draw_chart(spec)], answer=answer,
                       hidden={"chart": spec.to_json(), "tol": tol, "kind": kind,
                               "probes": {k: v for k, v in probes.items() if v}})


def _score(task: Task, answer: str) -> Score:
    want, kind = str(task.hidden["answer"]), task.hidden["kind"]
    got = one_answer(answer)
    if got is None:
        v = 0.0
    elif kind == "number":
        got = got.rstrip("%").strip()
        v = numeric_match(got, float(want), rel_tol=0.0, abs_tol=float(task.hidden["tol"]) + 1e-9)
    else:
        v = exact_match(got, want)
    return Score(v, components={kind: (v, 1.0)}, reason="match" if v else "mismatch",
                 verifier_version=task.domain)


def _wrong(answer: str, tol: float, kind: str, candidates: dict[str, object]) -> dict[str, str]:
    """Probes: the candidates that are really wrong (numbers further than ``tol``)."""
    out = {}
    for name, c in candidates.items():
        if c is None:
            continue
        if kind == "number":
            if abs(float(c) - float(answer)) > tol + 1e-6:
                out[name] = f"{float(c):g}"
        elif str(c).lower() != answer.lower():
            out[name] = str(c)
    return out


def _retry(rng: random.Random, make: Callable[[], Task | None]) -> Task:
    for _ in range(TRIES):
        task = make()
        if task is not None:
            return task
    raise RuntimeError("no readable chart found (generator constraints too tight)")


# --------------------------------------------------------------------------- value
def _build_value(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals = spec.values(name)
        i = rng.randrange(len(vals))
        tol = _tol(spec)
        ans = vals[i]
        near = [vals[j] for j in (i - 1, i + 1) if 0 <= j < len(vals)]
        near += [spec.values(n)[i] for n in spec.names if n != name]
        if any(abs(v - ans) <= 2 * tol for v in near):
            return None
        series = f"the {name} series" if len(spec.names) > 1 else "the series"
        q = (f"What is the value of {series} in {spec.periods[i]}? Answer with the number in "
             f"$ million only, as <answer>NUMBER</answer>.")
        probes = _wrong(str(ans), tol, "number", {
            "previous_period": vals[i - 1] if i > 0 else None,
            "next_period": vals[i + 1] if i + 1 < len(vals) else None,
            "series_max": max(vals), "series_mean": round(sum(vals) / len(vals)),
            **{f"series_{n}": spec.values(n)[i] for n in spec.names if n != name}})
        return _task("finance.chart_value-v1", level, rng, spec, q, str(ans), tol, probes, "number")
    return _retry(rng, make)


# --------------------------------------------------------------------------- peak
def _build_peak(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, level)
        name = rng.choice(spec.names)
        vals = spec.values(name)
        order = sorted(range(len(vals)), key=lambda j: -vals[j])
        if vals[order[0]] - vals[order[1]] <= 2 * _tol(spec):
            return None
        p = spec.periods
        series = f"the {name} series" if len(spec.names) > 1 else "the series"
        q = (f"In which period was {series} at its highest? Answer with the period label exactly "
             f"as written on the x-axis, as <answer>PERIOD</answer>.")
        probes = _wrong(p[order[0]], 0, "label", {
            "runner_up": p[order[1]], "lowest": p[order[-1]], "first": p[0], "last": p[-1],
            **{f"peak_of_{n}": p[max(range(len(p)), key=lambda j: spec.values(n)[j])]
               for n in spec.names if n != name}})
        return _task("finance.chart_peak-v1", level, rng, spec, q, p[order[0]], 0.0, probes, "label")
    return _retry(rng, make)


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
        series = f"the {name} series" if len(spec.names) > 1 else "the series"
        q = (f"By what percentage did {series} change from {spec.periods[i]} to {spec.periods[j]}? "
             f"Use the printed values; answer with the percentage to one decimal (negative for a "
             f"fall), as <answer>NUMBER</answer>.")
        probes = _wrong(str(g), 0.5, "number", {
            "sign_flipped": -g, "reversed": round(100.0 * (vals[i] - vals[j]) / vals[j], 1),
            "absolute_change": vals[j] - vals[i], "fraction": round(g / 100.0, 3),
            "ratio_percent": round(100.0 * vals[j] / vals[i], 1)})
        return _task("finance.chart_growth-v1", level, rng, spec, q, f"{g:.1f}", 0.5, probes, "number")
    return _retry(rng, make)


# --------------------------------------------------------------------------- crossing
def _build_cross(rng: random.Random, level: int) -> Task:
    def make() -> Task | None:
        spec = make_chart(rng, max(level, 2), labels=level == 1)
        spec = type(spec)(spec.company, spec.metric, spec.periods, spec.series, level, spec.labels)
        names = spec.names
        if len(names) < 2:
            return None
        a, b = rng.sample(names, 2)
        base = spec.values(b)
        n = len(base)
        k = rng.randint(1, n - 2)
        # a stays below b before period k and above from k on (at level 3 it may fall back later)
        sign = [(-1 if t < k else 1) if level < 3 or t <= k else rng.choice((-1, 1)) for t in range(n)]
        a_vals = [max(20, round(v * (1 + s * rng.uniform(0.1, 0.35)))) for v, s in zip(base, sign)]
        spec = with_series(spec, [(x, a_vals if x == a else spec.values(x)) for x in names])
        tol = _tol(spec)
        if any(abs(x - y) <= 2 * tol or (x > y) != (s > 0) for x, y, s in zip(a_vals, base, sign)):
            return None
        p = spec.periods
        q = (f"In which period does the {a} series first rise above the {b} series? Answer with the "
             f"period label exactly as written on the x-axis, as <answer>PERIOD</answer>.")
        probes = _wrong(p[k], 0, "label", {"period_before": p[k - 1], "period_after": p[k + 1],
                                           "first": p[0], "last": p[-1]})
        return _task("finance.chart_cross-v1", level, rng, spec, q, p[k], 0.0, probes, "label")
    return _retry(rng, make)


def _answer(task: Task) -> str:
    return str(task.hidden["answer"])


def _probes(task: Task) -> dict[str, str]:
    return dict(task.hidden["probes"])


for _id, _build, _what in (
    ("finance.chart_value-v1", _build_value, "the value of a series in a period, read off a chart"),
    ("finance.chart_peak-v1", _build_peak, "the period a series peaks in, read off a chart"),
    ("finance.chart_growth-v1", _build_growth, "growth between two periods from a chart's labels"),
    ("finance.chart_cross-v1", _build_cross, "the first period one series rises above another"),
):
    register_domain(SeeDomain(_id, "finance", _build, _answer, _score, _probes,
                              description=f"Chart reading (visual): {_what}."))
