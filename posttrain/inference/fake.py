"""A scripted, deterministic inference backend for unit tests of the layers above.

What it is: an :class:`~posttrain.inference.base.InferenceBackend` that answers from a
script instead of a model, so rollout, scheduler, trainer and CLI tests can run in
milliseconds with known outputs. The script is one of:

- a callable ``(messages, sample_index) -> str``;
- a list of replies, handed out in order across all calls (cycling when exhausted);
- a dict from the content of the last user message to a reply, or to a list of replies
  indexed by ``sample_index`` (cycling); an unknown key raises ``InferenceError``.

Token ids are the UTF-8 bytes of the text, every token's logprob is ``logprob`` (default
-0.5), prompt ids are the bytes of a plain rendering of the messages. ``stop`` strings and
``max_new_tokens`` apply to those byte tokens exactly as in the real backends: a stop
string is cut from the text and the ids keep the bytes up to the end of the stop string
(``finish_reason="stop"``); a reply longer than ``max_new_tokens`` bytes is truncated
(``"length"``). ``load_weights`` records the weights and sets ``policy_version``.

Guarantees: the same script and the same calls give the same Completions, independent of
``params.seed`` and ``temperature``. ``calls`` records every ``(prompts, params)`` received.

What it does not do: model anything — its logprobs carry no information, so it cannot test
learning; use the HF backend with the tiny model for that.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from posttrain.core.errors import InferenceError
from posttrain.core.types import Completion, Message

from .base import SamplingParams

Script = Callable[[Sequence[Message], int], str] | Sequence[str] | Mapping[str, Any]


class FakeBackend:
    """Scripted backend (see the module docstring)."""

    vision = True  # reads image parts (posttrain/inference/vision.py)

    def __init__(self, script: Script, *, logprob: float = -0.5, policy_version: int = 0):
        if not (callable(script) or isinstance(script, (list, tuple, Mapping))):
            raise InferenceError(f"FakeBackend script must be a callable, a list or a dict, "
                                 f"not {type(script).__name__}")
        if isinstance(script, (list, tuple)) and not script:
            raise InferenceError("FakeBackend script list is empty")
        self.script = script
        self.logprob = float(logprob)
        self.policy_version = policy_version
        self.weights: Any = None
        self.calls: list[tuple[list[list[Message]], SamplingParams]] = []
        self._next = 0  # position in a list script

    def load_weights(self, version: int, weights: Any) -> None:
        self.weights = weights
        self.policy_version = int(version)

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]:
        if params.n < 1:
            raise InferenceError(f"bad sampling params: n={params.n} (must be >= 1)")
        self.calls.append(([list(p) for p in prompts], params))
        return [[self._complete(p, j, params) for j in range(params.n)] for p in prompts]

    def _reply(self, messages: Sequence[Message], j: int) -> str:
        if callable(self.script):
            reply = self.script(messages, j)
        elif isinstance(self.script, Mapping):
            key = _last_user(messages)
            if key not in self.script:
                raise InferenceError(f"FakeBackend has no reply for {key!r}; "
                                     f"known: {sorted(self.script)[:5]}")
            reply = self.script[key]
            if isinstance(reply, (list, tuple)):
                reply = reply[j % len(reply)]
        else:
            reply = self.script[self._next % len(self.script)]
            self._next += 1
        if not isinstance(reply, str):
            raise InferenceError(f"FakeBackend script returned {type(reply).__name__}, not str")
        return reply

    def _complete(self, messages: Sequence[Message], j: int, params: SamplingParams) -> Completion:
        text = self._reply(messages, j)
        data = text.encode("utf-8")
        reason = "stop"
        cut = [(i, s) for i, s in ((text.find(s), s) for s in params.stop if s) if i >= 0]
        if cut:
            i, s = min(cut)
            text = text[:i]
            data = (text + s).encode("utf-8")
        if len(data) > params.max_new_tokens:
            data = data[:params.max_new_tokens]
            text = data.decode("utf-8", errors="ignore")
            reason = "length"
        prompt = "".join(f"{m.get('role', '')}: {_content(m)}\n" for m in messages)
        return Completion(text=text, token_ids_T=tuple(data), logprobs_T=(self.logprob,) * len(data),
                          finish_reason=reason, policy_version=self.policy_version,
                          prompt_token_ids=tuple(prompt.encode("utf-8")))


def _content(message: Message) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))


def _last_user(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return _content(m)
    return ""
