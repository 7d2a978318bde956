"""Every inference backend honours the InferenceBackend contract (DESIGN.md §3).

Runs on hf (tiny model), fake, and openai (a loopback server in front of hf). On a GPU
host with vllm installed, add a "vllm" case pointing at a saved tiny model folder.
"""

from __future__ import annotations

import math
from contextlib import ExitStack

import pytest
from inference_helpers import addition_prompts, tiny
from openai_server import serve

from posttrain.inference import InferenceBackend, make_backend
from posttrain.inference.base import SamplingParams

STOPS = ("9", "Z")


@pytest.fixture(scope="module", params=["hf", "fake", "openai"])
def case(request):
    with ExitStack() as stack:
        if request.param == "fake":
            backend = make_backend("fake", script=lambda m, j: f"{len(m[-1]['content'])}Z{j}" * (j + 1))
            yield backend, {"w": 1}
            return
        model, tok = tiny(0)
        hf = make_backend("hf", model=model, tokenizer=tok)
        if request.param == "hf":
            yield hf, tiny(1)[0].state_dict()
            return
        url, _ = stack.enter_context(serve(hf))
        yield make_backend("openai", base_url=url, model="tiny"), None


def test_shapes_and_records(case):
    backend, _ = case
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
    backend, _ = case
    prompts = addition_prompts([(7, 8), (9, 10)])
    params = SamplingParams(n=2, max_new_tokens=5, seed=123)
    a, b = backend.generate(prompts, params), backend.generate(prompts, params)
    assert [[(c.text, c.token_ids_T) for c in g] for g in a] == [[(c.text, c.token_ids_T) for c in g] for g in b]


def test_load_weights_bumps_the_version(case):
    backend, weights = case
    version = backend.policy_version + 1
    backend.load_weights(version, weights)
    assert backend.policy_version == version
    out = backend.generate(addition_prompts([(1, 1)]), SamplingParams(n=2, max_new_tokens=3, seed=0))
    assert all(c.policy_version == version for c in out[0])
