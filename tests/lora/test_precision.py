"""Activation checkpointing and autocast against the plain path: equal loss and gradients
(bitwise for checkpointing, with dropout on; within bf16 tolerance for autocast), and the
wrong implementations these tests exist for are caught: a checkpoint that does not restore the
dropout RNG, and autocast whose low-precision logits reach the logprobs.

Real pieces: the tiny Llama model (with attention dropout and a LoRA adapter with dropout),
torch.utils.checkpoint through transformers, torch.autocast on this CPU.
"""

import torch
import torch.nn.functional as F

from posttrain.models.tiny import build_tiny_model
from posttrain.trainer.lora import apply_lora
from posttrain.trainer.precision import (cpu_has_bf16, enable_activation_checkpointing,
                                         enable_autocast, resolve_autocast)

IDS = torch.randint(0, 100, (3, 24), generator=torch.Generator().manual_seed(1))


def _model(make_cfg, **lora):
    cfg = make_cfg(model__lora__dropout=0.2, **lora)
    model, _ = build_tiny_model(cfg.model.tiny, seed=cfg.seed)
    model.config.attention_dropout = 0.1
    return model, cfg


def _loss_and_grads(model, seed=7):
    model.train()
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    logits = model(input_ids=IDS).logits
    logp = F.log_softmax(logits[:, :-1], -1).gather(-1, IDS[:, 1:, None]).squeeze(-1)
    loss = -logp.mean()
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return loss.detach(), logp.detach(), grads


def test_activation_checkpointing_equals_plain_with_dropout(make_cfg):
    plain, cfg = _model(make_cfg)
    plain = apply_lora(plain, cfg.model.lora, seed=cfg.seed)
    ckpt, _ = _model(make_cfg)
    enable_activation_checkpointing(ckpt)
    ckpt = apply_lora(ckpt, cfg.model.lora, seed=cfg.seed)
    l0, _, g0 = _loss_and_grads(plain)
    l1, _, g1 = _loss_and_grads(ckpt)
    assert torch.equal(l0, l1) and g0.keys() == g1.keys() and g0
    for n in g0:
        assert torch.allclose(g0[n], g1[n], rtol=1e-5, atol=1e-7), n
    # the control: a checkpoint that does not restore the RNG draws new dropout masks in the
    # recomputation, and the gradients are wrong (this test would see it)
    ckpt.base_model.model.activation_checkpointing_enable(
        activation_checkpointing_kwargs={"use_reentrant": False, "preserve_rng_state": False})
    _, _, g2 = _loss_and_grads(ckpt)
    assert any(not torch.allclose(g0[n], g2[n], rtol=1e-3, atol=1e-5) for n in g0)


def test_autocast_choice_follows_the_device():
    assert resolve_autocast("none", "cpu") is None
    assert resolve_autocast("fp16", "cpu") is None  # no native fp16 on x86 CPUs: float32
    assert resolve_autocast("bf16", "cpu") == (torch.bfloat16 if cpu_has_bf16() else None)


def test_autocast_matches_plain_within_tolerance_and_logprobs_stay_float32(make_cfg):
    plain, cfg = _model(make_cfg)
    plain.config.attention_dropout = 0.0
    cast, _ = _model(make_cfg)
    cast.config.attention_dropout = 0.0
    enable_autocast(cast, torch.bfloat16, "cpu")  # forced: CPU autocast runs bf16 everywhere
    l0, lp0, g0 = _loss_and_grads(plain)
    l1, lp1, g1 = _loss_and_grads(cast)
    assert lp1.dtype == torch.float32
    assert not torch.equal(l0, l1)  # it really ran in bf16
    assert abs(float(l0 - l1)) < 2e-2 * abs(float(l0))
    assert (lp0 - lp1).abs().max() < 0.1
    for n in g0:
        cos = F.cosine_similarity(g0[n].flatten(), g1[n].flatten(), dim=0)
        assert cos > 0.98, (n, float(cos))
    # the control: autocast around the whole computation leaks bf16 into the logits (and so
    # into logprobs): the float32 check above is what tells the two apart
    with torch.autocast("cpu", dtype=torch.bfloat16):
        leaked = plain(input_ids=IDS).logits
    assert leaked.dtype == torch.bfloat16
    assert cast._pt_autocast_stack == []  # every forward left its autocast region


def test_run_config_knobs_reach_the_policy(make_cfg):
    from posttrain.trainer.phases import load_policy

    cfg = make_cfg(model__activation_checkpointing=True, model__autocast="bf16")
    model, _ = load_policy(cfg)
    inner = model.get_base_model()
    assert inner.is_activation_checkpointing if hasattr(inner, "is_activation_checkpointing") \
        else inner.is_gradient_checkpointing
    assert getattr(inner, "_pt_autocast", None) == (("cpu", torch.bfloat16) if cpu_has_bf16() else None)
    loss, logp, grads = _loss_and_grads(model)
    assert logp.dtype == torch.float32 and grads and all("lora_" in n for n in grads)
