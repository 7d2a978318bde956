"""The vLLM backend: GPU sampling through vllm's offline ``LLM`` API, in process.

What it is: an :class:`~posttrain.inference.base.InferenceBackend` over ``vllm.LLM.chat``
with ``vllm.SamplingParams(n, temperature, top_p, max_tokens, stop, seed, logprobs=0)``;
``logprobs=0`` returns the sampled token's logprob at every step, which becomes
``Completion.logprobs_T``. vllm is imported only inside this module: without it,
constructing the backend raises ``MissingExtraError("vllm", "vllm")``.

Logprob semantics: the engine is started with ``logprobs_mode="processed_logprobs"`` when
the installed vllm supports it, so logprobs are of the temperature-scaled distribution like
:mod:`posttrain.inference.hf` — except that vllm's processed logprobs are also taken after
top-p, so the two agree exactly only with ``top_p=1``. Older vllm versions return raw
(temperature 1) logprobs; the trainer's importance ratio then needs the same convention.

Prompt sharing and prefix caching are vllm's own (``enable_prefix_caching=True``).
``load_weights(version, state_dict)`` loads the tensors into the running model through
``LLM.apply_model`` (falling back to the driver worker's model on older vllm) and then
**resets vllm's prefix cache**, so no KV computed with old weights is reused.

Not tested here: this machine has no GPU and vllm is not installed; the test suite only
checks the missing-extra error. The first run on a GPU host should run
``tests/inference/test_conformance.py`` against this backend.
"""

from __future__ import annotations

from typing import Any, Sequence

from posttrain.core.errors import InferenceError, MissingExtraError
from posttrain.core.types import Completion, Message

from .base import SamplingParams


def _import_vllm():
    try:
        import vllm
    except ImportError as exc:
        raise MissingExtraError("vllm", "vllm") from exc
    return vllm


class VLLMBackend:
    """Sampling with vllm on a GPU (see the module docstring)."""

    def __init__(self, model: str, *, dtype: str = "auto", gpu_memory_utilization: float = 0.5,
                 seed: int = 0, policy_version: int = 0, **engine_kwargs: Any):
        vllm = _import_vllm()
        self._vllm = vllm
        kwargs = dict(model=model, dtype=dtype, gpu_memory_utilization=gpu_memory_utilization,
                      seed=seed, enable_prefix_caching=True, **engine_kwargs)
        kwargs.setdefault("logprobs_mode", "processed_logprobs")
        try:
            self.llm = vllm.LLM(**kwargs)
        except TypeError:  # vllm without logprobs_mode: raw logprobs (see the docstring)
            kwargs.pop("logprobs_mode")
            self.llm = vllm.LLM(**kwargs)
        self.policy_version = policy_version

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]:
        if not prompts:
            return []
        sampling = self._vllm.SamplingParams(
            n=params.n, temperature=0.0 if params.greedy else params.temperature,
            top_p=1.0 if params.greedy else params.top_p, max_tokens=params.max_new_tokens,
            stop=list(params.stop) or None, seed=params.seed, logprobs=0)
        version = self.policy_version
        try:
            outputs = self.llm.chat([[dict(m) for m in p] for p in prompts], sampling_params=sampling,
                                    tools=[dict(t) for t in params.tools] or None, use_tqdm=False)
        except Exception as exc:  # the engine's errors are untyped; name the boundary
            raise InferenceError(f"vllm generation failed: {exc}") from exc
        return [[_completion(o, request.prompt_token_ids, version) for o in request.outputs]
                for request in outputs]

    def load_weights(self, version: int, weights: Any) -> None:
        if weights is not None:
            state = weights.state_dict() if hasattr(weights, "state_dict") else weights
            items = list(state.items())
            if hasattr(self.llm, "apply_model"):
                self.llm.apply_model(lambda model: model.load_weights(items))
            else:  # older vllm: a single in-process worker
                runner = self.llm.llm_engine.model_executor.driver_worker.model_runner
                runner.model.load_weights(items)
        # KV blocks computed with the old weights must not serve the new policy.
        self.llm.reset_prefix_cache()
        self.policy_version = int(version)


def _completion(output: Any, prompt_ids: Sequence[int], version: int) -> Completion:
    ids = tuple(int(t) for t in output.token_ids)
    steps = output.logprobs or []
    if len(steps) != len(ids):
        raise InferenceError(f"vllm returned {len(steps)} logprob steps for {len(ids)} tokens")
    lps = tuple(float(step[t].logprob) for step, t in zip(steps, ids))
    reason = output.finish_reason if output.finish_reason in ("stop", "length") else "stop"
    return Completion(output.text, ids, lps, reason, version, tuple(int(t) for t in prompt_ids or ()))
