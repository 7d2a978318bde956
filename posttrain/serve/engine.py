"""One served policy version: an InferenceBackend, its tokenizer and a lock, behind the HTTP API.

What it is: :class:`ServedModel` wraps any token-level
:class:`~posttrain.inference.base.InferenceBackend` (the HF backend by default, the vllm
backend with ``--engine vllm``) with the three calls the endpoints need:

- ``chat(messages, tools, params)``: one chat prompt rendered by the backend's own chat
  template (so ``prompt_token_ids`` are what the backend and the trainer see);
- ``complete(ids_P, params)``: raw prompts already tokenized (``/v1/completions``);
- ``top_logprobs(completion, k, temperature)``: the ``k`` most likely tokens at every step.

Concurrency: the HF backend is not re-entrant, so every call on one ServedModel holds its
lock — concurrent requests to one version are **serialized** (each runs alone, which is also
what makes a request's ``seed`` reproduce an in-process call exactly); requests to different
versions run in parallel threads. There is no cross-request batching: one request's ``n``
samples (or a ``/v1/completions`` request's list of prompts) share one batched call.

Guarantees: the sampled ids, behaviour logprobs, finish reasons and prompt ids are the
backend's Completions unchanged (the same as an in-process call with the same seed); top
logprobs come from one forward pass over prompt + completion at the request's temperature
(the behaviour convention of :mod:`posttrain.inference.hf`: scaled, before top-p), so the
sampled token's entry agrees with its behaviour logprob to float rounding.

What it does not do: top logprobs for engines without an in-process torch model (the vllm
engine: a request asking for them is refused), or loading weights over HTTP.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from posttrain.core.errors import ConfigError, InferenceError
from posttrain.core.types import Completion, Message
from posttrain.inference.base import InferenceBackend, SamplingParams, check_sampling_params

ENGINES = ("hf", "vllm")


class ServedModel:
    """A named policy version served by the API (see the module docstring)."""

    def __init__(self, name: str, backend: InferenceBackend, *, source: str | None = None):
        self.name = name
        self.backend = backend
        self.tokenizer = getattr(backend, "tokenizer", None)
        if self.tokenizer is None:
            raise ConfigError(f"served model {name!r}: backend {type(backend).__name__} has no "
                              "tokenizer; the server needs a token-level backend (hf or vllm)")
        self.source = source
        self.lock = threading.Lock()
        positions = getattr(backend, "max_positions", None) or getattr(backend, "max_model_len", None)
        self.context_len = int(positions) if positions else None

    def close(self) -> None:
        """Shut the backend's engine down (vLLM: engine core and worker); HF has none to shut."""
        close = getattr(self.backend, "close", None)
        if close is not None:
            with self.lock:  # after a running request, never under it
                close()

    @property
    def policy_version(self) -> int:
        return int(self.backend.policy_version)

    def chat(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]],
             params: SamplingParams) -> list[Completion]:
        params = replace(params, tools=tuple(tools))
        with self.lock:
            return self.backend.generate([list(messages)], params)[0]

    def complete(self, ids_P: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Completion]]:
        check_sampling_params(params)
        if not ids_P or not all(ids_P):
            raise InferenceError("every prompt must hold at least one token")
        with self.lock:
            return _generate_ids(self.backend, [tuple(int(i) for i in p) for p in ids_P], params)

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])

    def token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([int(token_id)])

    def top_logprobs(self, completion: Completion, k: int,
                     temperature: float) -> list[list[tuple[int, float]]]:
        """The ``k`` most likely (id, logprob) at every sampled position, most likely first."""
        model = getattr(self.backend, "model", None)
        if not hasattr(model, "forward"):
            raise InferenceError(f"top_logprobs needs an in-process torch model; the "
                                 f"{type(self.backend).__name__} engine of {self.name!r} has none")
        import torch

        prompt, answer = list(completion.prompt_token_ids), list(completion.token_ids_T)
        if not answer:
            return []
        scale = temperature if temperature > 0 else 1.0  # greedy: log_softmax(logits)
        with self.lock, torch.inference_mode():
            device = next(model.parameters()).device
            logits = model(torch.tensor([prompt + answer], device=device)).logits[0].float()
            logp = torch.log_softmax(logits[len(prompt) - 1:-1] / scale, -1)
            values, ids = logp.topk(min(k, logp.shape[-1]), -1)
        return [list(zip(i, v)) for i, v in zip(ids.tolist(), values.tolist())]


def _generate_ids(backend: Any, ids_P: list[tuple[int, ...]], params: SamplingParams):
    """Sample from already tokenized prompts through the backend's public ids entry."""
    if hasattr(backend, "generate_ids"):  # HFBackend and VLLMBackend
        return backend.generate_ids(ids_P, params)
    raise InferenceError(f"{type(backend).__name__} cannot sample from token ids; "
                         "use /v1/chat/completions")


@dataclass(frozen=True)
class LoadSpec:
    """How to load a model folder into a ServedModel."""

    engine: str = "hf"
    dtype: str = "float32"
    device: str = "cpu"
    policy_version: int = 0


def load_served(name: str, path: str | Path, spec: LoadSpec = LoadSpec()) -> ServedModel:
    """A ServedModel over the Hugging Face folder ``path`` with the engine ``spec.engine``."""
    if spec.engine not in ENGINES:
        raise ConfigError(f"engine {spec.engine!r} is not one of {', '.join(ENGINES)}")
    from posttrain.inference import make_backend

    if spec.engine == "vllm":
        backend = make_backend("vllm", model=str(path), dtype=spec.dtype,
                               policy_version=spec.policy_version)
    else:
        from posttrain.models.loading import load_model, policy_backend

        model, tokenizer = load_model(path, spec.dtype)  # a VLM folder: the vlm backend
        backend = policy_backend(model, tokenizer, device=spec.device,
                                 policy_version=spec.policy_version)
    return ServedModel(name, backend, source=str(path))
