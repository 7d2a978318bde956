"""Which failures are retried, and how long to wait before the next attempt.

Infrastructure failures are retried: the sandbox broke (``SandboxError``), the inference
server failed (``InferenceError``), an infrastructure call timed out (``TimeoutError``), a
connection dropped, or the worker running the episode was lost (``WorkerLost``). A *task*
failure is never an exception here: the policy answering wrongly, running out of turns or
timing out inside the episode is a Trajectory with a Score, and it is data, not retried.
Any other exception is a bug in the episode code: it fails the item at once with its
message (retrying a bug only burns compute).

Backoff is exponential with "equal jitter": attempt ``a`` waits a uniform time in
``[d/2, d]`` with ``d = min(max_s, base_s * 2**(a-1))``, so retries spread out but still grow.
"""

from __future__ import annotations

import random

from posttrain.core.errors import InferenceError, SandboxError, SchedulerError

INFRA = "infra"
BUG = "bug"
CANCELLED = "cancelled"

# ErrorInfo.kind values recorded on a Trajectory that mean the infrastructure failed.
INFRA_KINDS = frozenset({"sandbox", "inference", "timeout", "worker_lost", "TimeoutError",
                         "ConnectionError", "SandboxError", "InferenceError"})


class WorkerLost(SchedulerError):
    """The worker (thread, process or remote actor) running an episode died or hung."""

    kind = "worker_lost"


class Cancelled(SchedulerError):
    """The episode stopped because it was asked to (cancel, shutdown)."""

    kind = "cancelled"


_INFRA_TYPES = (SandboxError, InferenceError, TimeoutError, ConnectionError, WorkerLost)


def classify(exc: BaseException) -> str:
    """``'infra'`` (retry), ``'cancelled'`` (give back), or ``'bug'`` (fail now)."""
    if isinstance(exc, Cancelled):
        return CANCELLED
    if isinstance(exc, _INFRA_TYPES):
        return INFRA
    return BUG


def backoff_s(attempt: int, base_s: float, max_s: float, rng: random.Random) -> float:
    """Wait before attempt ``attempt + 1`` after ``attempt`` failed (1-based)."""
    d = min(max_s, base_s * (2.0 ** max(0, attempt - 1)))
    return d / 2.0 + rng.random() * d / 2.0
