"""posttrain.envs: the TaskEnv contract, the env factory and the conformance checker (DESIGN.md §2-3).

Public names: :class:`TaskEnv`, :class:`SingleTurnEnv`, :func:`safe_score`,
:func:`call_maybe_async`, :func:`final_answer`, :func:`make_env`, :func:`check_domain`,
:func:`check_domains`, :class:`CheckReport`, :func:`generic_probes`, :func:`run_episode`.
"""

from posttrain.envs.base import SingleTurnEnv, TaskEnv, call_maybe_async, final_answer, safe_score
from posttrain.envs.conformance import (
    CheckReport,
    check_domain,
    check_domains,
    generic_probes,
    run_episode,
)
from posttrain.envs.factory import make_env

__all__ = [
    "CheckReport", "SingleTurnEnv", "TaskEnv", "call_maybe_async", "check_domain",
    "check_domains", "final_answer", "generic_probes", "make_env", "run_episode", "safe_score",
]
