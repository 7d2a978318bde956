"""LoRA training: only the adapter trains and sits in the optimizer, the base never moves,
the rollout backend receives the adapter alone and samples exactly as with a full sync.

Real pieces: the tiny Llama model wrapped by peft, the HF backend, the reference RL loop on
a real domain and verifier.
"""

import copy

import pytest
import torch

from posttrain.core.errors import ConfigError
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.models.tiny import build_tiny_model
from posttrain.trainer.lora import (adapter_state_dict, frozen_copy, is_lora, sync_weights,
                                    trainable_counts)
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.phases import load_policy, run_dpo, run_sft
from posttrain.trainer.reference_loop import train_rl
from posttrain.trainer.sft import pad_id_of
from posttrain.trainer.tasks import make_stream
from posttrain.trainer.validate import check_run_config


def _rl(cfg, model, tok, backend):
    opt, sched = optimizer_from_config(model, cfg.rl)
    stream = make_stream(cfg.domains, cfg.seed, cfg.curriculum, cfg.rl.prompts_per_step)
    train_rl(model, opt, backend, stream, cfg.rl, pad_id=pad_id_of(tok), seed=cfg.seed,
             lr_scheduler=sched, ref_model=frozen_copy(model))
    return opt


def test_only_adapter_trains_and_base_stays_bit_identical(make_cfg):
    cfg = make_cfg()
    model, tok = load_policy(cfg)
    assert is_lora(model)
    adapter = {n: p for n, p in model.named_parameters() if "lora_" in n}
    losses = []  # SFT trains the same adapter (most answers become right)
    run_sft(model, tok, cfg, on_step=lambda s, m: losses.append(m["sft/loss"]))
    assert losses[-1] < losses[0] / 2
    before = {n: p.detach().clone() for n, p in adapter.items()}
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    opt = _rl(cfg, model, tok, backend)
    held = [p for g in opt.param_groups for p in g["params"]]
    # identity, not just count: the optimizer holds exactly the adapter's tensors
    assert {id(p) for p in held} == {id(p) for p in adapter.values()} and len(held) == len(adapter)
    assert sum(p.numel() for p in held) == trainable_counts(model)["trainable"] < \
        trainable_counts(model)["total"] / 5
    moved = [n for n, p in adapter.items() if not torch.equal(p, before[n])]
    assert any("lora_B" in n for n in moved) and any("lora_A" in n for n in moved)
    fresh, _ = build_tiny_model(cfg.model.tiny, seed=cfg.seed)
    base = {k.replace(".base_layer", ""): v for k, v in model.get_base_model().state_dict().items()
            if "lora_" not in k}
    assert set(base) == set(fresh.state_dict())
    for name, t in fresh.state_dict().items():
        assert torch.equal(base[name], t), f"base weight {name} changed"
    # the backend got every version: it now computes what the policy does
    assert backend.policy_version == cfg.rl.steps
    for n, t in adapter_state_dict(model).items():
        assert torch.equal(backend.model.state_dict()[n], t)


def test_adapter_only_sync_samples_like_full_sync(make_cfg):
    cfg = make_cfg()
    model, tok = load_policy(cfg)
    with torch.no_grad():  # a trained-looking adapter: B no longer zero
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn_like(p) * 0.5)
    full, part = (HFBackend(copy.deepcopy(load_policy(cfg)[0]).eval(), tok) for _ in range(2))
    full.load_weights(1, model.state_dict())
    sent = sync_weights(model)
    part.load_weights(1, sent)
    params = SamplingParams(n=4, temperature=1.0, max_new_tokens=8, seed=5)
    prompts = [[{"role": "user", "content": "12+7="}], [{"role": "user", "content": "3+4="}]]
    a, b = full.generate(prompts, params), part.generate(prompts, params)
    assert [[c.token_ids_T for c in g] for g in a] == [[c.token_ids_T for c in g] for g in b]
    assert [[c.logprobs_T for c in g] for g in a] == [[c.logprobs_T for c in g] for g in b]
    sent_bytes = sum(t.numel() * t.element_size() for t in sent.values())
    full_bytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    assert sent_bytes < full_bytes / 5
    with pytest.raises(Exception, match="weights missing"):  # a partial dict that is not the adapter
        part.load_weights(2, dict(list(sent.items())[:-1]))


def test_frozen_reference_shares_the_base_and_is_exact(make_cfg):
    cfg = make_cfg()
    model, _ = load_policy(cfg)
    ref = frozen_copy(model)
    base_ids = {id(p) for n, p in model.named_parameters() if "lora_" not in n}
    ref_ids = {id(p) for p in ref.parameters()}
    assert base_ids <= ref_ids  # no second copy of the base
    adapter_ref = [p for n, p in ref.named_parameters() if "lora_" in n]
    assert adapter_ref and not ({id(p) for p in adapter_ref} & {id(p) for p in model.parameters()})
    assert not any(p.requires_grad for p in ref.parameters())
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.add_(0.3)  # the policy moves on; the reference must not
        assert not torch.equal(model(input_ids=ids).logits, ref(input_ids=ids).logits)
        with model.disable_adapter():  # B was zero when copied: the reference is the base, exactly
            assert torch.equal(ref(input_ids=ids).logits, model(input_ids=ids).logits)


@pytest.mark.parametrize("targets, bad", [(["q_proj", "qkv"], "qkv"), (["attn"], "attn")])
def test_unknown_target_module_is_a_config_error_naming_the_layers(make_cfg, targets, bad):
    cfg = make_cfg(model__lora__target_modules=targets)
    with pytest.raises(ConfigError) as err:
        check_run_config(cfg)
    msg = str(err.value)
    assert bad in msg and "model.lora.target_modules" in msg
    for name in ("q_proj", "down_proj", "lm_head"):  # the model's linear layers are listed
        assert name in msg


def test_lora_with_the_process_executor_is_refused(make_cfg):
    with pytest.raises(ConfigError, match="executor"):
        check_run_config(make_cfg(rl__max_policy_lag=1, async_rl__executor="process"))
    check_run_config(make_cfg(rl__max_policy_lag=1))  # threads: fine
    with pytest.raises(Exception):
        make_cfg(model__lora__r=0)  # pydantic: r >= 1


def test_dpo_trains_the_adapter_against_its_frozen_copy(make_cfg):
    cfg = make_cfg(dpo__steps=2, dpo__batch_size=4)
    model, tok = load_policy(cfg)
    run_sft(model, tok, cfg)
    base = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}
    adapter = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}
    backend = HFBackend(copy.deepcopy(model).eval(), tok)
    metrics = run_dpo(model, backend, cfg, pad_id=pad_id_of(tok))
    assert metrics and backend.policy_version >= 1  # pairs were found and a step was synced
    now = dict(model.named_parameters())
    assert any(not torch.equal(now[n], t) for n, t in adapter.items())
    assert all(torch.equal(now[n], t) for n, t in base.items())
    for n, t in adapter_state_dict(model).items():  # the backend holds the trained adapter
        assert torch.equal(backend.model.state_dict()[n], t)
