"""Every inference backend honours the InferenceBackend contract (DESIGN.md §3).

Runs on hf (tiny model), fake, openai (a loopback server in front of hf) and vllm (a real
vLLM engine serving the saved tiny model; marked ``vllm``, skipped where vllm is not
installed, run in ``.venv-vllm`` by ``make test-vllm``).
"""

from __future__ import annotations

import math
from contextlib import ExitStack

import pytest
from inference_helpers import addition_prompts, max_logprob_error, tiny
from openai_server import serve

from posttrain.inference import InferenceBackend, make_backend
from posttrain.inference.base import SamplingParams

STOPS = ("9", "Z")


@pytest.fixture(scope="module", params=["hf", "fake", "openai", pytest.param("vllm", marks=pytest.mark.vllm)])
def case(request):
    """``(backend, weights for load_weights, reference model whose logprobs it reports or None)``."""
    with ExitStack() as stack:
        if request.param == "fake":
            backend = make_backend("fake", script=lambda m, j: f"{len(m[-1]['content'])}Z{j}" * (j + 1))
            yield backend, {"w": 1}, None
            return
        if request.param == "vllm":
            pytest.importorskip("vllm")
            from vllm_engine import reset_to, shared_backend

            backend = shared_backend()
            yield backend, tiny(1)[0].state_dict(), reset_to(backend, 0)
            return
        model, tok = tiny(0)
        hf = make_backend("hf", model=model, tokenizer=tok)
        if request.param == "hf":
            yield hf, tiny(1)[0].state_dict(), model
            return
        url, _ = stack.enter_context(serve(hf))
        yield make_backend("openai", base_url=url, model="tiny"), None, model


def test_shapes_and_records(case):
    backend, _, _ = case
    assert isinstance(backend, InferenceBackend)
    prompts = addition_prompts([(1, 2), (30, 4), (55, 66)])
    params = SamplingParams(n=3, max_new_tokens=6, stop=STOPS, seed=1, temperature=1.2)
    groups = backend.generate(prompts, params)
    assert len(groups) == 3 and all(len(g) == 3 for g in groups)
    for c in (c for g in groups for c in g):
        assert len(c.token_ids_T) == len(c.logprobs_T) <= 6
        assert all(math.isfinite(lp) and lp <= 0.0 for lp in c.logprobs_T)
        assert c.finish_reason in ("stop", "length")
        assert c.finish_reason == "stop" or len(c.token_ids_T) == 6
        assert not any(s in c.text for s in STOPS)
        assert c.policy_version == backend.policy_version
        assert c.prompt_token_ids


def test_seeded_calls_repeat(case):
    backend, _, _ = case
    prompts = addition_prompts([(7, 8), (9, 10)])
    params = SamplingParams(n=2, max_new_tokens=5, seed=123)
    a, b = backend.generate(prompts, params), backend.generate(prompts, params)
    assert [[(c.text, c.token_ids_T) for c in g] for g in a] == [[(c.text, c.token_ids_T) for c in g] for g in b]


def test_behaviour_logprobs_are_the_models(case):
    """Per-token logprobs equal a full forward of the reference model at the same temperature."""
    backend, _, model = case
    if model is None:
        pytest.skip("the fake backend reports a fixed logprob")
    prompts = addition_prompts([(3, 4), (56, 7)])
    for temperature in (1.0, 0.7):
        groups = backend.generate(prompts, SamplingParams(n=2, max_new_tokens=6, seed=3,
                                                          temperature=temperature))
        assert all(c.token_ids_T for g in groups for c in g)
        assert max_logprob_error(model, groups, temperature) < 1e-4


def test_load_weights_bumps_the_version(case):
    backend, weights, _ = case
    version = backend.policy_version + 1
    backend.load_weights(version, weights)
    assert backend.policy_version == version
    out = backend.generate(addition_prompts([(1, 1)]), SamplingParams(n=2, max_new_tokens=3, seed=0))
    assert all(c.policy_version == version for c in out[0])
