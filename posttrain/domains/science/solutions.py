"""Solutions and decay: radioactive half-life, pH of strong acids and bases, dilution.

Quantity answers as in :mod:`._kit`; pH is a plain number scored on an absolute scale.
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from posttrain.verifiers.text import parse_number

from ..math_ext._kit import answer_text, fail
from ._kit import fmt, linear_tolerance, quantity_domain, quantity_draft


def _half_life(rng: random.Random, difficulty: int) -> Draft:
    """Exponential radioactive decay with half-lives.

    Exponential decay: mass left after a whole number of half-lives
    (d1), after any time (d2), time for a sample to decay to a given mass (d3, t = T log2(m0/m)).
    Not covered: decay chains. Probes: linear decay, the half-life itself."""
    m0, T = round(rng.uniform(10, 800), 1), round(rng.uniform(2, 60), 1)
    unit = rng.choice(["s", "min", "h", "day"])
    if difficulty < 3:
        t = T * rng.randint(2, 6) if difficulty == 1 else round(rng.uniform(0.3, 5) * T, 1)
        left = m0 * 0.5 ** (t / T)
        return quantity_draft(f"An isotope has a half-life of {fmt(T)} {unit}. How much of a {m0} g "
                              f"sample remains after {fmt(t)} {unit}?", left / 1000, "g",
                              mistakes={"linear": max(m0 * (1 - t / (2 * T)), 0.001) / 1000, "half": m0 / 2000})
    m = round(m0 * rng.uniform(0.02, 0.8), 1)
    sec = {"s": 1, "min": 60, "h": 3600, "day": 86400}[unit]
    t = T * math.log2(m0 / m)
    return quantity_draft(
        f"An isotope has a half-life of {fmt(T)} {unit}. How long until a {m0} g sample decays "
        f"to {m} g?", t * sec, unit, mistakes={"linear": T * 2 * (1 - m / m0) * sec, "half_life": T * sec})


register_domain(quantity_domain("science.half_life-v1", _half_life, _half_life.__doc__))


def _ph(rng: random.Random, difficulty: int) -> Draft:
    """pH of strong acids and bases, including dilution and diprotic acids.

    PH of strong acids and bases at 25 °C (pH + pOH = 14): a monoprotic acid
    (d1), a strong base (d2, via pOH), a diluted diprotic acid H2SO4 treated as fully
    dissociated (d3). Answer a plain number; 1 within 0.01, linear to 0 at 0.05.
    Not covered: weak acids, buffers. Probes: pOH instead of pH, the sign error, the
    diprotic factor ignored (d3)."""
    c = round(rng.uniform(1, 9.9), 1) * 10.0 ** -rng.randint(1, 5)
    if difficulty == 1:
        ph, prompt = -math.log10(c), f"What is the pH of {c:.2g} M HCl?"
        mist = {"sign": math.log10(c)}
    elif difficulty == 2:
        ph, prompt = 14 + math.log10(c), f"What is the pH of {c:.2g} M NaOH?"
        mist = {"poh": -math.log10(c)}
    else:
        f = rng.choice([2, 4, 5, 10, 20, 100])
        h = 2 * c / f
        ph = -math.log10(h)
        prompt = f"10 mL of {c:.2g} M H2SO4 (fully dissociated, 2 H+ per molecule) is diluted to {10 * f} mL. What is the pH?"
        mist = {"monoprotic": -math.log10(c / f), "undiluted": -math.log10(2 * c)}
    mist = {k: f"{v:.2f}" for k, v in mist.items() if abs(v - ph) > 0.06}
    mist["poh_of_answer"] = f"{14 - ph:.2f}" if abs(14 - 2 * ph) > 0.06 else f"{ph + 1:.2f}"
    return Draft(prompt + " Reply with only the number (two decimals).",
                 answer=f"{ph:.2f}", hidden={"ph": ph, "mistakes": mist})


def _ph_check(task: Task, answer: str) -> Score:
    v = parse_number(answer_text(answer) or "")
    if v is None:
        return fail(task.domain, "not a single number")
    return linear_tolerance(task, abs(v - task.hidden["ph"]), full=0.01, span=0.04)


def _ph_exploits(task: Task) -> dict[str, str]:
    return dict(task.hidden["mistakes"])


register_domain(SingleTurnDomain("science.ph-v1", _ph, _ph_check, _ph_exploits, description=_ph.__doc__))


def _dilution(rng: random.Random, difficulty: int) -> Draft:
    """Dilution of solutions (C1 V1 = C2 V2).

    C1 V1 = C2 V2: final concentration (d1), stock volume needed (d2),
    water to add (d3). Not covered: mixing two solutions. Probes: the inverted ratio, the total
    volume instead of the water added (d3)."""
    c1, v1 = round(rng.uniform(0.5, 12), 2), round(rng.uniform(5, 200), 0)
    v2 = v1 * rng.choice([2, 2.5, 4, 5, 8, 10, 20])
    c2 = c1 * v1 / v2
    if difficulty == 1:
        return quantity_draft(f"{fmt(v1)} mL of a {c1} M solution is diluted to {fmt(v2)} mL. What is the new "
                              f"concentration?", c2 * 1000, "M", mistakes={"inverted": c1 * v2 / v1 * 1000})
    if difficulty == 2:
        return quantity_draft(f"How much {c1} M stock solution is needed to make {fmt(v2)} mL of {fmt(c2)} M "
                              f"solution?", v1 * 1e-6, "mL", mistakes={"inverted": v2 * c1 / c2 * 1e-6})
    return quantity_draft(f"How much water must be added to {fmt(v1)} mL of {c1} M solution to dilute it to "
                          f"{fmt(c2)} M?", (v2 - v1) * 1e-6, "mL", mistakes={"total": v2 * 1e-6})


register_domain(quantity_domain("science.dilution-v1", _dilution, _dilution.__doc__))
