"""FakeBackend: scripted, deterministic completions for the layers above."""

from __future__ import annotations

import pytest

from posttrain.core.errors import InferenceError
from posttrain.inference import InferenceBackend, make_backend
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend

USER = lambda text: [{"role": "user", "content": text}]


def test_callable_script_sees_messages_and_sample_index():
    backend = FakeBackend(lambda messages, j: f"{messages[-1]['content']}#{j}")
    assert isinstance(backend, InferenceBackend)
    groups = backend.generate([USER("a"), USER("b")], SamplingParams(n=3, max_new_tokens=99))
    assert [[c.text for c in g] for g in groups] == [["a#0", "a#1", "a#2"], ["b#0", "b#1", "b#2"]]
    c = groups[0][1]
    assert c.token_ids_T == tuple(b"a#1") and c.logprobs_T == (-0.5,) * 3
    assert c.finish_reason == "stop" and c.prompt_token_ids == tuple(b"user: a\n")
    assert backend.calls[0][1].n == 3


def test_list_script_cycles_across_calls():
    backend = FakeBackend(["x", "y"], logprob=-1.0)
    first = backend.generate([USER("q")], SamplingParams(n=3))
    second = backend.generate([USER("q")], SamplingParams(n=1))
    assert [c.text for c in first[0]] + [second[0][0].text] == ["x", "y", "x", "y"]
    assert first[0][0].logprobs_T == (-1.0,)


def test_dict_script_keys_on_last_user_message():
    backend = make_backend("fake", script={"1+1=": "2", "2+2=": ["4", "5"]})
    groups = backend.generate([USER("1+1="), USER("2+2=")], SamplingParams(n=3))
    assert [[c.text for c in g] for g in groups] == [["2", "2", "2"], ["4", "5", "4"]]
    with pytest.raises(InferenceError, match="no reply"):
        backend.generate([USER("9+9=")], SamplingParams())


def test_stop_and_length_follow_the_real_backends():
    backend = FakeBackend(lambda m, j: "answer: 42</ans> trailing")
    stopped = backend.generate([USER("q")], SamplingParams(stop=("</ans>",), max_new_tokens=100))[0][0]
    assert stopped.text == "answer: 42" and stopped.finish_reason == "stop"
    assert bytes(stopped.token_ids_T) == b"answer: 42</ans>"
    short = backend.generate([USER("q")], SamplingParams(max_new_tokens=6))[0][0]
    assert short.text == "answer" and short.finish_reason == "length" and len(short.token_ids_T) == 6


def test_load_weights_sets_the_version_on_later_completions():
    backend = FakeBackend(["ok"])
    backend.load_weights(7, {"w": 0})
    assert backend.weights == {"w": 0}
    assert backend.generate([USER("q")], SamplingParams())[0][0].policy_version == 7


def test_bad_scripts_are_rejected():
    with pytest.raises(InferenceError):
        FakeBackend([])
    with pytest.raises(InferenceError):
        FakeBackend(42)
    with pytest.raises(InferenceError, match="not str"):
        FakeBackend(lambda m, j: 3).generate([USER("q")], SamplingParams())
