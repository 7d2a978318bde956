"""The InferenceBackend protocol and sampling parameters.

``generate(prompts, params)`` takes P chat prompts (each a sequence of message dicts, as in
``Observation.messages``) and returns, for each prompt, ``params.n`` Completions carrying
token ids, the behaviour policy's per-token logprobs, the finish reason and the policy
version that sampled them. ``load_weights(version, weights)`` installs new weights and bumps
``policy_version``; any cache keyed on weights must be invalidated by it (a stale prefix
cache after a weight update is a known correctness bug elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from posttrain.core.types import Completion, Message


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 16
    stop: tuple[str, ...] = ()
    seed: int | None = None
    greedy: bool = False
    tools: tuple[Mapping[str, Any], ...] = field(default=())
    # One tool list per prompt (overrides ``tools``), for backends that declare
    # ``per_prompt_tools = True``: episodes of different domains share one call.
    prompt_tools: tuple[tuple[Mapping[str, Any], ...], ...] | None = None


@runtime_checkable
class InferenceBackend(Protocol):
    policy_version: int

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]: ...

    def load_weights(self, version: int, weights: Any) -> None: ...
