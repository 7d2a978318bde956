"""VLLMBackend on a real vLLM engine (the CPU build) serving the saved tiny model.

Everything but the first test is marked ``vllm`` and needs vllm installed: ``make test-vllm``
runs them in ``.venv-vllm``; in the main venv they skip. The shared contract (shapes, seeds,
versions, logprobs) is in test_backend_conformance.py's ``vllm`` case; this file checks what
is specific to an engine with its own KV cache: weight updates reaching it, the prefix cache
after an update, stop/eos/length behaviour, and agreement with the trainer's logprobs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inference_helpers import addition_prompts, max_logprob_error, tiny

from posttrain.core.errors import InferenceError, MissingExtraError
from posttrain.inference import make_backend
from posttrain.inference.base import SamplingParams

PAIRS = [(1, 2), (12, 34), (123, 4567), (5, 66), (90, 1)]
# 180+ prompt ids: more than one 128-token KV block, so vllm's prefix cache really holds some.
LONG_SYSTEM = {"role": "system", "content": "You are a careful calculator. " * 6}


def test_missing_vllm_raises_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError, installed or not
    with pytest.raises(MissingExtraError) as info:
        make_backend("vllm", model="/nonexistent")
    assert info.value.extra == "vllm" and "pip install 'posttrain[vllm]'" in str(info.value)


@pytest.fixture
def engine():
    """The shared engine with tiny(0)'s weights, and the HF model that has them."""
    pytest.importorskip("vllm")
    from vllm_engine import reset_to, shared_backend

    backend = shared_backend()
    return backend, reset_to(backend, 0)


def _greedy(backend, prompts, n_tokens=6):
    return [g[0].token_ids_T for g in backend.generate(prompts, SamplingParams(greedy=True, max_new_tokens=n_tokens))]


@pytest.mark.vllm
def test_prompts_render_as_in_the_hf_backend_and_greedy_agrees(engine):
    backend, model = engine
    hf = make_backend("hf", model=model, tokenizer=tiny(0)[1])
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    prompts = addition_prompts(PAIRS, system=True)
    params = SamplingParams(greedy=True, max_new_tokens=8, tools=(tool,))
    ours, theirs = backend.generate(prompts, params), hf.generate(prompts, params)
    for a, b in zip(ours, theirs):
        assert a[0].prompt_token_ids == b[0].prompt_token_ids
        assert a[0].token_ids_T == b[0].token_ids_T and a[0].text == b[0].text
    assert max_logprob_error(model, ours) < 1e-4  # greedy logprobs are at temperature 1


@pytest.mark.vllm
def test_stop_strings_cut_text_and_keep_ids(engine):
    backend, model = engine
    tok = backend.tokenizer
    stops = ("ab", "x", "7", "Q", "z", ":", "k", "(", "m")
    groups = backend.generate(addition_prompts(PAIRS), SamplingParams(
        n=8, temperature=1.5, max_new_tokens=40, stop=stops, seed=11))
    stopped = 0
    for c in (c for g in groups for c in g):
        assert len(c.token_ids_T) <= 40 and not any(s in c.text for s in stops)
        full = tok.decode(list(c.token_ids_T), skip_special_tokens=True)
        assert full.startswith(c.text)
        if c.finish_reason == "stop" and c.token_ids_T[-1] != tok.eos_token_id:
            stopped += 1  # the last id completed the stop string; one id fewer did not
            assert any(full.endswith(s) for s in stops)
            assert not any(s in tok.decode(list(c.token_ids_T[:-1]), skip_special_tokens=True) for s in stops)
        elif c.finish_reason == "length":
            assert len(c.token_ids_T) == 40
    assert stopped >= 10
    assert max_logprob_error(model, groups, temperature=1.5) < 1e-4


@pytest.mark.vllm
def test_eos_finishes_with_stop_and_is_kept_in_ids(engine):
    backend, _ = engine
    eos_id = backend.tokenizer.eos_token_id
    groups = backend.generate(addition_prompts(PAIRS), SamplingParams(n=16, temperature=2.0,
                                                                      max_new_tokens=60, seed=5))
    eos = [c for g in groups for c in g if c.token_ids_T and c.token_ids_T[-1] == eos_id]
    assert eos, "a hot sample over 105 ids should hit <eos> somewhere"
    for c in eos:
        assert c.finish_reason == "stop" and eos_id not in c.token_ids_T[:-1]
        assert c.text == backend.tokenizer.decode(list(c.token_ids_T[:-1]), skip_special_tokens=True)


@pytest.mark.vllm
def test_samples_differ_within_a_group_and_across_repeated_prompts(engine):
    backend, _ = engine
    same = addition_prompts([(4, 4)] * 3)
    groups = backend.generate(same, SamplingParams(n=4, max_new_tokens=8, seed=9))
    assert len({c.token_ids_T for c in groups[0]}) > 1  # n samples of one prompt differ
    # one seed per call, but each prompt draws its own stream: repeated prompts are not clones
    assert len({tuple(c.token_ids_T for c in g) for g in groups}) == 3
    other = backend.generate(same, SamplingParams(n=4, max_new_tokens=8, seed=10))
    assert [[c.token_ids_T for c in g] for g in other] != [[c.token_ids_T for c in g] for g in groups]


@pytest.mark.vllm
def test_length_budget_context_limit_and_bad_params(engine):
    backend, _ = engine
    prompts = addition_prompts(PAIRS[:1])
    zero = backend.generate(prompts, SamplingParams(max_new_tokens=0, n=2))
    assert [c.token_ids_T for c in zero[0]] == [(), ()] and zero[0][0].finish_reason == "length"
    out = backend.generate([[{"role": "user", "content": "1" * 250}]],  # 252 of 256 positions
                           SamplingParams(greedy=True, max_new_tokens=50))
    assert len(out[0][0].token_ids_T) <= 4
    with pytest.raises(InferenceError, match="positions"):
        backend.generate([[{"role": "user", "content": "1" * 300}]], SamplingParams())
    with pytest.raises(InferenceError, match="top_p"):
        backend.generate(prompts, SamplingParams(top_p=0.0))
    with pytest.raises(InferenceError, match="temperature"):  # vllm's own bound (<= 2)
        backend.generate(prompts, SamplingParams(temperature=3.0))
    assert backend.generate([], SamplingParams()) == []


@pytest.mark.vllm
def test_top_p_logprobs_are_of_the_truncated_distribution(engine):
    """The documented difference from the HF backend: vllm's processed logprobs follow top-p."""
    backend, _ = engine
    prompts = addition_prompts(PAIRS[:2])
    nucleus = backend.generate(prompts, SamplingParams(n=2, temperature=0.8, top_p=1e-6,
                                                       max_new_tokens=5, seed=0))
    assert [g[0].token_ids_T for g in nucleus] == _greedy(backend, prompts, 5)
    assert all(lp == 0.0 for g in nucleus for c in g for lp in c.logprobs_T)  # log(1)


@pytest.mark.vllm
def test_weight_update_flips_the_greedy_answer_and_stamps_the_version(engine):
    backend, old = engine
    new, tok = tiny(1)
    prompts = addition_prompts(PAIRS)
    hf_old = _greedy(make_backend("hf", model=old, tokenizer=tok), prompts)
    hf_new = _greedy(make_backend("hf", model=new, tokenizer=tok), prompts)
    assert hf_old != hf_new  # the two weight sets answer differently: the test can tell them apart
    assert _greedy(backend, prompts) == hf_old
    version = backend.policy_version + 7
    backend.load_weights(version, new)  # a module is accepted as well as a state dict
    assert backend.policy_version == version
    assert _greedy(backend, prompts) == hf_new
    groups = backend.generate(prompts, SamplingParams(n=3, max_new_tokens=4, seed=0))
    assert all(c.policy_version == version for g in groups for c in g)
    assert max_logprob_error(new, groups) < 1e-4


@pytest.mark.vllm
def test_prefix_cache_holds_nothing_computed_with_old_weights(engine):
    backend, old = engine
    new = tiny(1)[0]
    prompts = [[LONG_SYSTEM, {"role": "user", "content": f"{a}+{b}="}] for a, b in PAIRS[:2]]
    params = SamplingParams(n=2, temperature=0.7, max_new_tokens=6, seed=2)
    assert len(backend.render(prompts[0])) > 128
    assert max_logprob_error(old, backend.generate(prompts, params), 0.7) < 1e-4  # now cached
    # Control: the same reload without the cache reset serves stale KV, so this test can fail.
    backend.llm.collective_rpc("reload_weights", kwargs={
        "weights_iterator": list(new.state_dict().items()), "is_checkpoint_format": True})
    assert max_logprob_error(new, backend.generate(prompts, params), 0.7) > 1e-2
    backend.load_weights(backend.policy_version + 1, new.state_dict())
    assert max_logprob_error(new, backend.generate(prompts, params), 0.7) < 1e-4


@pytest.mark.vllm
def test_load_weights_rejects_an_incomplete_state_dict(engine):
    backend, old = engine
    state = tiny(1)[0].state_dict()
    del state["model.layers.0.mlp.up_proj.weight"]
    version = backend.policy_version
    with pytest.raises(InferenceError, match="missing"):
        backend.load_weights(version + 1, state)
    assert backend.policy_version == version  # nothing changed: still serving the old weights
    assert max_logprob_error(old, backend.generate(addition_prompts(PAIRS[:2]),
                                                   SamplingParams(max_new_tokens=4, seed=1))) < 1e-4


@pytest.mark.vllm
@pytest.mark.parametrize("temperature", [1.0, 0.6, 1.4])
def test_behaviour_logprobs_agree_with_the_trainer(engine, temperature):
    """vllm's logprobs vs posttrain.trainer.logprobs on the same weights: |Δ log p| and KL."""
    import vllm
    from vllm.inputs import TokensPrompt

    from posttrain.core.types import Completion
    from posttrain.trainer.agreement import logprob_agreement

    backend, model = engine
    prompts = addition_prompts(PAIRS, system=True)
    groups = backend.generate(prompts, SamplingParams(n=4, temperature=temperature,
                                                      max_new_tokens=12, seed=4))
    stats = logprob_agreement(model, groups, temperature)
    assert stats["tokens"] >= 100
    assert stats["mean_abs_logp"] < 1e-5 and stats["max_abs_logp"] < 1e-4 and stats["kl_k3"] < 1e-8
    # The whole behaviour distribution at every step: an exact per-token KL.
    ids = [backend.render(p) for p in prompts]
    raw = backend.llm.generate([TokensPrompt(prompt_token_ids=i) for i in ids], vllm.SamplingParams(
        n=2, temperature=temperature, max_tokens=8, seed=4, logprobs=len(backend.tokenizer)), use_tqdm=False)
    comps, dists = [], []
    for request, prompt in zip(raw, ids):
        for o in request.outputs:
            steps = [{t: lp.logprob for t, lp in step.items()} for step in o.logprobs]
            assert all(len(s) == len(backend.tokenizer) for s in steps)  # the whole vocabulary
            comps.append(Completion(o.text, tuple(o.token_ids),
                                    tuple(s[t] for s, t in zip(steps, o.token_ids)), "stop", 0, tuple(prompt)))
            dists.append(steps)
    exact = logprob_agreement(model, [comps], temperature, distributions=dists)
    assert abs(exact["kl_exact"]) < 1e-6  # float32 rounding either side of 0
    print(f"T={temperature}: {stats} exact KL {exact['kl_exact']:.3g}")


@pytest.mark.vllm
def test_a_wrong_temperature_convention_is_caught(engine):
    """The agreement measure is sensitive: trainer logprobs at temperature 1 for T=0.6 samples."""
    from posttrain.trainer.agreement import logprob_agreement

    backend, model = engine
    groups = backend.generate(addition_prompts(PAIRS), SamplingParams(n=4, temperature=0.6,
                                                                      max_new_tokens=8, seed=4))
    assert logprob_agreement(model, groups, 1.0)["mean_abs_logp"] > 1e-2


@pytest.mark.vllm
def test_out_of_process_engine_gets_weight_updates_too(tmp_path):
    """vllm's GPU default (engine core in another process), on the CPU build, in a fresh
    interpreter: weight updates reach it, and close() ends the engine core process."""
    pytest.importorskip("vllm")
    from posttrain.models.loading import save_model

    save_model(*tiny(0), tmp_path / "tiny")
    here = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(here / "vllm_mp_check.py"), str(tmp_path / "tiny")],
                         capture_output=True, text=True, timeout=480, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith('{"children"')]
    assert lines, run.stdout[-3000:]  # vllm logs to stdout too: pick the report line
    report = json.loads(lines[-1])
    assert report["out_of_process"] and report["answers_differ"]
    assert report["before_is_old"] and report["after_is_new"] and report["versions"] == [5]
    assert report["cached_prompt_error_new"] < 1e-4
    before, running = report["children"]
    assert running > before  # the engine core (and its worker) ran as child processes
    # After close only multiprocessing's resource tracker (started by vLLM's spawn, shared by
    # the process) may remain; no engine core or worker.
    assert [c for c in report["left"] if "resource_tracker" not in c] == [], report["left"]
    assert report["staging_removed"]
