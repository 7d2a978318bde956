"""Typed errors, one per boundary that can fail.

Every error posttrain raises on purpose derives from :class:`PosttrainError`, and is typed
by the boundary that failed (DESIGN.md §8): a config, a sandbox, a verifier, an inference
backend, an environment, the scheduler, the registry, or a missing optional dependency.

:class:`ErrorInfo` is the serialisable form of an error that is *recorded* rather than
raised: a verifier that crashed gives a ``Score`` whose ``error`` is an ``ErrorInfo``, and a
malformed model output is an ``ErrorInfo`` on its trajectory. A bad rollout is data, not a
crash.
"""

from __future__ import annotations

from dataclasses import dataclass


class PosttrainError(Exception):
    """Base of every error posttrain raises on purpose."""

    kind = "error"


class ConfigError(PosttrainError, ValueError):
    """A run config or an override is malformed; the message names field, value and what is allowed."""

    kind = "config"


class RegistryError(PosttrainError, KeyError):
    """An id is unknown or registered twice; the message suggests the closest known ids."""

    kind = "registry"

    def __str__(self) -> str:  # KeyError quotes its message; we want it readable.
        return str(self.args[0]) if self.args else ""


class SandboxError(PosttrainError):
    """The sandbox itself failed (not the code inside it)."""

    kind = "sandbox"


class VerifierError(PosttrainError):
    """A verifier crashed or returned something that is not a Score."""

    kind = "verifier"


class InferenceError(PosttrainError):
    """An inference backend failed to generate."""

    kind = "inference"


class EnvError(PosttrainError):
    """A task environment was misused or failed (e.g. ``step`` after ``done``)."""

    kind = "env"


class SchedulerError(PosttrainError):
    """The scheduler could not place, retry or persist work."""

    kind = "scheduler"


class CheckpointError(PosttrainError):
    """A checkpoint is missing, incomplete or does not match the model it is loaded into."""

    kind = "checkpoint"


class MissingExtraError(PosttrainError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    kind = "missing_extra"

    def __init__(self, module: str, extra: str):
        super().__init__(
            f"optional dependency {module!r} is not installed; "
            f"install it with: pip install 'posttrain[{extra}]'"
        )
        self.module = module
        self.extra = extra


def require(module: str, extra: str):
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(module, extra) from exc


@dataclass(frozen=True)
class ErrorInfo:
    """A recorded (not raised) failure: which boundary failed and why."""

    kind: str
    message: str

    @classmethod
    def from_exception(cls, exc: BaseException) -> "ErrorInfo":
        kind = getattr(exc, "kind", None) or type(exc).__name__
        return cls(kind=kind, message=f"{type(exc).__name__}: {exc}"[:2000])


#: The boundaries a recorded failure is attributed to (DESIGN.md §8), in the order a
#: rollout crosses them.
BOUNDARIES = ("inference", "env", "sandbox", "verifier", "scheduler")


def classify(exc: BaseException, boundary: str) -> ErrorInfo:
    """The one place a caught failure is attributed to a boundary.

    ``boundary`` is where it was caught (``inference``, ``env``, ``verifier``, ...). A typed
    posttrain error raised from deeper down keeps its own boundary (a :class:`SandboxError`
    raised inside ``env.step`` is a sandbox failure, not an env one); anything else — a
    bug, an OS error — is charged to the boundary that caught it.
    """
    if boundary not in BOUNDARIES:
        raise ValueError(f"unknown boundary {boundary!r}; allowed: {', '.join(BOUNDARIES)}")
    kind = getattr(exc, "kind", None)
    if not isinstance(exc, PosttrainError) or kind not in BOUNDARIES:
        kind = boundary
    return ErrorInfo(kind=kind, message=f"{type(exc).__name__}: {exc}"[:2000])
