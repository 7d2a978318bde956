"""A JSONL log of every answered generation: what an external harness's calls sampled, token by token.

What it is: when ``posttrain serve --record FILE`` is given, each ``/v1/chat/completions``
or ``/v1/completions`` answer appends one JSON line: time, endpoint, the version that
answered and why (``model``, ``route:KEY``, ``default``), the request's ``metadata`` (a
harness puts its episode id and domain there), and per choice the prompt token ids, sampled
token ids, behaviour logprobs, finish reason, policy version and text. So an agent harness
can be the rollout policy while posttrain keeps the token-level record a trainer needs,
whatever the harness itself keeps.

Guarantees: one line per answered request, written whole under a lock and flushed before
the answer is sent (a line is never interleaved with another; a crash loses no answered
request). What it does not do: rotate the file, or record refused requests.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from posttrain.core.types import Completion


class Recorder:
    """Appends one JSON line per answered request to ``path`` (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def record(self, endpoint: str, model: str, route: str, metadata: Mapping[str, Any] | None,
               completions: Sequence[Completion]) -> None:
        line = {"ts": time.time(), "endpoint": endpoint, "model": model, "route": route,
                "metadata": dict(metadata or {}),
                "choices": [{"prompt_token_ids": list(c.prompt_token_ids),
                             "token_ids": list(c.token_ids_T), "logprobs": list(c.logprobs_T),
                             "finish_reason": c.finish_reason, "policy_version": c.policy_version,
                             "text": c.text} for c in completions]}
        data = json.dumps(line) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(data)
            f.flush()


def read_records(path: str | Path) -> list[dict]:
    """Every recorded line of ``path``, in order."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
