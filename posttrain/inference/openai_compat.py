"""A backend over any OpenAI-compatible ``/v1/chat/completions`` server (vLLM, SGLang, llama.cpp,
``posttrain serve``).

What it is: an :class:`~posttrain.inference.base.InferenceBackend` that sends one request
per prompt (``n`` samples each, requests in parallel threads so the server can batch them)
with the standard library's ``urllib`` — no client package. It always asks for the sampled
tokens' ``logprobs``.

Token ids: the OpenAI schema has none. When ``request_token_ids`` is true (default) the
request also carries vLLM's ``return_token_ids`` and ``return_tokens_as_token_ids`` flags;
ids are then read from ``logprobs.content[].token`` strings of the form ``"token_id:N"``,
else from ``choices[].token_ids`` (when it has one id per logprob), and prompt ids from
``prompt_token_ids``. A server that gives none of these yields Completions with **empty**
``token_ids_T`` *and* ``logprobs_T`` (a Completion holds one logprob per id), and empty
``prompt_token_ids``: usable for evaluation, not for token-level training. Set
``request_token_ids=False`` for servers that reject unknown fields. ``posttrain serve``
(:mod:`posttrain.serve`) answers these fields as vLLM does; against it the Completions equal
the in-process HF backend's for the same seed (tested in ``tests/serve``). Route keys for a
multi-version server go in ``extra_body={"metadata": {"domain": ...}}``.

Policy version: the Completions carry this backend's ``policy_version`` (what the trainer set
with ``load_weights``). With ``server_versions=True`` a choice's own integer ``policy_version``
(``posttrain serve`` reports the weight version of the engine that sampled it) is recorded
instead where the server gives one — for a harness whose server is updated behind its back.

Logprob semantics are the server's: vLLM returns logprobs of the unmodified model
distribution unless started with ``--logprobs-mode processed_logprobs`` (which also applies
top-p). To match :mod:`posttrain.inference.hf` (temperature-scaled, before top-p), sample
with ``top_p=1`` on a server in ``processed_logprobs`` mode.

Weights: an HTTP server cannot receive tensors through this API. ``load_weights(v, None)``
records that the server was updated out of band (e.g. restarted on a new checkpoint);
with weights, the ``on_load_weights(version, weights)`` hook given at construction is called
(e.g. to hit a server's own update endpoint); without a hook it raises ``InferenceError``.

Images: image parts of the messages (OpenAI ``image_url`` parts with ``data:`` URLs, see
:mod:`posttrain.core.images`) are sent as they are; each Completion records them in
``prompt_images``.

Errors: HTTP failures, timeouts and malformed answers raise ``InferenceError`` naming the
URL and the status; a request is retried ``retries`` times on connection errors and 5xx.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import replace
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.errors import InferenceError
from posttrain.core.images import prompt_images
from posttrain.core.types import Completion, Message

from .base import SamplingParams

_TOKEN_ID_PREFIX = "token_id:"


class OpenAICompatBackend:
    """Chat completions over HTTP (see the module docstring)."""

    vision = True  # reads image parts (posttrain/inference/vision.py)

    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_workers: int = 16, retries: int = 2,
                 request_token_ids: bool = True, extra_body: Mapping[str, Any] | None = None,
                 on_load_weights: Callable[[int, Any], None] | None = None, policy_version: int = 0,
                 server_versions: bool = False):
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_workers = max_workers
        self.retries = retries
        self.request_token_ids = request_token_ids
        self.extra_body = dict(extra_body or {})
        self.on_load_weights = on_load_weights
        self.policy_version = policy_version
        self.server_versions = server_versions
        # A proxy from the environment must not capture calls to a server on this machine.
        local = urllib.parse.urlsplit(self.base_url).hostname in ("127.0.0.1", "localhost", "::1")
        self._opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if local else []))

    def load_weights(self, version: int, weights: Any) -> None:
        if weights is not None:
            if self.on_load_weights is None:
                raise InferenceError("an OpenAI-compatible server cannot receive weights over the "
                                     "chat API; pass on_load_weights=... or update the server and "
                                     "call load_weights(version, None)")
            self.on_load_weights(version, weights)
        self.policy_version = int(version)

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]:
        if params.n < 1:
            raise InferenceError(f"bad sampling params: n={params.n} (must be >= 1)")
        if not prompts:
            return []
        model = self.model or self._default_model()
        version = self.policy_version
        bodies = [self._body(model, p, params) for p in prompts]
        workers = max(1, min(self.max_workers, len(bodies)))
        with ThreadPoolExecutor(workers) as pool:
            answers = list(pool.map(lambda b: self._post("/chat/completions", b), bodies))
        # The images each prompt sent ride on its Completions (the trainer needs the pixels).
        return [[replace(c, prompt_images=prompt_images(p)) for c in
                 _completions(a, params.n, version, self.server_versions)]
                for a, p in zip(answers, prompts)]

    def _body(self, model: str, messages: Sequence[Message], params: SamplingParams) -> dict:
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "n": params.n,
            "max_tokens": params.max_new_tokens,
            "temperature": 0.0 if params.greedy else params.temperature,
            "top_p": 1.0 if params.greedy else params.top_p,
            "logprobs": True,
            "top_logprobs": 0,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        if params.tools:
            body["tools"] = [dict(t) for t in params.tools]
        if self.request_token_ids:
            body["return_token_ids"] = True
            body["return_tokens_as_token_ids"] = True
        body.update(self.extra_body)
        return body

    def _default_model(self) -> str:
        data = self._get("/models").get("data") or []
        if not data or "id" not in data[0]:
            raise InferenceError(f"{self.base_url}/models lists no model; pass model=...")
        self.model = str(data[0]["id"])
        return self.model

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _get(self, path: str) -> dict:
        return self._request(urllib.request.Request(self.base_url + path, headers=self._headers()))

    def _post(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode("utf-8")
        return self._request(urllib.request.Request(self.base_url + path, data=data,
                                                    headers=self._headers(), method="POST"))

    def _request(self, request: urllib.request.Request) -> dict:
        url = request.full_url
        for attempt in range(self.retries + 1):
            try:
                with self._opener.open(request, timeout=self.timeout_s) as resp:
                    payload = resp.read()
                break
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:500].decode("utf-8", errors="replace")
                if exc.code < 500 or attempt == self.retries:
                    raise InferenceError(f"{url} answered HTTP {exc.code}: {detail}") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == self.retries:
                    raise InferenceError(f"{url} unreachable after {attempt + 1} tries: {exc}") from exc
            time.sleep(0.2 * 2 ** attempt)  # backoff before the next try
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise InferenceError(f"{url} answered non-JSON: {payload[:200]!r}") from exc


def _completions(answer: Mapping[str, Any], n: int, version: int,
                 server_versions: bool = False) -> list[Completion]:
    choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
    if len(choices) != n:
        raise InferenceError(f"server returned {len(choices)} choices, asked for {n}")
    prompt_ids = tuple(int(i) for i in answer.get("prompt_token_ids") or ())
    out = []
    for choice in choices:
        message = choice.get("message") or {}
        text = message.get("content") or ""
        ids, lps = _tokens(choice)
        reason = choice.get("finish_reason") or "stop"
        reason = reason if reason in ("stop", "length") else "stop"  # e.g. "tool_calls"
        reported = choice.get("policy_version")
        sampled_by = int(reported) if server_versions and isinstance(reported, int) else version
        out.append(Completion(text, ids, lps, reason, sampled_by,
                              tuple(int(i) for i in choice.get("prompt_token_ids") or prompt_ids)))
    return out


def _tokens(choice: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Token ids and logprobs of one choice; both empty when the ids are unknown."""
    content = (choice.get("logprobs") or {}).get("content") or []
    lps = tuple(float(c.get("logprob", 0.0)) for c in content)
    tokens = [str(c.get("token", "")) for c in content]
    if tokens and all(t.startswith(_TOKEN_ID_PREFIX) for t in tokens):
        return tuple(int(t[len(_TOKEN_ID_PREFIX):]) for t in tokens), lps
    ids = choice.get("token_ids") or ()
    if ids and len(ids) == len(lps):
        return tuple(int(i) for i in ids), lps
    return (), ()
