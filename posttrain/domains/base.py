"""What a domain is, and the registry that holds them (DESIGN.md §3, "Domain").

A domain is any object with these attributes (a Protocol: no base class to inherit):

- ``id``: versioned, ``family.name-vN``; bump the version whenever reward semantics change;
- ``family``: one of :data:`FAMILIES` (never renamed; new ones may be added);
- ``difficulties``: ints, 1 = easiest, at least three levels;
- ``env_kind``: ``"single_turn"``, ``"tool"`` or ``"sandbox"``;
- optional ``vision``: a bool, True when its observations carry images (``Observation.images``);
- ``generate(rng, difficulty) -> Task``: deterministic given the ``random.Random``;
- ``solve(task) -> str``: the reference final answer (for multi-turn domains, the text a
  scripted reference policy ends with; see ``reference_actions`` below);
- ``score(task, answer) -> Score``: the outcome verifier on a final answer (domains without
  an env of their own; a domain with ``make_env`` is verified by its env's ``verify``, run
  on the live env);
- ``probes(task) -> dict[str, str | list[str]]``: domain-specific exploit answers that must
  score at most 0.05 (the conformance check adds generic ones: empty, garbage, prompt echo,
  padding with many candidates, very long output). A ``str`` probe is a final answer; a
  ``list[str]`` probe is a scripted multi-turn episode (one action text per turn);
- optional ``make_env(task) -> TaskEnv`` for multi-turn domains, which then also give
  ``reference_actions(task) -> list[str]``, the scripted reference episode (replayed through
  the episode engine it must score 1.0); a domain without ``make_env`` gets a
  :class:`~posttrain.envs.base.SingleTurnEnv` over ``score`` (its ``env_kind`` may still be
  "sandbox" when ``score`` judges code in a sandbox).

``register_domain`` is the decorator: it instantiates the class (if given a class), checks
the attributes, and adds it to :data:`DOMAINS`. Third-party packages register through the
entry-point group ``posttrain.domains``.
"""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable

from posttrain.core.errors import RegistryError
from posttrain.core.registry import Registry, split_id
from posttrain.core.types import Task

FAMILIES = (
    "code", "terminal", "finance", "geometry3d", "tools", "instructions", "long_context",
    "long_horizon", "math", "logic", "algorithms", "text_data", "sql", "science", "games",
)
ENV_KINDS = ("single_turn", "tool", "sandbox")
# light: a self-contained generator (the default); real: the domain drives a real tool — a CAD
# kernel, a document parser, a real repository's test suite (``domains list --json``).
TIERS = ("light", "real")


@runtime_checkable
class Domain(Protocol):
    id: str
    family: str
    difficulties: tuple[int, ...]
    env_kind: str

    def generate(self, rng: random.Random, difficulty: int) -> Task: ...

    def solve(self, task: Task) -> str: ...

    def probes(self, task: Task) -> dict[str, Any]: ...


DOMAINS: Registry[Any] = Registry("domain", entry_point_group="posttrain.domains")


def _check(dom: Any) -> None:
    # an own env (multi-turn) is verified by its env.verify; the others by ``score``
    need = ("reference_actions",) if callable(getattr(dom, "make_env", None)) else ("score",)
    missing = [a for a in ("id", "family", "difficulties", "env_kind", "generate", "solve",
                           "probes", *need) if not hasattr(dom, a)]
    if missing:
        raise RegistryError(f"domain {getattr(dom, 'id', dom)!r} lacks {', '.join(missing)}")
    split_id(dom.id)
    if dom.family not in FAMILIES:
        raise RegistryError(f"domain {dom.id!r}: family {dom.family!r} is not one of {FAMILIES}")
    if not dom.id.startswith(dom.family + "."):
        raise RegistryError(f"domain {dom.id!r} must start with its family {dom.family!r}.")
    if dom.env_kind not in ENV_KINDS:
        raise RegistryError(f"domain {dom.id!r}: env_kind {dom.env_kind!r} not in {ENV_KINDS}")
    if getattr(dom, "tier", "light") not in TIERS:
        raise RegistryError(f"domain {dom.id!r}: tier {dom.tier!r} not in {TIERS}")
    if not isinstance(getattr(dom, "vision", False), bool):
        raise RegistryError(f"domain {dom.id!r}: vision {dom.vision!r} must be a bool (True when "
                            "its observations carry images)")
    if len(tuple(dom.difficulties)) < 3:
        raise RegistryError(f"domain {dom.id!r} needs at least 3 difficulty levels")


def register_domain(obj: Any) -> Any:
    """Class or instance decorator adding a domain to :data:`DOMAINS`; returns it unchanged."""
    dom = obj() if isinstance(obj, type) else obj
    _check(dom)
    DOMAINS.add(dom.id, dom)
    return obj


def sample_task(domain: Any, seed: int, difficulty: int) -> Task:
    """The Task of ``domain`` for ``(seed, difficulty)``; same inputs, same Task."""
    if difficulty not in tuple(domain.difficulties):
        raise ValueError(
            f"domain {domain.id!r} has difficulties {list(domain.difficulties)}, not {difficulty}"
        )
    rng = random.Random(f"{domain.id}|{difficulty}|{seed}")
    task = domain.generate(rng, difficulty)
    if task.seed != seed or task.difficulty != difficulty or task.domain != domain.id:
        from dataclasses import replace

        task = replace(task, seed=seed, difficulty=difficulty, domain=domain.id)
    return task


def get_domain(domain_id: str) -> Any:
    """Look a domain up by id (unversioned ids resolve to the latest version)."""
    load_builtin_domains()
    return DOMAINS.get(domain_id)


_LOADED = False


def load_builtin_domains() -> None:
    """Import every built-in domain module once, so their decorators register them.

    A module that fails to import is recorded in ``DOMAINS.discovery_errors`` (key
    ``module:<name>``) instead of breaking every other domain; ``domains check --all``
    reports it as a failure.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib
    import pkgutil

    import posttrain.domains as pkg

    def onerror(name: str) -> None:
        DOMAINS.discovery_errors[f"module:{name}"] = "package failed to import"

    for mod in pkgutil.walk_packages(pkg.__path__, prefix="posttrain.domains.", onerror=onerror):
        if mod.name.rsplit(".", 1)[-1].startswith("_") or mod.name.endswith(".base"):
            continue
        try:
            importlib.import_module(mod.name)
        except Exception as exc:  # one broken module must not hide the other domains
            DOMAINS.discovery_errors[f"module:{mod.name}"] = f"{type(exc).__name__}: {exc}"
