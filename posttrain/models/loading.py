"""Load and save any local Hugging Face model folder: a causal LM or a vision-language model.

What it is: thin wrappers over ``AutoModelForCausalLM``/``AutoTokenizer`` with
``local_files_only=True`` — posttrain never downloads weights; a model is a folder on disk.
A folder whose ``config.json`` has a ``vision_config`` is a vision-language model: it loads
through :func:`posttrain.inference.vlm.load_vlm` (``AutoModelForImageTextToText`` and its
processor), the processor bound to the model (:func:`processor_of`), and the tokenizer
returned is the processor's. :func:`policy_backend` samples either kind, so every caller
(training, evaluation, calibration) takes one path.

Guarantees:
- ``save_model`` then ``load_model`` gives a model with identical logits (tested);
- a path that is not a model folder raises :class:`posttrain.core.errors.ConfigError`
  naming the folder and what is missing, before transformers is asked anything;
- the model comes back in eval mode, in the requested dtype, with ``pad_token`` set on the
  tokenizer (falling back to ``eos_token``) so that batching works;
- ``save_model`` of a vision-language model writes its processor too (image processor, chat
  template, tokenizer), so the folder loads again as the same kind.

What it does not do: resolve hub ids, quantise, or place a model on several devices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from posttrain.core.errors import ConfigError

from .folders import is_vision_folder  # noqa: F401  (re-exported: callers ask loading)

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


def processor_of(model: Any) -> Any | None:
    """The processor bound to a vision-language model (None for a text model)."""
    from posttrain.inference.vlm import PROCESSOR_ATTR

    return getattr(model, PROCESSOR_ATTR, None)


def policy_backend(model: Any, tokenizer: Any, **kwargs: Any) -> Any:
    """An in-process sampler of ``model``: the ``vlm`` backend for a vision-language model,
    else the ``hf`` one; ``kwargs`` (``device``, ``policy_version``) go to either."""
    from posttrain.inference import make_backend

    processor = processor_of(model)
    if processor is not None:
        return make_backend("vlm", model=model, processor=processor, **kwargs)
    return make_backend("hf", model=model, tokenizer=tokenizer, **kwargs)


def load_model(path: str | Path, dtype: str = "float32"):
    """``(model, tokenizer)`` from a local HF folder, in eval mode (see the module docstring)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype not in DTYPES:
        raise ConfigError(f"model.dtype={dtype!r} is not allowed; use one of {sorted(DTYPES)}")
    folder = Path(path).expanduser()
    _check_folder(folder)
    if is_vision_folder(folder):
        from posttrain.inference.vlm import load_vlm

        model, processor = load_vlm(folder, dtype)
        return model, processor.tokenizer
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
    processor = processor_of(model)
    (processor if processor is not None else tokenizer).save_pretrained(folder)
    return folder
