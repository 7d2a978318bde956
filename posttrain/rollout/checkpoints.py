"""Episode checkpoints: an engine call saves its episodes every few rounds and resumes there.

What it is: with ``limits.checkpoint_every = k`` the engine, after every k-th round, saves the
state of *every* episode of the call in one blob: a finished episode's trajectory, a live
one's turns, context, token count and its env's state (``env.checkpoint_state()``, for a
sandboxed env the conversation's tool records plus the files of its sandbox), and which were
not yet admitted. A later call with the same key — the scheduler's replay of a group whose
sandbox broke, or the same job re-run after the run was killed — restores that state and
goes on from the saved round instead of from the first turn.

Why the whole call, not each episode on its own: batch composition decides what each policy
call returns. Restoring every episode of the call at the same round rebuilds exactly the
batches the interrupted call would have sent next, so a job resumed after ``kill -9`` samples
what the uninterrupted job sampled (the deterministic async schedule keeps its bit-exact
resume).

Guarantees: a checkpoint is written only at a round boundary after every ended episode was
verified, and only when every live env can save itself (else the call is not checkpointed);
a blob that fails to restore is discarded and the call starts from the beginning (never half
restored: every env is rebuilt); a call that returns drops its key. Stores: in memory (one
scheduler call's retries) or the run's SQLite work store
(:class:`posttrain.scheduler.store.WorkStoreCheckpoints`, shared by
processes, survives a killed run; it lives in the scheduler layer, beside the store). Blobs are pickles written and read by posttrain itself,
never by the policy.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from concurrent.futures import Executor
from typing import Any, Protocol, Sequence


class CheckpointStore(Protocol):
    def save(self, key: str, blob: bytes) -> None: ...

    def load(self, key: str) -> bytes | None: ...

    def drop(self, key: str) -> None: ...


class MemoryCheckpoints:
    """Checkpoints in this process (thread-safe)."""

    def __init__(self) -> None:
        self._blobs: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def save(self, key: str, blob: bytes) -> None:
        with self._lock:
            self._blobs[key] = blob

    def load(self, key: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(key)

    def drop(self, key: str) -> None:
        with self._lock:
            self._blobs.pop(key, None)

    def __len__(self) -> int:
        return len(self._blobs)


def call_key(tasks: Sequence[Any], seed: int | None, n: int) -> str:
    """The key of one engine call: its tasks, samples per task and seed."""
    h = hashlib.blake2b(digest_size=12)
    for t in tasks:
        h.update(t.key.encode() + b"\0")
    return f"{h.hexdigest()}-n{n}-s{seed}"


def dumps(state: dict[str, Any]) -> bytes:
    return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes) -> dict[str, Any]:
    return pickle.loads(blob)  # noqa: S301 - written by posttrain (see the module docstring)


def subset(blob: bytes, task_indices: Sequence[int], n: int) -> bytes:
    """The checkpoint of a call restricted to some of its tasks (a retry of failed groups):
    their episodes, in order, as a call over just those tasks would hold them."""
    state = loads(blob)
    eps = state["episodes"]
    state["episodes"] = [eps[i * n + j] for i in task_indices for j in range(n)]
    return dumps(state)


class CallCheckpointer:
    """Saves a call's episodes every ``every`` rounds and takes them up again (see
    :mod:`posttrain.rollout.checkpoints`)."""

    def __init__(self, store: CheckpointStore, key: str, every: int):
        self.store, self.key, self.every = store, key, every

    def save(self, eps: list[Any], rounds: int, pool: Executor) -> None:
        if not all(ep.checkpointable for ep in eps):
            return  # an env that cannot save itself: this call is not checkpointed
        try:
            entries = list(pool.map(lambda ep: ep.saved(), eps))  # sandbox exports overlap
            self.store.save(self.key, dumps({"round": rounds, "episodes": entries}))
        except Exception:  # a checkpoint that cannot be written costs the resume, not the call
            pass

    def resume(self, eps: list[Any]) -> tuple[int, list[Any], list[Any]] | None:
        """``(round, live, waiting)`` restored into ``eps``, or None (nothing usable saved; a
        blob that fails to restore is dropped, and the caller rebuilds every env)."""
        blob = self.store.load(self.key)
        if blob is None:
            return None
        try:
            state = loads(blob)
            entries = state["episodes"]
            if len(entries) != len(eps):
                raise ValueError(f"checkpoint of {len(entries)} episodes for {len(eps)}")
            for ep, entry in zip(eps, entries):
                ep.restore(entry)
        except Exception:  # never half restored: the call starts over on new envs
            self.store.drop(self.key)
            for ep in eps:
                ep._close()
            raise RestoreFailed()
        kinds = [e[0] for e in entries]
        return (int(state["round"]), [ep for ep, k in zip(eps, kinds) if k == "live"],
                [ep for ep, k in zip(eps, kinds) if k == "waiting"])


class RestoreFailed(Exception):
    """A saved state that could not be taken up (dropped; the call starts over)."""
