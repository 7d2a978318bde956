"""LoRA adapters (peft) over the policy: what trains, what is saved, what is synced, merging.

:func:`apply_lora` wraps the policy that :func:`posttrain.trainer.phases.load_policy` built in a
``peft`` LoRA model (``model.lora`` of the run config). One adapter serves the whole run
(SFT, DPO, RL): the base weights never change, so a resume rebuilds them from the config
(the tiny model is deterministic in its seed; a ``model.path`` folder is read again) and takes
the adapter from the checkpoint.

Guarantees:
- only adapter matrices have ``requires_grad``; the optimizer, which takes trainable
  parameters only (``optim.param_groups``), holds exactly them; base weights stay
  bit-identical through any number of steps (tested);
- the adapter's random init is deterministic in the run seed and leaves the caller's global
  torch RNG untouched; its ``B`` starts at zero, so the wrapped policy starts equal to the base;
- :func:`sync_weights` is what travels to a rollout backend: the adapter's tensors only (the
  backend holds its own copy of the base; ``HFBackend.load_weights`` takes the subset);
- :func:`frozen_copy` (the DPO and KL references) is exact at a fraction of a full copy:
  a new adapter copy over the *same* base tensors (frozen, never written);
- checkpoints hold the adapter in peft's ``save_pretrained`` format (``adapter_config.json``,
  ``adapter_model.safetensors``), size- and crc-checked like every checkpoint file;
  :func:`load_adapter` restores it exactly;
- :func:`merge_checkpoint`: base + adapter merged (``W0 + alpha/r * B @ A``) and saved as a plain
  Hugging Face folder that ``from_pretrained`` loads without peft.

With ``inference.backend: vllm`` the engine starts on :func:`save_base`'s folder and the adapter
reaches it through vLLM's LoRA adapter loading (``inference/vllm_lora.py``, wired in
``trainer/engines.py``).

Not covered: several adapters per run, QLoRA (quantised bases), and process/Ray producers
(their shared-memory transport is sized for full state dicts; ``validate`` refuses them).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping

import torch

from posttrain.core.config import LoraConfig, RunConfig
from posttrain.core.errors import ConfigError

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
_ADAPTER_KEY = "lora_"  # every LoRA tensor's state-dict key holds lora_A / lora_B


def is_lora(model: Any) -> bool:
    """True for a peft-wrapped model (without importing peft when it was never used)."""
    return hasattr(model, "peft_config") and hasattr(model, "base_model")


def linear_layer_names(model: torch.nn.Module) -> list[str]:
    """The distinct last path components of the model's ``nn.Linear`` modules: what
    ``model.lora.target_modules`` may name."""
    return sorted({name.rsplit(".", 1)[-1] for name, m in model.named_modules()
                   if isinstance(m, torch.nn.Linear) and name})


def meta_linear_names(model_cfg: Any) -> list[str]:
    """:func:`linear_layer_names` of the model a ``ModelConfig`` describes, built on the meta
    device (no weights allocated or read): what ``validate`` checks targets against."""
    from transformers import AutoConfig, AutoModelForCausalLM

    if model_cfg.path:
        config = AutoConfig.from_pretrained(model_cfg.path, local_files_only=True)
    else:
        from posttrain.models.tiny import tiny_llama_config
        from posttrain.models.tokenizer import build_char_tokenizer

        config = tiny_llama_config(model_cfg.tiny, build_char_tokenizer())
    with torch.device("meta"):
        return linear_layer_names(AutoModelForCausalLM.from_config(config))


def check_targets(model: torch.nn.Module, lora: LoraConfig) -> None:
    """A :class:`ConfigError` naming the model's linear layers when a target is not one."""
    names = linear_layer_names(model)
    unknown = [t for t in lora.target_modules if t not in names]
    if unknown:
        raise ConfigError(f"model.lora.target_modules: {unknown} are not linear layers of the "
                          f"model; its linear layer names are: {', '.join(names)}")


def apply_lora(model: torch.nn.Module, lora: LoraConfig, *, seed: int = 0) -> Any:
    """``model`` wrapped in a peft LoRA model (trainable adapter, frozen base)."""
    try:
        from peft import LoraConfig as PeftLoraConfig, get_peft_model
    except ImportError as exc:  # optional dependency: name the extra
        raise ConfigError("model.lora needs peft: pip install 'posttrain[lora]'") from exc
    check_targets(model, lora)
    cfg = PeftLoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                         target_modules=list(lora.target_modules), task_type="CAUSAL_LM")
    with torch.random.fork_rng(devices=[]):  # the A init: deterministic, caller's RNG untouched
        torch.manual_seed(seed)
        return get_peft_model(model, cfg)


def adapter_state_dict(model: Any) -> dict[str, torch.Tensor]:
    """The adapter's tensors under the wrapped model's own state-dict keys."""
    # from named_parameters, not state_dict(): the same keys for adapter tensors, without
    # walking every module's hooks (state_dict of a peft model is the slow part of a sync)
    return {k: p.detach() for k, p in model.named_parameters() if _ADAPTER_KEY in k}


def sync_weights(model: Any) -> Mapping[str, torch.Tensor]:
    """What a weight sync sends: the adapter of a LoRA policy, else the whole state dict."""
    return adapter_state_dict(model) if is_lora(model) else model.state_dict()


def frozen_copy(model: Any) -> Any:
    """A frozen copy for a reference; a LoRA model's copy shares its (frozen) base tensors."""
    memo: dict[int, Any] = {}
    if is_lora(model):  # deepcopy maps each memoised object to itself: the base is not copied
        memo = {id(p): p for n, p in model.named_parameters() if _ADAPTER_KEY not in n}
        memo.update({id(b): b for b in model.buffers()})
    ref = copy.deepcopy(model, memo).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def load_adapter(model: Any, folder: str | Path) -> None:
    """Load the adapter saved in ``folder`` (peft format) into the LoRA ``model``, exactly;
    an error when the model is not LoRA, or tensors are missing or unexpected."""
    from safetensors.torch import load_file

    from posttrain.trainer.checkpoint import CheckpointError

    folder = Path(folder)
    if not is_lora(model):
        raise CheckpointError(f"{folder} holds a LoRA adapter but the model has none "
                              "(set model.lora as in the run that wrote it)")
    from peft import set_peft_model_state_dict

    saved = load_file(str(folder / ADAPTER_WEIGHTS))
    result = set_peft_model_state_dict(model, saved)
    unexpected = list(getattr(result, "unexpected_keys", []) or [])
    missing = [k for k in getattr(result, "missing_keys", []) if _ADAPTER_KEY in k]
    # (peft also saves a targeted lm_head's or embedding's base weight: same values, frozen)
    n_saved = sum(_ADAPTER_KEY in k for k in saved)
    if unexpected or missing or n_saved != len(adapter_state_dict(model)):
        raise CheckpointError(f"adapter in {folder} does not match model.lora (unexpected "
                              f"{unexpected[:3]}, missing {missing[:3]}, {n_saved} adapter tensors saved)")


def merged_copy(model: Any) -> torch.nn.Module:
    """A plain transformers model with the adapter merged in (the policy is not touched)."""
    merged = copy.deepcopy(model).merge_and_unload()
    for p in merged.parameters():
        p.requires_grad_(False)
    return merged.eval()


def save_base(model: Any, tokenizer: Any, folder: str | Path) -> Path:
    """The frozen base of a LoRA ``model`` as a plain HF folder, the adapter left out (what a
    vLLM engine starts from; adapters reach it through its LoRA loading). Not a copy: the
    base tensors are saved under their transformers names; the policy is not touched."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    base = model.get_base_model()
    state = {k.replace(".base_layer.", "."): v for k, v in base.state_dict().items()
             if _ADAPTER_KEY not in k}
    base.save_pretrained(folder, state_dict=state)
    tokenizer.save_pretrained(folder)
    return folder


def save_policy(model: Any, tokenizer: Any, folder: str | Path) -> None:
    """The run's final ``model/`` folder: a LoRA policy merged (plain HF, loadable without
    peft), its adapter alone beside it in ``adapter/``; any other policy as it is."""
    from posttrain.models.loading import save_model

    folder = Path(folder)
    if not is_lora(model):
        save_model(model, tokenizer, folder)
        return
    save_model(merged_copy(model), tokenizer, folder)
    model.save_pretrained(folder.parent / "adapter")


def trainable_counts(model: torch.nn.Module) -> dict[str, int]:
    """``{"trainable": n, "total": n}`` parameter counts."""
    params = {id(p): p for p in model.parameters()}.values()
    return {"trainable": sum(p.numel() for p in params if p.requires_grad),
            "total": sum(p.numel() for p in params)}


def _resolve_checkpoint(path: Path) -> tuple[Path, Path]:
    """``(run folder, checkpoint folder)`` of a run folder (its newest checkpoint) or of one
    checkpoint folder inside ``<run>/checkpoints/``."""
    from posttrain.trainer.checkpoint import CHECKPOINTS_SUBDIR, CheckpointError, latest_checkpoint

    if (path / "meta.json").is_file() and (path / "model").is_dir():
        run = path.parent.parent if path.parent.name == CHECKPOINTS_SUBDIR else path.parent
        return run, path
    ck = latest_checkpoint(path)
    if ck is None:
        raise CheckpointError(f"{path} is neither a checkpoint nor a run folder with one")
    return path, ck


def merge_checkpoint(path: str | Path, out: str | Path) -> dict[str, Any]:
    """Merge the adapter of a LoRA run's checkpoint into its base; save a plain HF folder."""
    from posttrain.core.config import validate_config
    from posttrain.models.loading import save_model
    from posttrain.trainer.checkpoint import CheckpointError, checkpoint_problem
    from posttrain.trainer.phases import load_policy

    import yaml

    run, ck = _resolve_checkpoint(Path(path))
    if not (ck / "model" / ADAPTER_CONFIG).is_file():
        raise CheckpointError(f"{ck} holds full weights, not a LoRA adapter: nothing to merge "
                              "(its model/ folder already loads with from_pretrained)")
    problem = checkpoint_problem(ck, deep=True)
    if problem is not None:
        raise CheckpointError(f"{ck} is not a complete checkpoint ({problem})")
    cfg: RunConfig = validate_config(yaml.safe_load((run / "config.yaml").read_text()))
    model, tokenizer = load_policy(cfg)  # base + a fresh adapter of the run's shape
    load_adapter(model, ck / "model")
    save_model(merged_copy(model), tokenizer, Path(out))
    meta = json.loads((ck / "meta.json").read_text())
    return {"checkpoint": str(ck), "step": meta.get("step"), "out": str(out),
            **trainable_counts(model)}
