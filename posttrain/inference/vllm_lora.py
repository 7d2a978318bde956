"""LoRA adapters on the vLLM engine: what the engine is started with and how an adapter reaches it.

What it is: the vLLM side of adapter-only weight sync (``trainer/lora.py``'s
:func:`~posttrain.trainer.lora.sync_weights` sends a LoRA policy's adapter tensors only). The
engine starts on the *base* model folder with vLLM's LoRA support on; every adapter version is
written once, in peft's own format (``adapter_config.json`` + ``adapter_model.safetensors``),
to a folder of its own, and requests carry a ``LoRARequest`` with a fresh id for it, so vLLM
loads it on the next request.

Guarantees:
- :func:`adapter_files` writes the tensors under peft's saved names (the adapter name,
  ``.default``, dropped) and the config that gives vLLM peft's scaling ``alpha / r``;
- :func:`adapter_part` takes the adapter out of an adapter-only sync or a whole peft state dict;
- :func:`max_lora_rank` is the smallest rank bound vLLM accepts that holds ``r``.

What it does not do: several adapters at once, per-request adapters, or rsLoRA/DoRA.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from posttrain.core.errors import InferenceError

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # vLLM 0.32's MaxLoRARanks
_ADAPTER_NAME = re.compile(r"\.(lora_[AB])\.[^.]+\.weight$")  # ...q_proj.lora_A.default.weight


@dataclass(frozen=True)
class LoraSpec:
    """The adapter's shape (picklable): rank, alpha and the linear layers it wraps."""

    r: int
    alpha: float
    target_modules: tuple[str, ...]


def max_lora_rank(r: int) -> int:
    """The smallest of vLLM's rank bounds that holds rank ``r``."""
    for bound in VLLM_LORA_RANKS:
        if bound >= r:
            return bound
    raise ValueError(f"LoRA rank {r} exceeds vLLM's largest ({VLLM_LORA_RANKS[-1]})")


def adapter_part(state: Mapping[str, Any]) -> dict[str, Any]:
    """The adapter tensors of ``state`` (an adapter-only sync, or a whole peft state dict,
    whose frozen base tensors are left out); an error when it holds none."""
    adapter = {k: v for k, v in state.items() if _ADAPTER_NAME.search(k)}
    if not adapter:
        raise InferenceError("load_weights on a LoRA engine: no adapter tensors (lora_A/lora_B) "
                             f"among {len(state)} weights, e.g. {sorted(state)[:3]}")
    return adapter


def adapter_files(folder: str | Path, state: Mapping[str, Any], spec: LoraSpec) -> Path:
    """Write ``state`` (a peft model's adapter tensors) as a peft adapter folder; returns it."""
    from safetensors.torch import save_file

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {_ADAPTER_NAME.sub(r".\1.weight", k): v.detach().to("cpu").contiguous().clone()
               for k, v in state.items()}
    save_file(tensors, str(out / "adapter_model.safetensors"))
    config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": spec.r,
              "lora_alpha": spec.alpha, "target_modules": sorted(spec.target_modules),
              "lora_dropout": 0.0, "bias": "none", "use_rslora": False, "use_dora": False,
              "modules_to_save": None}
    (out / "adapter_config.json").write_text(json.dumps(config, indent=1))
    return out
