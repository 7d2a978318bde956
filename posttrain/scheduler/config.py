"""Validated configuration of the global curriculum (the local level's settings are run-config
sections: ``episode`` for budgets, timeouts, retries and checkpoints, ``filters``).

Both are pydantic models (they cross a boundary: YAML run configs, JSON checkpoints). A bad
value fails at construction with a :class:`~posttrain.core.errors.ConfigError` that names the
field, the value and what is allowed (:func:`curriculum_config`).
Every field is described in ``docs/scheduler.md``.

Guarantees: thresholds are ordered (``demote_at < promote_at``), shares are fractions, stage
schedules are sorted by step. Not covered: whether the domains named in ``domains`` exist
(the curriculum checks that against the domains it is built with).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from posttrain.core.config import validate_config

STAGES = ("foundation", "tools", "domain", "long_horizon")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StageSpec(_Strict):
    """One layer of the staged mix: its weight over training steps and its difficulty bias.

    ``weight`` is a piecewise-linear schedule of ``[step, multiplier]`` points (held constant
    before the first and after the last point). ``easy_bias`` multiplies a cell's weight by
    ``exp(-easy_bias * rank)`` where ``rank`` is the cell's level above the domain's lowest
    active level, so a stage with a high bias keeps sampling its easier active levels.
    """

    weight: list[tuple[int, float]] = Field(default_factory=lambda: [(0, 1.0)], min_length=1)
    easy_bias: float = Field(0.5, ge=0.0, le=20.0)

    @model_validator(mode="after")
    def _sorted(self) -> "StageSpec":
        steps = [s for s, _ in self.weight]
        if steps != sorted(steps) or len(set(steps)) != len(steps):
            raise ValueError(f"weight schedule steps must be strictly increasing, got {steps}")
        if any(w < 0 for _, w in self.weight):
            raise ValueError("weight schedule multipliers must be >= 0")
        return self


def _default_stages() -> dict[str, StageSpec]:
    # Foundation behaviour (format, instruction following) first, long-horizon work last:
    # hard multi-turn tasks ramp in so they do not dominate the early gradient.
    return {
        "foundation": StageSpec(weight=[(0, 3.0), (2000, 1.0)], easy_bias=1.0),
        "tools": StageSpec(weight=[(0, 1.5), (2000, 1.0)], easy_bias=0.7),
        "domain": StageSpec(weight=[(0, 1.0)], easy_bias=0.5),
        "long_horizon": StageSpec(weight=[(0, 0.2), (3000, 1.0)], easy_bias=1.0),
    }


class DomainOverride(_Strict):
    """Per-domain mixture weight, priority, quotas and stage."""

    weight: float = Field(1.0, ge=0.0, description="mixture weight (relative)")
    priority: int = Field(0, description="higher first: order of work, not its amount")
    max_share: float | None = Field(None, gt=0.0, le=1.0, description="cap on the share of samples")
    budget: int | None = Field(None, ge=0, description="total groups, then the domain is done")
    stage: str | None = Field(None, description=f"one of {STAGES}; default from the family")

    @model_validator(mode="after")
    def _stage(self) -> "DomainOverride":
        if self.stage is not None and self.stage not in STAGES:
            raise ValueError(f"stage {self.stage!r} is not one of {STAGES}")
        return self


class CurriculumConfig(_Strict):
    """The global scheduler: which (domain, difficulty) cell to sample next."""

    seed: int = 0
    group_size: int = Field(8, ge=1, le=4096, description="G, for the zero-variance prediction")
    success_threshold: float = Field(0.5, ge=0.0, le=1.0, description="reward >= it is a pass")
    prior_alpha: float = Field(1.0, gt=0.0)
    prior_beta: float = Field(1.0, gt=0.0)
    decay: float = Field(0.95, gt=0.0, le=1.0, description="per-group discount of a cell's stats")
    promote_at: float = Field(0.85, gt=0.0, le=1.0)
    demote_at: float = Field(0.05, ge=0.0, lt=1.0)
    min_groups: int = Field(4, ge=1, description="fresh groups needed before a level change")
    replay_levels: int = Field(1, ge=0, description="levels below the frontier kept active")
    replay_weight: float = Field(0.1, ge=0.0, le=1.0, description="weight factor of those levels")
    floor_share: float = Field(0.1, ge=0.0, lt=1.0, description="share split evenly over domains")
    min_cell_weight: float = Field(0.002, gt=0.0, description="weight of an unlearnable active cell")
    skip_zero_var_above: float = Field(0.9, gt=0.0, le=1.0,
                                       description="predicted P(all-equal group) above which a cell is skipped")
    learnable_band: tuple[float, float] = (0.1, 0.9)
    measured_prior: bool = Field(False, description="start from the committed measured pass rates "
                                 "(posttrain/domains/calibration.json): cell priors and first levels")
    measured_prior_samples: float = Field(8.0, ge=0.0, description="pseudo-samples a measured pass "
                                          "rate is worth (they decay like observed samples)")
    stages: dict[str, StageSpec] = Field(default_factory=_default_stages)
    family_stage: dict[str, str] = Field(default_factory=lambda: {
        "instructions": "foundation", "tools": "tools", "long_horizon": "long_horizon"})
    domains: dict[str, DomainOverride] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ordered(self) -> "CurriculumConfig":
        if self.demote_at >= self.promote_at:
            raise ValueError(f"demote_at ({self.demote_at}) must be below promote_at ({self.promote_at})")
        lo, hi = self.learnable_band
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError(f"learnable_band must satisfy 0 <= lo < hi <= 1, got {self.learnable_band}")
        bad = [s for s in self.stages if s not in STAGES]
        bad += [s for s in self.family_stage.values() if s not in STAGES]
        if bad:
            raise ValueError(f"unknown stage(s) {bad}; allowed: {STAGES}")
        return self


def curriculum_config(data: dict[str, Any] | CurriculumConfig | None = None) -> CurriculumConfig:
    """Validate a curriculum config; errors are ConfigErrors naming field, value and allowed."""
    if isinstance(data, CurriculumConfig):
        return data
    return validate_config(dict(data or {}), CurriculumConfig)
