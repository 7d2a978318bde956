"""The env a domain's task runs in: ``make_env(domain, task) -> TaskEnv``.

A domain that defines ``make_env(task)`` (multi-turn: tools, sandboxes) builds its own env;
any other domain gets a :class:`~posttrain.envs.base.SingleTurnEnv` over its ``score``, whose
``verify`` never raises. The domain is duck-typed: this module does not import
:mod:`posttrain.domains` (same layer, and the registry is not needed to build one env).
"""

from __future__ import annotations

from typing import Any

from posttrain.core.types import Task
from posttrain.envs.base import SingleTurnEnv, TaskEnv


def make_env(domain: Any, task: Task) -> TaskEnv:
    """A fresh env for one episode of ``task`` under ``domain``."""
    factory = getattr(domain, "make_env", None)
    if callable(factory):
        return factory(task)
    return SingleTurnEnv(task, domain.score, verifier_version=domain.id)
