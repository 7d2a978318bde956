"""OpenAICompatBackend: real HTTP round trips to ``posttrain serve`` (the real app) over the HF backend."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest
from inference_helpers import addition_prompts, max_logprob_error, tiny
from openai_server import serve

from posttrain.core.errors import InferenceError
from posttrain.inference import make_backend
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.inference.openai_compat import OpenAICompatBackend

PAIRS = [(1, 2), (12, 34), (5, 66)]


@pytest.fixture(scope="module")
def hf():
    return HFBackend(*tiny(0))


def test_round_trip_matches_the_backend_behind_the_server(hf):
    prompts = addition_prompts(PAIRS)
    params = SamplingParams(n=3, temperature=0.9, max_new_tokens=8, seed=4, stop=("7",))
    # One request per prompt, so the server samples each prompt alone with the seed.
    direct = [hf.generate([p], params)[0] for p in prompts]
    with serve(hf) as (url, log):
        client = OpenAICompatBackend(url, max_workers=3)
        remote = client.generate(prompts, params)
    assert log[0]["model"] == "policy"  # discovered through /v1/models: the routing alias
    assert log[0]["logprobs"] is True and log[0]["n"] == 3 and log[0]["stop"] == ["7"]
    assert [len(g) for g in remote] == [3, 3, 3]
    for gd, gr in zip(direct, remote):
        for d, r in zip(gd, gr):
            assert (r.text, r.token_ids_T, r.finish_reason) == (d.text, d.token_ids_T, d.finish_reason)
            assert r.prompt_token_ids == d.prompt_token_ids
            assert r.logprobs_T == pytest.approx(d.logprobs_T, abs=1e-6)
    assert max_logprob_error(hf.model, remote, temperature=0.9) < 1e-4


def test_greedy_sends_temperature_zero_and_tools(hf, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # loopback calls must bypass it
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    with serve(hf) as (url, log):
        client = make_backend("openai", base_url=url + "/v1", model="tiny")
        out = client.generate(addition_prompts(PAIRS[:1]), SamplingParams(greedy=True, max_new_tokens=4,
                                                                          tools=(tool,)))
    assert log[0]["temperature"] == 0.0 and log[0]["tools"] == [tool]
    direct = hf.generate(addition_prompts(PAIRS[:1]), SamplingParams(greedy=True, max_new_tokens=4,
                                                                      tools=(tool,)))
    assert out[0][0].token_ids_T == direct[0][0].token_ids_T


def test_server_without_token_ids_gives_empty_ids_and_logprobs(hf):
    """Not asked for vLLM's token-id extensions, the server answers like plain OpenAI (token strings)."""
    with serve(hf) as (url, log):
        client = OpenAICompatBackend(url, model="tiny", request_token_ids=False)
        out = client.generate(addition_prompts(PAIRS[:2]), SamplingParams(n=2, max_new_tokens=5, seed=0))
    assert "return_token_ids" not in log[0]
    for c in (c for g in out for c in g):
        assert c.token_ids_T == () and c.logprobs_T == () and c.prompt_token_ids == ()
        assert isinstance(c.text, str) and c.finish_reason in ("stop", "length")


def test_retries_5xx_then_succeeds_and_reports_4xx(hf):
    with serve(hf, fail_first=1) as (url, log):
        client = OpenAICompatBackend(url, model="tiny", retries=2)
        out = client.generate(addition_prompts(PAIRS[:1]), SamplingParams(max_new_tokens=3, seed=0))
        assert len(log) == 2 and len(out[0][0].token_ids_T) <= 3
        with pytest.raises(InferenceError, match="HTTP 400"):
            client.generate([[{"role": "narrator", "content": "x"}]], SamplingParams())


def test_unreachable_server_is_an_inference_error():
    with socket.socket() as sock:  # a free port, closed again: nothing listens there
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client = OpenAICompatBackend(url, model="tiny", retries=0, timeout_s=2)
    with pytest.raises(InferenceError, match="unreachable"):
        client.generate(addition_prompts(PAIRS[:1]), SamplingParams())


def test_load_weights_needs_a_hook_unless_updated_out_of_band():
    seen = []
    client = OpenAICompatBackend("http://127.0.0.1:9", on_load_weights=lambda v, w: seen.append((v, w)))
    client.load_weights(2, {"w": 1})
    assert seen == [(2, {"w": 1})] and client.policy_version == 2
    bare = OpenAICompatBackend("http://127.0.0.1:9")
    bare.load_weights(3, None)
    assert bare.policy_version == 3
    with pytest.raises(InferenceError, match="cannot receive weights"):
        bare.load_weights(4, {"w": 1})


def test_server_versions_records_the_version_the_server_reports():
    served = HFBackend(*tiny(0), policy_version=7)
    prompts, params = addition_prompts(PAIRS[:1]), SamplingParams(max_new_tokens=2, seed=0)
    with serve(served) as (url, _):
        own = OpenAICompatBackend(url, policy_version=3)
        trusting = OpenAICompatBackend(url, policy_version=3, server_versions=True)
        assert own.generate(prompts, params)[0][0].policy_version == 3
        assert trusting.generate(prompts, params)[0][0].policy_version == 7
        served.load_weights(8, None)  # the server's engine was updated behind the client's back
        assert trusting.generate(prompts, params)[0][0].policy_version == 8
        assert own.generate(prompts, params)[0][0].policy_version == 3

@pytest.mark.vllm
def test_vllm_engine_behind_the_same_api():
    """``posttrain serve --engine vllm``: the vllm backend behind the API answers what it samples
    in process (chat and completions from ids); top logprobs, which need a torch model, are refused."""
    pytest.importorskip("vllm")
    from vllm_engine import reset_to, shared_backend

    backend = shared_backend()
    model = reset_to(backend, 0)
    prompts = addition_prompts(PAIRS)
    params = SamplingParams(n=2, temperature=0.8, max_new_tokens=6, seed=3)
    with serve(backend) as (url, _):
        remote = OpenAICompatBackend(url, max_workers=3).generate(prompts, params)
        ids = backend.render(prompts[0])
        status, answer = _post(url + "/v1/completions", {"prompt": ids, "max_tokens": 5, "temperature": 0,
                                                         "return_token_ids": True, "logprobs": 0})
        refused, _ = _post(url + "/v1/chat/completions", {"messages": prompts[0], "logprobs": True,
                                                          "top_logprobs": 2})
    direct = [backend.generate([p], params)[0] for p in prompts]
    for gr, gd in zip(remote, direct):
        assert [(c.token_ids_T, c.text, c.prompt_token_ids) for c in gr] == \
            [(c.token_ids_T, c.text, c.prompt_token_ids) for c in gd]
        for r, d in zip(gr, gd):
            assert r.logprobs_T == pytest.approx(d.logprobs_T, abs=1e-6)
    greedy = backend.generate_ids([ids], SamplingParams(greedy=True, max_new_tokens=5))[0][0]
    assert status == 200 and answer["choices"][0]["token_ids"] == list(greedy.token_ids_T)
    assert answer["choices"][0]["logprobs"]["token_logprobs"] == pytest.approx(list(greedy.logprobs_T), abs=1e-6)
    assert refused == 400
    assert max_logprob_error(model, remote, temperature=0.8) < 1e-3


def _post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
