"""Memory and speed knobs of the policy's forward: activation checkpointing and autocast.

- :func:`enable_activation_checkpointing`: transformers' gradient checkpointing, non-reentrant
  (``torch.utils.checkpoint`` with ``use_reentrant=False``), which stashes and restores the
  RNG state, so dropout in a recomputed layer draws the same mask as in the first pass and
  loss and gradients equal the plain path (tested, with dropout on). It acts in train mode
  only; generation (eval mode) is unchanged.
- :func:`resolve_autocast` / :func:`enable_autocast`: the policy's forward runs under
  ``torch.autocast`` in the chosen low precision *where the device computes it natively* —
  on CUDA bf16 when ``torch.cuda.is_bf16_supported()`` and fp16 always; on CPU bf16 only when
  the processor has bf16 instructions (``avx512_bf16`` or ``amx_bf16``), never fp16 (x86
  CPUs emulate it, slower than fp32). Anywhere else it stays float32, and
  :func:`resolve_autocast` says so. The logits leave the forward in float32: log-softmax,
  logprobs, ratios and the loss are computed in full precision (tested: a forward whose
  low-precision logits leaked into the logprobs fails).

Autocast is a pair of forward hooks on the module, so a deep copy (the rollout backend's, a
reference's) carries it too: the behaviour policy computes as the trained one does.
Not covered: fp16 loss scaling (``torch.amp.GradScaler``): fp16 here is for forwards
only; training in fp16 on GPUs should use bf16 instead.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@functools.lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """True when the CPU has native bf16 arithmetic (Linux ``/proc/cpuinfo`` flags)."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = fh.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_autocast(kind: str, device_type: str) -> torch.dtype | None:
    """The autocast dtype for ``kind`` (none|bf16|fp16) on ``device_type``; None: float32."""
    if kind == "none":
        return None
    if device_type == "cuda":
        if kind == "bf16" and not torch.cuda.is_bf16_supported():
            return None
        return _DTYPES[kind]
    if device_type == "cpu" and kind == "bf16" and cpu_has_bf16():
        return torch.bfloat16
    return None


def _enter(module: torch.nn.Module, args: Any, kwargs: Any) -> None:
    ctx = torch.autocast(module._pt_autocast[0], dtype=module._pt_autocast[1])
    ctx.__enter__()
    module._pt_autocast_stack.append(ctx)


def _leave(module: torch.nn.Module, args: Any, kwargs: Any, output: Any) -> Any:
    module._pt_autocast_stack.pop().__exit__(None, None, None)
    logits = getattr(output, "logits", None)
    if logits is not None and logits.dtype != torch.float32:
        output.logits = logits.float()  # logprobs and the loss in full precision
    return output


def enable_autocast(model: torch.nn.Module, dtype: torch.dtype, device_type: str = "cpu") -> None:
    """Run ``model``'s forward under autocast to ``dtype``; its logits come out float32."""
    model._pt_autocast = (device_type, dtype)
    model._pt_autocast_stack = []
    model.register_forward_pre_hook(_enter, with_kwargs=True)
    # always_call: a forward that raises still leaves the autocast region
    model.register_forward_hook(_leave, with_kwargs=True, always_call=True)


def enable_activation_checkpointing(model: Any) -> None:
    """Recompute decoder layers in backward (non-reentrant: RNG state restored)."""
    if not getattr(model, "supports_gradient_checkpointing", False):
        from posttrain.core.errors import ConfigError

        raise ConfigError(f"model.activation_checkpointing: {type(model).__name__} does not "
                          "support gradient checkpointing")
    kwargs = {"use_reentrant": False}  # non-reentrant: RNG state stashed and restored
    if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.x's name
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def apply_model_knobs(model: Any, cfg: Any) -> dict[str, str]:
    """Apply ``model.activation_checkpointing`` and ``model.autocast`` of a ``ModelConfig`` to a
    freshly loaded (unwrapped) model; returns what was chosen (for the run's log)."""
    if cfg.activation_checkpointing:
        enable_activation_checkpointing(model)
    device = next(model.parameters()).device.type
    dtype = resolve_autocast(cfg.autocast, device)
    if dtype is not None:
        enable_autocast(model, dtype, device)
    return {"autocast": str(dtype).replace("torch.", "") if dtype else "float32",
            "activation_checkpointing": str(bool(cfg.activation_checkpointing))}
