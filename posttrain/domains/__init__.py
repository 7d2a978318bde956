"""posttrain.domains: the domain library (DESIGN.md §2-3).

Public names: the :class:`Domain` protocol, :func:`register_domain`, the :data:`DOMAINS`
registry, :func:`get_domain`, :func:`sample_task`, :func:`load_builtin_domains`, the
:data:`FAMILIES` list, the task helpers :func:`make_task`, :func:`exact_score`,
:func:`numeric_score`. The conformance checker that every domain must pass plays episodes
through the rollout engine, so it lives one layer up: :mod:`posttrain.rollout.conformance`
(``check_domain``, ``check_domains``). See ``docs/domains.md`` for how to add a domain.
"""

from __future__ import annotations

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

__all__ = [
    "DOMAINS", "ENV_KINDS", "FAMILIES", "Domain", "exact_score", "get_domain",
    "load_builtin_domains", "make_task", "numeric_score", "register_domain", "sample_task",
]
