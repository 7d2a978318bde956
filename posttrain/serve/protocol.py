"""The OpenAI request schema the server accepts, its checks, and the response shapes it builds.

What it is: pydantic models of ``/v1/chat/completions`` and ``/v1/completions`` requests —
``n``, ``temperature``, ``top_p``, ``max_tokens`` (``max_completion_tokens``), ``stop``,
``seed``, ``logprobs``/``top_logprobs`` — plus vLLM's ``return_token_ids`` and
``return_tokens_as_token_ids`` and OpenAI's ``metadata`` (which carries the route keys), and
the functions that turn backend Completions into OpenAI-shaped JSON.

Response extensions (vLLM's names where vLLM has them, so one client works against both):

- ``return_token_ids: true`` -> each choice has ``token_ids`` (the sampled ids); chat answers
  carry ``prompt_token_ids`` on the response, completion answers on each choice (as vLLM);
- ``return_tokens_as_token_ids: true`` -> every logprob ``token`` is ``"token_id:N"``;
- always: ``policy_version`` (the serving backend's weight version) on the response and each
  choice, and ``model`` names the version that answered (after routing).

Logprobs are the backend's behaviour logprobs (temperature-scaled, before top-p; greedy:
the raw distribution). Unknown fields are ignored, as OpenAI-compatible servers do; fields
this server cannot honour (``stream``, penalties, ``logit_bias``, ``echo``, ``suffix``) are
refused with HTTP 400 rather than silently ignored. What it does not do: streaming, tool-call
parsing (the assistant's text is returned as ``content``; posttrain's rollout parses calls).
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from posttrain.core.types import Completion
from posttrain.inference.base import SamplingParams

MAX_N = 256
MAX_TOP_LOGPROBS = 20
DEFAULT_MAX_TOKENS = 1024  # when the model's context length is unknown


class ApiError(Exception):
    """An HTTP error with OpenAI's ``{"error": {...}}`` body."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param = status, message, type, param

    def body(self) -> dict:
        return error_body(self.message, self.type, self.param, self.status)


def error_body(message: str, type: str, param: str | None, code: int) -> dict:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls, tool_call_id pass through
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[dict[str, Any]], None] = None


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    n: int = Field(1, ge=1, le=MAX_N)
    temperature: float = Field(1.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=0)
    stop: Union[str, list[str], None] = None
    seed: int | None = None
    stream: bool = False
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logit_bias: dict[str, float] | None = None
    return_token_ids: bool = False
    return_tokens_as_token_ids: bool = False
    metadata: dict[str, Any] | None = None

    def refuse_unsupported(self) -> None:
        unsupported = {"stream": self.stream, "presence_penalty": self.presence_penalty,
                       "frequency_penalty": self.frequency_penalty, "logit_bias": self.logit_bias}
        for name, value in unsupported.items():
            if value:
                raise ApiError(400, f"{name}={value!r} is not supported by posttrain serve", param=name)

    def sampling(self, max_tokens: int | None, default_max: int | None) -> SamplingParams:
        """The backend's params; no ``max_tokens``: up to the model's context (as OpenAI)."""
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or ())
        limit = max_tokens if max_tokens is not None else (default_max or DEFAULT_MAX_TOKENS)
        return SamplingParams(n=self.n, temperature=self.temperature, top_p=self.top_p,
                              max_new_tokens=limit, stop=tuple(stops), seed=self.seed,
                              greedy=self.temperature == 0.0)


class ChatRequest(_Request):
    messages: list[ChatMessage] = Field(min_length=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)
    max_completion_tokens: int | None = Field(None, ge=0)
    tools: list[dict[str, Any]] | None = None

    def message_dicts(self) -> list[dict[str, Any]]:
        out = []
        for m in self.messages:
            d = m.model_dump(exclude_none=True)
            d.setdefault("content", "")  # an assistant turn with only tool calls
            out.append(d)
        return out


class CompletionRequest(_Request):
    prompt: Union[str, list[int], list[Union[str, list[int]]]]  # one prompt, or a list of prompts
    logprobs: int | None = Field(None, ge=0, le=MAX_TOP_LOGPROBS)
    echo: bool = False
    suffix: str | None = None
    add_special_tokens: bool = True

    def refuse_unsupported(self) -> None:
        super().refuse_unsupported()
        for name in ("echo", "suffix"):
            if getattr(self, name):
                raise ApiError(400, f"{name} is not supported by posttrain serve", param=name)


def token_text(served: Any, token_id: int, as_ids: bool) -> str:
    return f"token_id:{token_id}" if as_ids else served.token_text(token_id)


def _chat_logprobs(served: Any, c: Completion, top: list, as_ids: bool) -> dict:
    content = []
    for i, (tid, lp) in enumerate(zip(c.token_ids_T, c.logprobs_T)):
        tok = token_text(served, tid, as_ids)
        alts = [{"token": (t := token_text(served, a, as_ids)), "logprob": alp,
                 "bytes": list(t.encode())} for a, alp in (top[i] if top else ())]
        content.append({"token": tok, "logprob": lp, "bytes": list(tok.encode()), "top_logprobs": alts})
    return {"content": content}


def _completion_logprobs(served: Any, c: Completion, top: list, as_ids: bool) -> dict:
    tokens = [token_text(served, t, as_ids) for t in c.token_ids_T]
    offsets, at = [], 0
    for tok in tokens:
        offsets.append(at)
        at += len(tok)
    tops = []
    for i, (tok, lp) in enumerate(zip(tokens, c.logprobs_T)):
        entry = {token_text(served, a, as_ids): alp for a, alp in (top[i] if top else ())}
        entry[tok] = lp  # the sampled token is always listed (OpenAI: up to k + 1), behaviour logprob
        tops.append(entry)
    return {"tokens": tokens, "token_logprobs": list(c.logprobs_T), "top_logprobs": tops,
            "text_offset": offsets}


def chat_response(served: Any, req: ChatRequest, group: list[Completion], tops: list) -> dict:
    choices = []
    for i, c in enumerate(group):
        choice = {"index": i, "message": {"role": "assistant", "content": c.text},
                  "finish_reason": c.finish_reason, "policy_version": c.policy_version,
                  "logprobs": (_chat_logprobs(served, c, tops[i], req.return_tokens_as_token_ids)
                               if req.logprobs else None)}
        if req.return_token_ids:
            choice["token_ids"] = list(c.token_ids_T)
        choices.append(choice)
    answer = _envelope("chatcmpl", "chat.completion", served, group, choices)
    if req.return_token_ids:
        answer["prompt_token_ids"] = list(group[0].prompt_token_ids) if group else []
    return answer


def completion_response(served: Any, req: CompletionRequest, groups: list[list[Completion]],
                        tops: list[list]) -> dict:
    choices = []
    flat = [c for g in groups for c in g]
    for i, c in enumerate(flat):
        choice = {"index": i, "text": c.text, "finish_reason": c.finish_reason,
                  "policy_version": c.policy_version,
                  "logprobs": (_completion_logprobs(served, c, tops[i], req.return_tokens_as_token_ids)
                               if req.logprobs is not None else None)}
        if req.return_token_ids:
            choice["token_ids"] = list(c.token_ids_T)
            choice["prompt_token_ids"] = list(c.prompt_token_ids)
        choices.append(choice)
    return _envelope("cmpl", "text_completion", served, flat, choices, prompts=[g[0] for g in groups if g])


def _envelope(prefix: str, obj: str, served: Any, flat: list[Completion], choices: list,
              prompts: list[Completion] | None = None) -> dict:
    prompt_tokens = sum(len(c.prompt_token_ids) for c in (prompts if prompts is not None else flat[:1]))
    completion_tokens = sum(len(c.token_ids_T) for c in flat)
    return {"id": f"{prefix}-{uuid.uuid4().hex}", "object": obj, "created": int(time.time()),
            "model": served.name, "choices": choices,
            # the version that sampled these choices (a weight update may land after them)
            "policy_version": flat[0].policy_version if flat else served.policy_version,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}
