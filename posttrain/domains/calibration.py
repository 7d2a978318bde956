"""Measured difficulty of the domain library: the committed figures and the checks on them.

What it is: the reader of ``posttrain/domains/calibration.json`` — for every registered domain
its catalogue profile (family, env kind, levels, tier, verifier components, hidden keys, probe
names) and two measured pass rates per level: the reference solver's and the built-in
model's (``posttrain domains catalogue`` writes it; ``docs/catalogue.md`` is rendered from
it). :func:`level_prior` gives a domain's measured pass rate per level, which the curriculum
uses as its prior; :func:`difficulty_flags` says whether measured levels behave as levels.

Guarantees: reading never measures anything and never imports a model; a domain or level
that was not measured is absent (never a made-up number); the file is read once per process.

Does not: measure (see :mod:`posttrain.cli._calibrate`), or know whether the figures are
current (``posttrain domains catalogue --check`` does).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any, Mapping

PATH = Path(__file__).with_name("calibration.json")
SATURATED_AT = 0.9  # a level 1 passed this often teaches the model little
_Z = 2.0  # a later level must beat an earlier one by this many standard errors to be flagged


@functools.lru_cache(maxsize=1)
def load(path: str | None = None) -> dict[str, Any]:
    """The committed calibration document (``{"model": ..., "domains": {...}}``); empty when absent."""
    p = Path(path) if path else PATH
    if not p.is_file():
        return {"domains": {}}
    return json.loads(p.read_text())


def level_prior(domain_id: str, source: str = "model") -> dict[int, float]:
    """Measured pass rate per level of ``domain_id`` by ``source`` (``model`` or ``reference``);
    ``{}`` when the domain or the source was not measured."""
    entry = load()["domains"].get(domain_id, {})
    cells = entry.get(source) or {}
    return {int(d): float(c["pass_rate"]) for d, c in cells.items()
            if d.isdigit() and isinstance(c, Mapping) and c.get("pass_rate") is not None}


def difficulty_flags(cells: Mapping[str, Any]) -> list[str]:
    """Problems with measured levels: ``level 1 saturated`` and ``not monotone: dA < dB``.

    ``cells`` maps a level (as text) to ``{"pass_rate", "n_samples"}`` (the shape
    ``domains calibrate`` writes). A harder level is flagged only when its pass rate exceeds an
    easier level's by more than two standard errors of the difference, so the noise of a few
    tasks per cell is not reported as a broken level.
    """
    rated = sorted((int(d), float(c["pass_rate"]), int(c.get("n_samples") or 0))
                   for d, c in cells.items()
                   if d.isdigit() and isinstance(c, Mapping) and c.get("pass_rate") is not None)
    flags = []
    if rated and rated[0][0] == 1 and rated[0][1] >= SATURATED_AT:
        flags.append(f"level 1 saturated ({rated[0][1]:.2f})")
    for i, (d_lo, p_lo, n_lo) in enumerate(rated):
        for d_hi, p_hi, n_hi in rated[i + 1:]:
            if p_hi > p_lo and p_hi - p_lo > _Z * _stderr(p_lo, n_lo, p_hi, n_hi):
                flags.append(f"not monotone: d{d_hi} {p_hi:.2f} > d{d_lo} {p_lo:.2f}")
    return flags


def _stderr(p1: float, n1: int, p2: float, n2: int) -> float:
    """Standard error of a difference of two proportions (pooled; 0 samples count as 1)."""
    p = (p1 * n1 + p2 * n2) / max(1, n1 + n2)
    return math.sqrt(max(p * (1 - p), 1e-12) * (1 / max(1, n1) + 1 / max(1, n2)))
