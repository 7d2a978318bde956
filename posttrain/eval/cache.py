"""A generation cache in front of any InferenceBackend, keyed by weights, prompt and sampling.

The key is ``sha256(weights_id, prompt messages, sampling params)``: ``weights_id`` is the hash
of the weight files (:func:`posttrain.models.versions.weights_hash`) for a local folder, or an
explicit version string for a served model — never the model's name alone, so a retrained
folder under an old name never serves stale generations.

Guarantees:
- a hit returns exactly the completions stored (text, token ids, logprobs, finish reason);
- misses of one ``generate`` call go to the wrapped backend in one batch;
- ``load_weights`` on the wrapper disables the cache (the new weights have no known hash);
- the store is SQLite on disk, so a second evaluation process reuses the first one's work.

It does not deduplicate identical prompts inside one call (the backend shares their prefill).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Sequence

from posttrain.core.serde import from_dict, to_dict
from posttrain.core.types import Completion, Message
from posttrain.inference.base import InferenceBackend, SamplingParams


def cache_key(weights_id: str, prompt: Sequence[Message], params: SamplingParams) -> str:
    blob = json.dumps({"weights": weights_id, "prompt": [dict(m) for m in prompt],
                       "params": dataclasses.asdict(params)}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class GenerationCache:
    """SQLite map from :func:`cache_key` to a list of completions."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS gen (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> list[Completion] | None:
        row = self._db.execute("SELECT value FROM gen WHERE key = ?", (key,)).fetchone()
        return None if row is None else [from_dict(Completion, c) for c in json.loads(row[0])]

    def put(self, key: str, completions: Sequence[Completion]) -> None:
        value = json.dumps([to_dict(c) for c in completions])
        self._db.execute("INSERT OR REPLACE INTO gen (key, value) VALUES (?, ?)", (key, value))
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM gen").fetchone()[0])

    def close(self) -> None:
        self._db.close()


class CachingBackend:
    """An InferenceBackend that answers repeated (weights, prompt, params) from the cache."""

    def __init__(self, inner: InferenceBackend, cache: GenerationCache, weights_id: str | None):
        self.inner = inner
        self.cache = cache
        self.weights_id = weights_id
        self.hits = 0
        self.misses = 0

    @property
    def policy_version(self) -> int:
        return int(getattr(self.inner, "policy_version", 0))

    def generate(self, prompts: Sequence[Sequence[Message]], params: SamplingParams
                 ) -> list[list[Completion]]:
        if self.weights_id is None:
            self.misses += len(prompts)
            return self.inner.generate(prompts, params)
        keys = [cache_key(self.weights_id, p, params) for p in prompts]
        out: list[list[Completion] | None] = [self.cache.get(k) for k in keys]
        todo = [i for i, v in enumerate(out) if v is None]
        self.hits += len(prompts) - len(todo)
        self.misses += len(todo)
        if todo:
            fresh = self.inner.generate([prompts[i] for i in todo], params)
            for i, comps in zip(todo, fresh):
                out[i] = list(comps)
                if not any(c.finish_reason == "error" for c in comps):
                    self.cache.put(keys[i], comps)
        return [list(v or []) for v in out]

    def load_weights(self, version: int, weights: Any) -> None:
        self.weights_id = None  # new weights: no hash is known, so nothing may be reused
        self.inner.load_weights(version, weights)
