"""Load and save any local Hugging Face causal LM folder (the tiny model or a real one).

What it is: thin wrappers over ``AutoModelForCausalLM``/``AutoTokenizer`` with
``local_files_only=True`` — posttrain never downloads weights; a model is a folder on disk.

Guarantees:
- ``save_model`` then ``load_model`` gives a model with identical logits (tested);
- a path that is not a model folder raises :class:`posttrain.core.errors.ConfigError`
  naming the folder and what is missing, before transformers is asked anything;
- the model comes back in eval mode, in the requested dtype, with ``pad_token`` set on the
  tokenizer (falling back to ``eos_token``) so that batching works.

What it does not do: resolve hub ids, quantise, or place a model on several devices.
"""

from __future__ import annotations

from pathlib import Path

import torch

from posttrain.core.errors import ConfigError

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _check_folder(path: Path) -> None:
    if not path.is_dir():
        raise ConfigError(f"model path {str(path)!r} is not a folder; expected a local "
                          "Hugging Face model folder (config.json, weights, tokenizer files)")
    if not (path / "config.json").is_file():
        raise ConfigError(f"model path {str(path)!r} is not a Hugging Face model folder: "
                          "it has no config.json")
    has_tokenizer = any((path / f).is_file() for f in
                        ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json"))
    if not has_tokenizer:
        raise ConfigError(f"model path {str(path)!r} has no tokenizer files "
                          "(tokenizer.json or tokenizer_config.json)")


def load_model(path: str | Path, dtype: str = "float32"):
    """``(model, tokenizer)`` from a local HF causal LM folder, in eval mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype not in DTYPES:
        raise ConfigError(f"model.dtype={dtype!r} is not allowed; use one of {sorted(DTYPES)}")
    folder = Path(path).expanduser()
    _check_folder(folder)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True,
                                                     dtype=DTYPES[dtype])
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"could not load a causal LM from {str(folder)!r}: {exc}") from exc
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    return model, tokenizer


def save_model(model, tokenizer, path: str | Path) -> Path:
    """Write ``model`` and ``tokenizer`` to ``path`` (created) as an HF folder; returns it."""
    folder = Path(path).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
