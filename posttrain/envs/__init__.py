"""posttrain.envs: the TaskEnv contract and the env factory (DESIGN.md §2-3).

Public names: :class:`TaskEnv`, :class:`SingleTurnEnv`, :func:`safe_score`,
:func:`call_maybe_async`, :func:`final_answer`, :func:`make_env`. Episodes are played by the
rollout engine (:mod:`posttrain.rollout.engine`); the conformance checker that plays every
domain's reference and probes through it is :mod:`posttrain.rollout.conformance`.
"""

from posttrain.envs.base import SingleTurnEnv, TaskEnv, call_maybe_async, final_answer, safe_score
from posttrain.envs.factory import make_env

__all__ = ["SingleTurnEnv", "TaskEnv", "call_maybe_async", "final_answer", "make_env", "safe_score"]
