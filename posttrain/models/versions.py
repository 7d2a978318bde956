"""The version registry: foundation versions and post-training versions, kept apart, on SQLite.

What it is: a small SQLite database (default ``$POSTTRAIN_HOME/versions.sqlite``, with
``POSTTRAIN_HOME`` defaulting to ``~/.posttrain``) holding two kinds of version:

- **foundation**: a base model folder, registered once, identified by the hash of its weight
  files; never promoted, never rolled back, never modified by this module;
- **posttrain**: weights produced by a run on top of exactly one foundation, with lineage —
  base version, run id, config hash, the domain versions it trained on (``math.add-v1``...),
  the data position it reached, and the evaluation folder that judged it.

A *channel* (``serving`` by default) points at the post-training version in use. ``promote``
pushes a version onto the channel's history; ``rollback`` pops back to the previous one (or to
a named earlier one). Both only write the ``events`` table: no weights move, and foundation
rows are never updated.

Guarantees: state survives a restart (every call commits; tested by reopening); ids are
unique; a post-training version's base must be a registered foundation; promoting a
foundation or an unknown id raises :class:`RegistryError`. It does not copy or store weights
(a version points at a folder) and does not decide whether a version is good (the regression
gate in ``posttrain.eval`` does).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from posttrain.core.errors import ConfigError, RegistryError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\-]{0,127}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('foundation', 'posttrain')),
    path TEXT NOT NULL, weights_hash TEXT NOT NULL, created_at REAL NOT NULL,
    base_id TEXT REFERENCES versions(id), run_id TEXT, config_hash TEXT,
    domain_versions TEXT NOT NULL DEFAULT '[]', data_position TEXT NOT NULL DEFAULT '{}',
    eval_dir TEXT, notes TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, channel TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('promote', 'rollback')), version_id TEXT NOT NULL
);
"""


def default_registry_path() -> Path:
    env = os.environ.get("POSTTRAIN_REGISTRY")
    if env:
        return Path(env)
    home = Path(os.environ.get("POSTTRAIN_HOME", Path.home() / ".posttrain"))
    return home / "versions.sqlite"


def weights_hash(path: str | Path) -> str:
    """sha256 of a model folder's weight files (names and bytes) and its config.json.

    This is the identity evaluation caches are keyed by: two folders with the same weights
    hash identically whatever they are called; a retrained folder under the same name does not.
    """
    root = Path(path)
    if root.is_file():
        files = [root]
        root = root.parent
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and
                       (p.suffix in WEIGHT_SUFFIXES or p.name == "config.json"))
    else:
        raise ConfigError(f"model path {str(path)!r} does not exist")
    if not any(p.suffix in WEIGHT_SUFFIXES for p in files):
        raise ConfigError(f"model path {str(path)!r} holds no weight files ({', '.join(WEIGHT_SUFFIXES)})")
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0")
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Version:
    id: str
    kind: str
    path: str
    weights_hash: str
    created_at: float
    base_id: str | None = None
    run_id: str | None = None
    config_hash: str | None = None
    domain_versions: tuple[str, ...] = ()
    data_position: Mapping[str, Any] = field(default_factory=dict)
    eval_dir: str | None = None
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["domain_versions"] = list(self.domain_versions)
        d["data_position"] = dict(self.data_position)
        return d


def _row(r: sqlite3.Row) -> Version:
    d = dict(r)
    d["domain_versions"] = tuple(json.loads(d["domain_versions"]))
    d["data_position"] = json.loads(d["data_position"])
    return Version(**d)


class VersionRegistry:
    """Foundation and post-training versions with lineage, promotion and rollback."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_registry_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "VersionRegistry":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # registration -------------------------------------------------------
    def register_foundation(self, version_id: str, path: str | Path, notes: str = "") -> Version:
        """Record a base model folder as a foundation version (hashing its weights)."""
        return self._insert(version_id, "foundation", path, notes=notes)

    def register_posttrain(self, path: str | Path, *, base_id: str, run_id: str,
                           config_hash: str, domain_versions: list[str] | tuple[str, ...] = (),
                           data_position: Mapping[str, Any] | None = None,
                           version_id: str | None = None, eval_dir: str | None = None,
                           notes: str = "") -> Version:
        """Record weights produced by run ``run_id`` on foundation ``base_id``."""
        base = self.get(base_id)
        if base.kind != "foundation":
            raise RegistryError(f"base {base_id!r} is a {base.kind} version; a post-training "
                                "version must name the foundation it was trained from")
        if version_id is None:
            n = self._db.execute("SELECT COUNT(*) FROM versions WHERE base_id = ?", (base_id,)).fetchone()[0]
            version_id = f"{base_id}.pt{n + 1}"
        return self._insert(version_id, "posttrain", path, base_id=base_id, run_id=run_id,
                            config_hash=config_hash, domain_versions=list(domain_versions),
                            data_position=dict(data_position or {}), eval_dir=eval_dir, notes=notes)

    def _insert(self, version_id: str, kind: str, path: str | Path, **lineage: Any) -> Version:
        if not _ID.match(version_id):
            raise RegistryError(f"version id {version_id!r} must be 1-128 characters of "
                                "letters, digits, '.', '_', '+', '-'")
        if self._find(version_id) is not None:
            raise RegistryError(f"version {version_id!r} is already registered")
        digest = weights_hash(path)
        row = {"id": version_id, "kind": kind, "path": str(Path(path).resolve()),
               "weights_hash": digest, "created_at": time.time(), "base_id": None,
               "run_id": None, "config_hash": None, "domain_versions": [], "data_position": {},
               "eval_dir": None, "notes": ""}
        row.update(lineage)
        row["domain_versions"] = json.dumps(row["domain_versions"])
        row["data_position"] = json.dumps(row["data_position"], sort_keys=True)
        cols = ", ".join(row)
        self._db.execute(f"INSERT INTO versions ({cols}) VALUES ({', '.join('?' * len(row))})",
                         tuple(row.values()))
        self._db.commit()
        return self.get(version_id)

    def set_eval_dir(self, version_id: str, eval_dir: str) -> None:
        """Attach the evaluation that judged a post-training version."""
        if self.get(version_id).kind != "posttrain":
            raise RegistryError(f"{version_id!r} is a foundation; foundation rows are never modified")
        self._db.execute("UPDATE versions SET eval_dir = ? WHERE id = ?", (eval_dir, version_id))
        self._db.commit()

    # lookup -------------------------------------------------------------
    def _find(self, version_id: str) -> Version | None:
        r = self._db.execute("SELECT * FROM versions WHERE id = ?", (version_id,)).fetchone()
        return _row(r) if r else None

    def get(self, version_id: str) -> Version:
        v = self._find(version_id)
        if v is None:
            known = [r[0] for r in self._db.execute("SELECT id FROM versions ORDER BY id")]
            raise RegistryError(f"unknown version {version_id!r} (known: {', '.join(known) or 'none'})")
        return v

    def list(self, kind: str | None = None) -> list[Version]:
        q, args = "SELECT * FROM versions", ()
        if kind is not None:
            if kind not in ("foundation", "posttrain"):
                raise ConfigError(f"kind must be 'foundation' or 'posttrain', got {kind!r}")
            q, args = q + " WHERE kind = ?", (kind,)
        return [_row(r) for r in self._db.execute(q + " ORDER BY created_at, id", args)]

    def lineage(self, version_id: str) -> list[Version]:
        """The version and its ancestors, newest first (a post-training version, then its foundation)."""
        chain = [self.get(version_id)]
        while chain[-1].base_id:
            chain.append(self.get(chain[-1].base_id))
        return chain

    def verify(self, version_id: str) -> bool:
        """Whether the folder still holds the weights that were registered."""
        v = self.get(version_id)
        try:
            return weights_hash(v.path) == v.weights_hash
        except ConfigError:
            return False

    # promotion ----------------------------------------------------------
    def history(self, channel: str = "serving") -> list[str]:
        """The channel's promotion stack, oldest first; the last entry is current."""
        stack: list[str] = []
        for action, vid in self._db.execute(
                "SELECT action, version_id FROM events WHERE channel = ? ORDER BY seq", (channel,)):
            if action == "promote":
                stack.append(vid)
            else:
                while stack and stack[-1] != vid:
                    stack.pop()
        return stack

    def current(self, channel: str = "serving") -> Version | None:
        stack = self.history(channel)
        return self.get(stack[-1]) if stack else None

    def promote(self, version_id: str, channel: str = "serving") -> Version:
        v = self.get(version_id)
        if v.kind != "posttrain":
            raise RegistryError(f"{version_id!r} is a foundation version; only post-training "
                                "versions are promoted (the foundation stays fixed)")
        self._event(channel, "promote", version_id)
        return v

    def rollback(self, channel: str = "serving", to: str | None = None) -> Version:
        """Make an earlier promoted version current again (the previous one by default)."""
        stack = self.history(channel)
        if len(stack) < 2:
            raise RegistryError(f"channel {channel!r} has no earlier post-training version "
                                f"to roll back to (history: {stack or 'empty'})")
        target = to if to is not None else stack[-2]
        if target not in stack[:-1]:
            raise RegistryError(f"{target!r} was not promoted before the current version on "
                                f"{channel!r}; earlier versions: {', '.join(stack[:-1])}")
        self._event(channel, "rollback", target)
        return self.get(target)

    def _event(self, channel: str, action: str, version_id: str) -> None:
        self._db.execute("INSERT INTO events (ts, channel, action, version_id) VALUES (?, ?, ?, ?)",
                         (time.time(), channel, action, version_id))
        self._db.commit()
