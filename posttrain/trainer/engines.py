"""The rollout engine of a training run: which inference backend samples the policy.

:func:`make_rollout_backend` builds it from the run config's ``inference`` section, once per
run, after SFT; the pipeline samples with it (reference loop, DPO pairs, held-out
evaluation before and after RL) and hands it to the async loop, whose producer pools derive
their own backends from it (``trainer/producers.py``). :func:`probe_backend` is what the
``eval.every_steps`` probe evaluates with.

- ``hf``: an :class:`~posttrain.inference.hf.HFBackend` over a deep copy of the policy (the
  trainer's module keeps training; the copy receives each version through ``load_weights``);
  a vision-language policy gets the :class:`~posttrain.inference.vlm.VLMBackend` the same way
  (:func:`posttrain.models.loading.policy_backend`).
  Thread producers deep-copy it; process/Ray workers build one over their copy of the model.
- ``vllm``: the policy as it is now (weights, config, tokenizer) is saved with
  ``save_pretrained`` to ``<run>/engine_model/`` — vLLM starts from a model folder — and a
  :class:`~posttrain.inference.vllm_backend.VLLMBackend` starts on it. Every later version
  reaches the engine through ``load_weights`` (vLLM's in-place reload, then a prefix-cache
  reset), never through the folder, which keeps the weights the engine started with (and the
  config and tokenizer every engine of the run reads). Thread producers and the probe share
  this one engine, taking turns through its ``exclusive()`` lock (vLLM keeps its forward
  context in a process-wide global: two engines of one process cannot run at the same time);
  process and Ray producers each start an engine of their own from its ``engine_spec``.

Guarantees: the backend starts at ``policy_version`` 0 holding the policy's current weights
and the pipeline shuts it down (:func:`close_backend`) when the run ends, normally or not;
the folder is rewritten whenever a run (or a resume) starts, so it always matches the model
the run loaded. Not covered: sharing one vLLM engine between processes, or GPU placement of
several engines (each takes ``inference.gpu_memory_utilization`` of the device).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from posttrain.core.config import RunConfig
from posttrain.inference import make_backend
from posttrain.inference.base import InferenceBackend
from posttrain.models.loading import policy_backend, save_model

ENGINE_FOLDER = "engine_model"  # <run>/engine_model: the folder a vLLM engine starts from


def make_rollout_backend(cfg: RunConfig, model: Any, tokenizer: Any,
                         run_dir: str | Path) -> InferenceBackend:
    """The run's rollout backend (see the module docstring), at policy version 0."""
    if cfg.inference.backend == "vllm":
        return start_vllm(cfg, model, tokenizer, Path(run_dir) / ENGINE_FOLDER)
    return policy_backend(copy.deepcopy(model).eval(), tokenizer)


def start_vllm(cfg: RunConfig, model: Any, tokenizer: Any, folder: Path) -> InferenceBackend:
    """Save the policy to ``folder`` and start a vLLM engine on it. A LoRA policy: its frozen
    base is saved, the engine starts with vLLM's LoRA support, and the adapter as it is now
    (SFT may have trained it) is installed at version 0; later syncs send the adapter only."""
    from posttrain.trainer.lora import is_lora, save_base, sync_weights

    lora = None
    if is_lora(model):
        from posttrain.inference.vllm_lora import LoraSpec

        save_base(model, tokenizer, folder)
        spec = cfg.model.lora
        lora = LoraSpec(spec.r, spec.alpha, tuple(spec.target_modules))
    else:
        save_model(model, tokenizer, folder)
    inf = cfg.inference
    backend = make_backend("vllm", model=str(folder), dtype=cfg.model.dtype, seed=cfg.seed,
                           max_model_len=inf.max_model_len, kv_cache_gib=inf.kv_cache_gib,
                           enforce_eager=inf.enforce_eager, lora=lora,
                           gpu_memory_utilization=inf.gpu_memory_utilization)
    if lora is not None:
        backend.load_weights(0, sync_weights(model))
    return backend


def close_backend(backend: InferenceBackend) -> None:
    """Shut the run's engine down when the run is done (vLLM: its engine core and worker,
    ``VLLMBackend.close``); backends without an engine of their own have nothing to close."""
    close = getattr(backend, "close", None)
    if close is not None:
        close()


def probe_backend(backend: InferenceBackend, model: Any, tokenizer: Any) -> InferenceBackend:
    """The backend of the every-N-steps held-out probe: the run's own engine when threads share
    it (vLLM; hold its ``exclusive()`` while probing), else an HF copy of its own, since
    the loop's backend may be sampling in a producer thread at that moment."""
    if getattr(backend, "shared_by_threads", False):
        return backend
    return policy_backend(copy.deepcopy(model).eval(), tokenizer)
