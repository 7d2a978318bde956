"""posttrain.models: the built-in tiny model and tokenizer, model loading, and the version registry.

``build_tiny_model`` makes the tiny Llama-style model and its character tokenizer offline;
``load_model``/``save_model`` go through ``from_pretrained``/``save_pretrained`` for any local
Hugging Face causal LM folder. Names are imported lazily: importing ``posttrain.models.versions``
(the registry, used by the CLI) must not pay for torch and transformers.
"""

from importlib import import_module
from typing import Any

_LAZY = {
    "build_char_tokenizer": "tokenizer", "build_tiny_model": "tiny", "count_parameters": "tiny",
    "load_model": "loading", "save_model": "loading",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
