"""The weight files of checkpoints and KL references: write a policy's weights, read them back
into a model under its own parameter names, and the plain state-dict files of the older
weights versions the async loop still samples with.

Guarantees: :func:`load_weights` loads every weight of the model or raises
:class:`~posttrain.core.errors.CheckpointError` naming the first ones (a weight the model
lacks, or one it has that the folder does not, unless tied to a loaded one); a LoRA
policy's folder holds its adapter only and loads through peft.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import torch

from posttrain.core.errors import CheckpointError


def save_weights(model: Any, out: Path) -> None:
    """``out/``: an HF model's ``save_pretrained`` folder (a LoRA policy's: its adapter), or a
    plain module's ``model.safetensors``."""
    if hasattr(model, "save_pretrained"):
        from transformers.utils import logging as hf_logging

        was_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # one bar per checkpoint is noise in a run's log
        try:
            model.save_pretrained(out)
        finally:
            if was_on:
                hf_logging.enable_progress_bar()
    else:  # a plain nn.Module: the same safetensors file, without an HF config
        from safetensors.torch import save_model
        out.mkdir(parents=True)
        save_model(model, str(out / "model.safetensors"))


def save_state_dicts(versions: Mapping[int, Mapping[str, torch.Tensor]], out: Path) -> None:
    """``out/vN.safetensors`` per weights version (names as the state dicts have them)."""
    from safetensors.torch import save_file

    out.mkdir(parents=True)
    for v, sd in versions.items():  # own contiguous copies: safetensors refuses shared storage
        save_file({k: t.detach().to("cpu").contiguous().clone() for k, t in sd.items()},
                  str(out / f"v{int(v):08d}.safetensors"))


def load_state_dicts(folder: Path) -> dict[int, dict[str, torch.Tensor]]:
    """:func:`save_state_dicts`' versions; ``{}`` when the folder is absent."""
    from safetensors.torch import load_file

    if not folder.is_dir():
        return {}
    return {int(f.stem[1:]): load_file(str(f)) for f in sorted(folder.glob("v*.safetensors"))}


def _pretrained_state(model: Any, folder: Path) -> dict[str, torch.Tensor]:
    """The weights of an HF folder under the model's own parameter names.

    ``save_pretrained`` writes some architectures under their original checkpoint names
    (transformers 5 renames a LLaVA's ``model.language_model.*`` back to
    ``language_model.model.*``), which only ``from_pretrained`` maps back: so a VLM run's
    checkpoint is read through it. Other folders keep the plain safetensors read (no second
    model in memory)."""
    from transformers.utils import logging as hf_logging

    dtype = next(model.parameters()).dtype
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        fresh = type(model).from_pretrained(folder, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{folder}: its weights do not match the model's names and "
                              f"from_pretrained cannot read them: {exc}") from exc
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
    return dict(fresh.state_dict())


def load_weights(model: Any, folder: Path) -> None:
    """Load a :func:`save_weights` folder into ``model`` in place (see the module's guarantees)."""
    from safetensors.torch import load_file

    from posttrain.trainer.lora import ADAPTER_CONFIG, is_lora, load_adapter

    if (folder / ADAPTER_CONFIG).is_file():  # a LoRA policy's save_pretrained: the adapter only
        return load_adapter(model, folder)
    if is_lora(model):
        raise CheckpointError(f"{folder} holds full weights but the model is a LoRA policy "
                              "(model.lora differs from the run that wrote it)")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise CheckpointError(f"no safetensors weights in {folder}")
    state: dict[str, torch.Tensor] = {}
    for f in files:
        state.update(load_file(str(f)))
    if (set(state) - set(model.state_dict()) and (folder / "config.json").is_file()
            and hasattr(type(model), "from_pretrained")):
        state = _pretrained_state(model, folder)
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise CheckpointError(f"checkpoint has weights the model lacks: {result.unexpected_keys[:5]}")
    # save_pretrained writes tied weights once; a missing key is fine only if it shares
    # storage with a loaded one (e.g. lm_head tied to the embeddings).
    params = dict(model.state_dict(keep_vars=True))
    loaded_ptrs = {params[k].data_ptr() for k in state if k in params}
    untied = [k for k in result.missing_keys if params[k].data_ptr() not in loaded_ptrs]
    if untied:
        raise CheckpointError(f"checkpoint lacks weights of the model: {untied[:5]}")
