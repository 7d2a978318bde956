"""The HTTP API of posttrain serve, called raw: fields, extensions, top logprobs, errors, auth, record.

One real server (uvicorn thread, loopback) over the saved tiny model; every assertion is about
what comes over the wire, checked against the in-process backend or a forward pass.
"""

from __future__ import annotations

import pytest
import torch
from serve_helpers import call, serving

from posttrain.inference.base import SamplingParams
from posttrain.serve import Recorder, ServedModel, ServeSpec, read_records

CHAT = [{"role": "user", "content": "12+34="}]


@pytest.fixture(scope="module")
def server(folders, tmp_path_factory):
    log = tmp_path_factory.mktemp("record") / "answers.jsonl"
    with serving(ServeSpec(folders=[folders["v1"]]), recorder=Recorder(log)) as (url, _):
        yield url, log


def _forward_logprobs(hf, prompt, answer, temperature):
    with torch.no_grad():
        logits = hf.model(torch.tensor([list(prompt) + list(answer)])).logits[0].float()
    return torch.log_softmax(logits[len(prompt) - 1:-1] / temperature, -1)


def test_chat_extensions_and_top_logprobs(server, local):
    url, _ = server
    body = {"model": "policy", "messages": CHAT, "n": 2, "temperature": 0.7, "seed": 5, "max_tokens": 6,
            "logprobs": True, "top_logprobs": 3, "return_token_ids": True, "return_tokens_as_token_ids": True}
    status, answer, headers = call(url, "/v1/chat/completions", body)
    assert status == 200 and answer["object"] == "chat.completion" and answer["model"] == "v1"
    assert headers["x-posttrain-route"] == "default"
    hf = local["v1"]
    direct = hf.generate([CHAT], SamplingParams(n=2, temperature=0.7, seed=5, max_new_tokens=6))[0]
    assert answer["prompt_token_ids"] == list(direct[0].prompt_token_ids)
    assert answer["usage"]["completion_tokens"] == sum(len(c.token_ids_T) for c in direct)
    for choice, d in zip(answer["choices"], direct):
        assert choice["token_ids"] == list(d.token_ids_T) and choice["message"]["content"] == d.text
        assert choice["policy_version"] == 0 and choice["finish_reason"] == d.finish_reason
        content = choice["logprobs"]["content"]
        assert [c["token"] for c in content] == [f"token_id:{t}" for t in d.token_ids_T]
        assert [c["logprob"] for c in content] == list(d.logprobs_T)
        full = _forward_logprobs(hf, d.prompt_token_ids, d.token_ids_T, 0.7)
        for step, c in enumerate(content):
            tops = c["top_logprobs"]
            ids = [int(t["token"].split(":")[1]) for t in tops]
            assert len(tops) == 3 and ids == full[step].topk(3).indices.tolist()
            assert [t["logprob"] for t in tops] == pytest.approx(full[step].topk(3).values.tolist(), abs=1e-5)
            assert c["logprob"] == pytest.approx(full[step][d.token_ids_T[step]].item(), abs=1e-4)


def test_completions_from_text_and_ids(server, local):
    url, _ = server
    served = ServedModel("in-process", local["v1"])
    ids = local["v1"].render(CHAT)
    body = {"prompt": [ids, "7*8="], "max_tokens": 5, "temperature": 0, "logprobs": 2,
            "return_token_ids": True}
    status, answer, _ = call(url, "/v1/completions", body)
    assert status == 200 and answer["object"] == "text_completion" and len(answer["choices"]) == 2
    text_ids = served.encode("7*8=", add_special_tokens=True)
    direct = [g[0] for g in served.complete([ids, text_ids], SamplingParams(greedy=True, max_new_tokens=5))]
    for choice, d in zip(answer["choices"], direct):
        assert choice["prompt_token_ids"] == list(d.prompt_token_ids)
        assert choice["token_ids"] == list(d.token_ids_T) and choice["text"] == d.text
        lp = choice["logprobs"]
        assert lp["token_logprobs"] == list(d.logprobs_T)
        assert lp["tokens"] == [served.token_text(t) for t in d.token_ids_T]
        # greedy: the sampled token is the most likely one, listed with its behaviour logprob
        for tok, value, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"]):
            assert top[tok] == value and max(top.values()) == value and len(top) <= 3
    assert answer["usage"]["prompt_tokens"] == len(ids) + len(text_ids)


def test_hf_generate_ids_samples_as_generate(local):
    """The public ids entry serve uses: the same rendered ids and seed give generate()'s samples."""
    backend = local["v1"]
    params = SamplingParams(n=3, max_new_tokens=6, seed=4, temperature=1.3)
    chats = [CHAT, [{"role": "user", "content": "12+5="}]]
    by_chat = backend.generate(chats, params)
    by_ids = backend.generate_ids([backend.render(c) for c in chats], params)
    assert [[(c.token_ids_T, c.logprobs_T, c.text) for c in g] for g in by_ids] == \
        [[(c.token_ids_T, c.logprobs_T, c.text) for c in g] for g in by_chat]
    assert backend.generate_ids([], params) == []


def test_every_answer_is_recorded(server):
    url, log = server
    before = len(read_records(log)) if log.exists() else 0
    body = {"messages": CHAT, "n": 3, "max_tokens": 4, "seed": 1, "metadata": {"episode": "e7"},
            "return_token_ids": True, "logprobs": True}
    _, answer, _ = call(url, "/v1/chat/completions", body)
    records = read_records(log)
    assert len(records) == before + 1
    rec = records[-1]
    assert rec["endpoint"] == "chat" and rec["model"] == "v1" and rec["metadata"] == {"episode": "e7"}
    assert [c["token_ids"] for c in rec["choices"]] == [c["token_ids"] for c in answer["choices"]]
    assert [c["logprobs"] for c in rec["choices"]] == [[t["logprob"] for t in c["logprobs"]["content"]]
                                                       for c in answer["choices"]]
    assert all(c["prompt_token_ids"] == answer["prompt_token_ids"] for c in rec["choices"])


@pytest.mark.parametrize("path,body,status,param", [
    ("/v1/chat/completions", {"model": "v9", "messages": CHAT}, 404, "model"),
    ("/v1/chat/completions", {"messages": CHAT, "n": 0}, 400, "n"),
    ("/v1/chat/completions", {"messages": CHAT, "top_p": 0}, 400, "top_p"),
    ("/v1/chat/completions", {"messages": CHAT, "temperature": -1}, 400, "temperature"),
    ("/v1/chat/completions", {"messages": CHAT, "top_logprobs": 99, "logprobs": True}, 400, "top_logprobs"),
    ("/v1/chat/completions", {"messages": [{"role": "narrator", "content": "x"}]}, 400, "messages.0.role"),
    ("/v1/chat/completions", {"messages": []}, 400, "messages"),
    ("/v1/chat/completions", {"messages": CHAT, "stream": True}, 400, "stream"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "9" * 2000}]}, 400, None),
    ("/v1/completions", {"prompt": [[1, 2, 100000]]}, 400, "prompt"),
    ("/v1/completions", {"prompt": []}, 400, "prompt"),
    ("/v1/completions", {"prompt": "1", "echo": True}, 400, "echo"),
    ("/v1/nothing", {}, 404, None),
])
def test_errors_are_openai_shaped(server, path, body, status, param):
    url, _ = server
    got, answer, _ = call(url, path, body)
    assert got == status
    err = answer["error"]
    assert err["code"] == status and err["message"] and err["param"] == param
    assert err["type"] == ("not_found_error" if status == 404 else "invalid_request_error")


def test_malformed_json_is_400(server):
    status, answer, _ = call(server[0], "/v1/chat/completions", raw=b"{not json")
    assert status == 400 and answer["error"]["type"] == "invalid_request_error"


def test_models_lists_the_alias_then_the_versions(server):
    status, answer, _ = call(server[0], "/v1/models")
    assert status == 200
    assert [m["id"] for m in answer["data"]] == ["policy", "v1"] and answer["data"][0]["root"] == "v1"


def test_api_key_is_required_when_set(folders):
    with serving(ServeSpec(folders=[folders["v1"]], names=["tiny"]), api_key="s3cret") as (url, _):
        body = {"messages": CHAT, "max_tokens": 2}
        assert call(url, "/v1/chat/completions", body)[0] == 401
        assert call(url, "/v1/chat/completions", body, {"Authorization": "Bearer wrong"})[0] == 401
        status, answer, _ = call(url, "/v1/chat/completions", body, {"Authorization": "Bearer s3cret"})
        assert status == 200 and answer["model"] == "tiny"
        assert call(url, "/health")[0] == 200  # outside /v1: no key needed
