"""The staged mix by layer: which stage a domain belongs to and each stage's weight at a step.

Stages, from first to last emphasis: ``foundation`` (behaviour and format: the
``instructions`` family), ``tools`` (the ``tools`` family), ``domain`` (every other family)
and ``long_horizon`` (the ``long_horizon`` family). A config may map other families or
single domains to any stage. A stage's weight is a piecewise-linear function of the training
step, so long-horizon work ramps in instead of dominating the early gradient.

Guarantees: pure functions, no state. Not covered: the difficulty bias inside a stage is
applied by the curriculum (``StageSpec.easy_bias``).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .config import STAGES, CurriculumConfig, StageSpec


def stage_of(domain_id: str, family: str, cfg: CurriculumConfig) -> str:
    """The stage of a domain: its override, else its family's mapping, else ``domain``."""
    override = cfg.domains.get(domain_id)
    if override is not None and override.stage is not None:
        return override.stage
    return cfg.family_stage.get(family, "domain")


def schedule_value(points: list[tuple[int, float]], step: int) -> float:
    """Piecewise-linear interpolation of ``[(step, value), ...]``, constant outside."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return float(np.interp(step, xs, ys))


def stage_weights(stages: Mapping[str, StageSpec], step: int) -> dict[str, float]:
    """Weight multiplier of every stage at ``step`` (1.0 for a stage the config omits)."""
    return {s: (schedule_value(stages[s].weight, step) if s in stages else 1.0) for s in STAGES}


def stage_easy_bias(stages: Mapping[str, StageSpec], stage: str) -> float:
    spec = stages.get(stage)
    return spec.easy_bias if spec is not None else 0.5
