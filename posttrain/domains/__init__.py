"""posttrain.domains: the domain library (DESIGN.md §2-3).

Public names: the :class:`Domain` protocol, :func:`register_domain`, the :data:`DOMAINS`
registry, :func:`get_domain`, :func:`sample_task`, :func:`load_builtin_domains`, the
:data:`FAMILIES` list, the task helpers :func:`make_task`, :func:`exact_score`,
:func:`numeric_score`, and the conformance checker bound to this registry:
:func:`check_domain` (one domain object) and :func:`check_domains` (registered ids, in
parallel worker processes). See ``docs/domains.md`` for how to add a domain.
"""

from __future__ import annotations

from typing import Any, Sequence

from posttrain.domains._helpers import exact_score, make_task, numeric_score
from posttrain.domains.base import (
    DOMAINS,
    ENV_KINDS,
    FAMILIES,
    Domain,
    get_domain,
    load_builtin_domains,
    register_domain,
    sample_task,
)
from posttrain.envs import conformance as _conformance
from posttrain.envs.conformance import CheckReport


def check_domain(domain: Any, **kw: Any) -> CheckReport:
    """:func:`posttrain.envs.conformance.check_domain` with this library's families and seeding."""
    kw.setdefault("sample", sample_task)
    kw.setdefault("families", FAMILIES)
    kw.setdefault("env_kinds", ENV_KINDS)
    return _conformance.check_domain(domain, **kw)


def check_domains(ids: Sequence[str] | None = None, *, workers: int | None = None,
                  **kw: Any) -> list[CheckReport]:
    """Check registered domains (all when ``ids`` is None), in order, in parallel workers."""
    load_builtin_domains()
    ids = list(DOMAINS.ids() if ids is None else ids)
    kw.setdefault("sample", sample_task)
    kw.setdefault("families", FAMILIES)
    kw.setdefault("env_kinds", ENV_KINDS)
    return _conformance.check_domains(ids, resolve=get_domain, workers=workers, **kw)


__all__ = [
    "DOMAINS", "ENV_KINDS", "FAMILIES", "CheckReport", "Domain", "check_domain",
    "check_domains", "exact_score", "get_domain", "load_builtin_domains", "make_task",
    "numeric_score", "register_domain", "sample_task",
]
