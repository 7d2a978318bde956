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
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from posttrain.core.errors import InferenceError
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
    # One seed per prompt (overrides ``seed``), for backends that declare
    # ``per_prompt_seeds = True``: each sample row draws from a generator of its own, seeded by
    # (its prompt's seed, its sample index), so episodes at different turns share one call.
    prompt_seeds: tuple[int, ...] | None = None
    # One token cap per prompt (each <= ``max_new_tokens``), for backends that declare
    # ``per_prompt_budgets = True``: an episode near its token budget stops at its own cap
    # while the others of the call go on.
    prompt_max_new_tokens: tuple[int, ...] | None = None


# A backend that declares ``streams_prompts = True`` takes ``generate(prompts, params,
# on_prompt=...)`` and calls ``on_prompt(i, completions)`` once per prompt, from the calling
# thread, as soon as all of prompt ``i``'s rows have ended — so the episode engine can start a
# short action's env step while the call is still decoding the longer ones.
PromptDone = Callable[[int, list[Completion]], None]


@runtime_checkable
class InferenceBackend(Protocol):
    policy_version: int

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]: ...

    def load_weights(self, version: int, weights: Any) -> None: ...


def check_sampling_params(params: SamplingParams) -> None:
    """Raise ``InferenceError`` naming every out-of-range field of ``params`` (shared by backends)."""
    problems = []
    if params.n < 1:
        problems.append(f"n={params.n} (must be >= 1)")
    if params.max_new_tokens < 0:
        problems.append(f"max_new_tokens={params.max_new_tokens} (must be >= 0)")
    if params.temperature < 0:
        problems.append(f"temperature={params.temperature} (must be >= 0)")
    caps = params.prompt_max_new_tokens
    if caps is not None and any(c < 0 or c > params.max_new_tokens for c in caps):
        problems.append(f"prompt_max_new_tokens={caps} (each must be in [0, max_new_tokens])")
    if not 0.0 < params.top_p <= 1.0:
        problems.append(f"top_p={params.top_p} (must be in (0, 1])")
    if problems:
        raise InferenceError("bad sampling params: " + ", ".join(problems))


def render_chat(tokenizer: Any, messages: Sequence[Message],
                tools: Sequence[Mapping[str, Any]] = ()) -> list[int]:
    """Prompt ids of one chat prompt through the tokenizer's chat template, generation prompt appended.

    The one rendering every token-level backend uses, so the same prompt gets the same ids
    under each (the vllm backend sends these ids, not the messages, to its engine).
    """
    try:
        text = tokenizer.apply_chat_template(
            [dict(m) for m in messages], tools=[dict(t) for t in tools] or None,
            add_generation_prompt=True, tokenize=False)
    except Exception as exc:  # jinja errors are not typed; name the boundary instead
        raise InferenceError(f"chat template failed: {exc}") from exc
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
