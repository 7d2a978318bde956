"""The layered outcome of one trajectory: L1 format, L2 tool calls, L3 task, L4 long horizon.

A failure is attributed to the *first* layer that failed, so that "the model cannot follow the
output format" is never reported as "the model cannot do the task".

- L1 format compliance: no turn has ``info["format_ok"] is False`` and the trajectory carries
  no model-side error (a malformed output recorded as ``trajectory.error``);
- L2 tool-call validity: no turn has ``info["tool_calls_valid"] is False`` and no tool-call
  error was recorded;
- L3 task success: the verifier ran and ``score.value >= threshold``;
- L4 long-horizon success (multi-turn / long-horizon domains only): L3, plus the episode ended
  on its own (``stop_reason == "done"``, not a turn/token/time budget) with every score
  component at or above the threshold (every sub-goal met).

A layer is ``None`` when it was not measured (no turn reported ``format_ok``) or does not
apply (L4 on a single-turn domain); ``None`` layers are skipped when attributing.
A sample *succeeds* when no measured layer failed; on a single-turn domain whose rollout does
not report ``format_ok`` that is exactly the verifier's verdict (L3).

Infrastructure failures (inference, sandbox, verifier, scheduler, env errors) are not model
failures: the outcome is ``status="error"``, excluded from rates and counted separately.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posttrain.core.types import Trajectory

LAYERS = ("L1", "L2", "L3", "L4")
LAYER_NAMES = {"L1": "format compliance", "L2": "tool-call validity", "L3": "task success",
               "L4": "long-horizon success"}
INFRA_ERROR_KINDS = frozenset({"inference", "sandbox", "verifier", "scheduler", "env", "config",
                               "registry", "missing_extra", "timeout_infra", "timeout",
                               "cancelled", "worker_lost"})


@dataclass(frozen=True)
class LayerOutcome:
    """Per-layer pass/fail/None, the first failing layer, and whether it was an infra error."""

    flags: Mapping[str, bool | None]
    first_failure: str | None  # "L1".."L4", or None when every measured layer passed
    status: str  # "ok" | "error"
    error: str | None = None

    @property
    def success(self) -> bool:
        """A sample succeeds when it is not an infra error and no measured layer failed."""
        return self.status == "ok" and self.first_failure is None


def _turn_flag(traj: Trajectory, key: str) -> bool | None:
    seen = [t.info.get(key) for t in traj.turns if isinstance(t.info, Mapping) and key in t.info]
    if not seen:
        return None
    return all(bool(v) for v in seen)


def _model_error_layer(traj: Trajectory) -> str | None:
    """Which layer a model-side trajectory error belongs to (None when there is none)."""
    err = traj.error
    if err is None or err.kind in INFRA_ERROR_KINDS:
        return None
    return "L2" if "tool" in err.kind else "L1"


def _infra_error(traj: Trajectory) -> str | None:
    if traj.error is not None and traj.error.kind in INFRA_ERROR_KINDS:
        return f"{traj.error.kind}: {traj.error.message}"
    if traj.score is None and traj.error is None:
        return "unscored: the trajectory has no Score"
    if traj.score is not None and traj.score.error is not None:
        return f"{traj.score.error.kind}: {traj.score.error.message}"
    return None


def classify(traj: Trajectory, threshold: float = 1.0, long_horizon: bool = False) -> LayerOutcome:
    """Layer flags and first failure of ``traj`` (success means ``score.value >= threshold``)."""
    infra = _infra_error(traj)
    if infra is not None:
        return LayerOutcome({k: None for k in LAYERS}, None, "error", infra)
    model_layer = _model_error_layer(traj)
    l1 = _turn_flag(traj, "format_ok")
    l2 = _turn_flag(traj, "tool_calls_valid")
    if model_layer == "L1":
        l1 = False
    if model_layer == "L2":
        l2 = False
    score = traj.score
    l3 = bool(score is not None and score.value >= threshold)
    l4: bool | None = None
    if long_horizon:
        parts_ok = all(v >= threshold for v, _w in (score.components or {}).values()) if score else False
        l4 = l3 and traj.stop_reason == "done" and parts_ok
    flags = {"L1": l1, "L2": l2, "L3": l3, "L4": l4}
    first = next((k for k in LAYERS if flags[k] is False), None)
    return LayerOutcome(flags, first, "ok")
