"""Context management for long multi-turn episodes: what history the policy sees next turn.

What it is: :class:`EpisodeContext` keeps one episode's chat history (the task's prompt, then
each assistant turn and the env's reply messages) and compacts it when it outgrows
:class:`ContextConfig.max_context_chars`:

1. **truncate old tool output**: every ``tool`` message but the last ``keep_recent_tool_outputs``
   is cut to ``old_tool_output_chars`` (head kept, the cut said);
2. **summary**: if still too long, the oldest exchanges after the prompt are dropped (the
   latest exchange is always kept) and replaced by one mechanical summary message — which
   tools were called how often, how many failed, how many turns were dropped — merged with
   any earlier summary (no model call: cheap, deterministic and impossible to prompt-inject);
3. **working memory**: the policy may keep notes in ``<memory>...</memory>`` in its turns;
   the latest block is re-inserted after the summary as an explicit ``Working memory`` message
   so notes survive compaction.

Guarantees: compaction rewrites the *stored* history, so later prompts extend the compacted
one (the trainer starts one new segment at a compaction, not one per turn); the prompt
messages of the task are never dropped; with ``max_context_chars=None`` nothing is ever
changed (the prompt of turn k+1 always extends turn k's prompt plus its action).

What it does not do: count tokens (characters are the budget: exact for the character-level
tiny model, conservative for sub-word tokenizers), or summarise with a model.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from posttrain.core.images import content_text

_MEMORY = re.compile(r"<memory>(.*?)</memory>", re.S)
SUMMARY_TAG = "[context summary]"
MEMORY_TAG = "[working memory]"


@dataclass(frozen=True)
class ContextConfig:
    """When and how to compact an episode's history (characters of message content)."""

    max_context_chars: int | None = 16_000
    keep_recent_tool_outputs: int = 2
    old_tool_output_chars: int = 200
    summary: bool = True
    working_memory: bool = True


def _size(messages: Sequence[Mapping[str, Any]]) -> int:
    # Text only: an image part's base64 is not context the character budget is about.
    return sum(len(content_text(m.get("content"))) for m in messages)


class EpisodeContext:
    """One episode's history with compaction (see the module docstring)."""

    def __init__(self, prompt: Sequence[Mapping[str, Any]], config: ContextConfig | None = None):
        self.config = config or ContextConfig()
        self.prompt = [dict(m) for m in prompt]
        self.history: list[dict[str, Any]] = []  # messages after the prompt
        self.summary: dict[str, Any] = {"turns": 0, "calls": Counter(), "errors": 0}
        self.memory: str | None = None
        self.compactions = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.prompt + self.history

    def add_turn(self, assistant_text: str, replies: Sequence[Mapping[str, Any]]) -> None:
        """Append one assistant turn (raw text, as sampled) and the env's reply messages."""
        self.history.append({"role": "assistant", "content": assistant_text})
        self.history.extend(dict(m) for m in replies)
        if self.config.working_memory:
            notes = _MEMORY.findall(assistant_text or "")
            if notes:
                self.memory = notes[-1].strip()

    def view(self) -> tuple[list[dict[str, Any]], bool]:
        """The messages for the next turn and whether this call compacted the history."""
        limit = self.config.max_context_chars
        if limit is None or _size(self.messages) <= limit:
            return self.messages, False
        self._truncate_tool_outputs()
        if self.config.summary and _size(self.messages) > limit:
            self._summarise(limit)
        self.compactions += 1
        return self.messages, True

    # ------------------------------------------------------------------ compaction steps
    def _truncate_tool_outputs(self) -> None:
        cfg = self.config
        tool_idx = [i for i, m in enumerate(self.history) if m.get("role") == "tool"]
        old = tool_idx[:-cfg.keep_recent_tool_outputs] if cfg.keep_recent_tool_outputs else tool_idx
        for i in old:
            if not isinstance(self.history[i].get("content") or "", str):
                continue  # a message with image parts is kept whole
            text = str(self.history[i].get("content") or "")
            if len(text) > cfg.old_tool_output_chars:
                cut = len(text) - cfg.old_tool_output_chars
                self.history[i] = {**self.history[i],
                                   "content": f"{text[:cfg.old_tool_output_chars]}... [{cut} characters cut]"}

    def _summarise(self, limit: int) -> None:
        body = [m for m in self.history if not _is_note(m)]
        exchanges = _split_exchanges(body)
        while len(exchanges) > 1 and _size(self.prompt) + sum(map(_size, exchanges)) + 400 > limit:
            self._absorb(exchanges.pop(0))
        notes = []
        if self.summary["turns"]:
            notes.append({"role": "user", "content": self._summary_text()})
        if self.config.working_memory and self.memory:
            notes.append({"role": "user", "content": f"{MEMORY_TAG}\n{self.memory}"})
        self.history = notes + [m for ex in exchanges for m in ex]

    def _absorb(self, exchange: list[dict[str, Any]]) -> None:
        self.summary["turns"] += 1
        for m in exchange:
            if m.get("role") == "tool":
                self.summary["calls"][str(m.get("name") or "tool")] += 1
                if str(m.get("content") or "").startswith("error"):
                    self.summary["errors"] += 1

    def _summary_text(self) -> str:
        s = self.summary
        calls = ", ".join(f"{k} x{v}" for k, v in sorted(s["calls"].items())) or "none"
        return (f"{SUMMARY_TAG} {s['turns']} earlier turn(s) were removed to fit the context. "
                f"Tool calls in them: {calls}; {s['errors']} returned an error.")

    def to_json(self) -> str:
        return json.dumps(self.messages)


def _is_note(m: Mapping[str, Any]) -> bool:
    text = str(m.get("content") or "")
    return m.get("role") == "user" and (text.startswith(SUMMARY_TAG) or text.startswith(MEMORY_TAG))


def _split_exchanges(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Groups of one assistant message and the replies that follow it."""
    out: list[list[dict[str, Any]]] = []
    for m in messages:
        if m.get("role") == "assistant" or not out:
            out.append([m])
        else:
            out[-1].append(m)
    return out
