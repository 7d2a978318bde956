"""posttrain.foundation: build the foundation model posttrain post-trains, from its own corpus.

``recipe`` (the validated YAML recipe and its hashes), ``corpus`` (documents of training seeds
in the RL token layout, a BPE tokenizer, a cached token file), ``train`` (pre-training with
exact resume) and ``build`` (the whole build, ``foundation.json``, registration, verification).
Layer 7 (DESIGN.md §2): it uses the trainer's checkpoints, optimizer and SFT layout, so it sits
above the trainer; only the CLI imports it. Names are imported lazily (torch is heavy).
"""

from importlib import import_module
from typing import Any

_LAZY = {"FoundationRecipe": "recipe", "load_recipe": "recipe", "recipe_hash": "recipe",
         "build_corpus": "corpus", "pretrain": "train", "build_foundation": "build",
         "verify_foundation": "build"}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
