"""Fixed regression sets: per domain, seeded, versioned, stored as JSON.

A regression set lists, for each domain id (with its version, ``math.add-v1``), the
``(difficulty, seed)`` items every candidate version is evaluated on, so that two versions can
be compared item by item. Items are drawn from a seed range (``SEED_BASE`` and up) disjoint
from the training and held-out ranges, spread round-robin over the domain's difficulties.

Guarantees:
- :func:`build_regression_set` is deterministic: same domains, size and seed → same file;
- each domain block carries a content ``hash``; two evaluations are only paired on a domain
  when their hashes match (the gate refuses to compare different items);
- a domain whose version is not the one stored is an error naming both — a version bump
  changes reward semantics, so the set must be rebuilt (and its ``version`` bumped).

It does not hold hidden answers: tasks are regenerated from their seeds by the domain.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from posttrain.core.errors import ConfigError
from posttrain.core.types import Task

SEED_BASE = 20_000_000  # training uses low seeds, held-out evaluation 10_000_000 and up


class DomainSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str
    version: int = 1
    seed: int = 0
    items: list[tuple[int, int]] = Field(description="(difficulty, seed) pairs")

    @property
    def hash(self) -> str:
        blob = json.dumps([self.domain, self.version, [list(i) for i in self.items]])
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class RegressionSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: str = Field("posttrain.regression/v1", alias="schema")
    name: str = "regression"
    domains: dict[str, DomainSet]

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        data = self.model_dump(mode="json", by_alias=True)
        for d in data["domains"].values():
            d["hash"] = DomainSet.model_validate({k: v for k, v in d.items() if k != "hash"}).hash
        p.write_text(json.dumps(data, indent=1) + "\n")
        return p

    @classmethod
    def load(cls, path: str | Path) -> "RegressionSet":
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"regression set {str(p)!r} does not exist")
        data = json.loads(p.read_text())
        for d in data.get("domains", {}).values():
            stored = d.pop("hash", None)
            if stored is not None and DomainSet.model_validate(d).hash != stored:
                raise ConfigError(f"regression set {str(p)!r}: items of {d['domain']!r} were "
                                  "edited without bumping its version (hash mismatch)")
        return cls.model_validate(data)

    def hashes(self) -> dict[str, str]:
        return {d: s.hash for d, s in self.domains.items()}

    def tasks(self, domains: dict[str, Any]) -> list[Task]:
        """Regenerate every item's Task with the given domain objects (keyed by exact id)."""
        tasks = []
        for domain_id in self.domains:
            dom = domains.get(domain_id)
            if dom is None:
                have = ", ".join(sorted(domains)) or "none"
                raise ConfigError(f"regression set needs domain {domain_id!r} (exact version); "
                                  f"available: {have}. Rebuild the set after a version bump.")
            tasks.extend(self.domain_tasks(dom))
        return tasks

    def domain_tasks(self, dom: Any) -> list[Task]:
        """The Tasks of one domain's block, regenerated from their seeds."""
        from posttrain.domains.base import sample_task

        block = self.domains[dom.id]
        return [sample_task(dom, seed, diff) for diff, seed in block.items]


def _items(difficulties: Sequence[int], per_domain: int, seed: int) -> list[tuple[int, int]]:
    start = SEED_BASE + seed * 1_000_000
    return [(difficulties[i % len(difficulties)], start + i) for i in range(per_domain)]


def build_regression_set(domains: Iterable[Any], per_domain: int, seed: int = 0,
                         difficulties: Sequence[int] | None = None, name: str = "regression",
                         version: int = 1) -> RegressionSet:
    """A deterministic regression set of ``per_domain`` items for each domain object."""
    if per_domain < 1:
        raise ConfigError(f"per_domain must be >= 1, got {per_domain}")
    blocks = {}
    for dom in domains:
        diffs = [d for d in dom.difficulties if difficulties is None or d in difficulties]
        if not diffs:
            raise ConfigError(f"domain {dom.id!r} has difficulties {list(dom.difficulties)}; "
                              f"none of {list(difficulties or [])} is among them")
        blocks[dom.id] = DomainSet(domain=dom.id, version=version, seed=seed,
                                   items=_items(diffs, per_domain, seed))
    return RegressionSet(name=name, domains=blocks)
