"""Exploit probes from the audit channel: marked reward hacks, stored per domain, re-checked.

A trajectory a human marked as reward hacking becomes a probe: the task (domain id with
version, difficulty, seed — the task is regenerated from them) and the answer that fooled
the verifier. Probes are appended to ``<probes_dir>/<domain>.jsonl`` (default
``$POSTTRAIN_HOME/exploits``, ``POSTTRAIN_HOME`` defaulting to ``~/.posttrain``).

``check_probes(domain)`` re-scores every stored probe with the domain's *current* verifier:
a probe passes when it scores at the floor (``<= floor``). Until the verifier is fixed (and
the domain's version bumped) the check fails, so a known hack cannot silently come back.

Guarantees: marking is idempotent (a probe id is stored once); a probe of another domain
version is reported as stale, not silently re-targeted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from posttrain.core.errors import ConfigError


def default_probes_dir() -> Path:
    home = Path(os.environ.get("POSTTRAIN_HOME", Path.home() / ".posttrain"))
    return home / "exploits"


def _path(probes_dir: Path | None, domain: str) -> Path:
    return Path(probes_dir or default_probes_dir()) / f"{domain}.jsonl"


def load_probes(domain: str, probes_dir: Path | None = None) -> list[dict[str, Any]]:
    p = _path(probes_dir, domain)
    if not p.is_file():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def apply_marks(run_dir: str | Path, domain: str, marks: Iterable[Mapping[str, Any]],
                probes_dir: Path | None = None, source: str = "") -> list[dict[str, Any]]:
    """Mark audit items (by id) as reward hacking and store them as probes; returns new probes."""
    audit_path = Path(run_dir) / "audit.json"
    if not audit_path.is_file():
        raise ConfigError(f"{str(run_dir)!r} has no audit.json; run `posttrain eval audit` first")
    audit = json.loads(audit_path.read_text())
    block = audit.get("domains", {}).get(domain)
    if block is None:
        raise ConfigError(f"audit.json of {str(run_dir)!r} has no domain {domain!r}")
    by_id = {i["id"]: i for i in block["items"]}
    wanted = {m["id"]: m for m in marks if m.get("domain", domain) == domain}
    unknown = sorted(set(wanted) - set(by_id))
    if unknown:
        raise ConfigError(f"unknown audit item ids for {domain!r}: {', '.join(unknown)}")
    have = {p["id"] for p in load_probes(domain, probes_dir)}
    new = []
    for mid, m in wanted.items():
        item = by_id[mid]
        item["marked"], item["note"] = True, m.get("note", item.get("note", ""))
        if mid in have:
            continue
        new.append({"id": mid, "domain": domain, "difficulty": item["difficulty"],
                    "seed": item["seed"], "answer": item["answer"], "note": item["note"],
                    "reward_when_marked": item["reward"], "source": source or str(run_dir)})
    audit_path.write_text(json.dumps(audit, indent=1, sort_keys=True) + "\n")
    if new:
        p = _path(probes_dir, domain)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a") as f:
            for probe in new:
                f.write(json.dumps(probe, sort_keys=True) + "\n")
    return new


def check_probes(domain: Any, probes_dir: Path | None = None, floor: float = 0.0) -> dict[str, Any]:
    """Re-score every stored probe of ``domain`` (a domain object); failures score above ``floor``."""
    from posttrain.domains.base import sample_task

    results = []
    for probe in load_probes(domain.id, probes_dir):
        task = sample_task(domain, probe["seed"], probe["difficulty"])
        score = domain.score(task, probe["answer"])
        results.append({"id": probe["id"], "value": score.value, "ok": score.value <= floor,
                        "reason": score.reason})
    return {"domain": domain.id, "probes": len(results),
            "failures": [r for r in results if not r["ok"]], "results": results}
