"""LoRA checkpoints in process: the adapter, optimizer and RNG round-trip exactly (continuing
after a load gives bit-identical steps), a damaged adapter file is refused, a LoRA checkpoint
never loads into a full model, and merging a checkpoint equals base + adapter.

Real pieces: peft over the tiny model, the checkpoint module's real files, SFT steps on real
demonstrations, the HF backend for greedy held-out answers.
"""

import copy

import pytest
import torch
import yaml

from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.checkpoint import (CheckpointError, checkpoint_path, load_checkpoint,
                                         save_checkpoint)
from posttrain.trainer.heldout import heldout_accuracy
from posttrain.trainer.lora import adapter_state_dict, merge_checkpoint
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.phases import demonstrations, load_policy
from posttrain.trainer.sft import build_sft_batch, sft_step
from posttrain.trainer.tasks import TaskStream, heldout_tasks


def _steps(model, tok, opt, sched, stream, n):
    out = []
    for _ in range(n):
        batch = build_sft_batch(tok, demonstrations(stream, 8))
        out.append(sft_step(model, opt, batch, lr_scheduler=sched)["sft/loss"])
    return out


def test_lora_checkpoint_resumes_bit_identical(tmp_path, make_cfg):
    cfg = make_cfg(model__lora__dropout=0.1)  # dropout: the RNG state must round-trip too
    model, tok = load_policy(cfg)
    opt, sched = optimizer_from_config(model, cfg.sft, schedule="cosine")
    stream = TaskStream(cfg.domains, seed=1)
    _steps(model, tok, opt, sched, stream, 2)
    ck = save_checkpoint(checkpoint_path(tmp_path, 2), model=model, tokenizer=tok, optimizer=opt,
                         lr_scheduler=sched, step=2, policy_version=2,
                         data_state={"position": stream.position})
    assert (ck / "model" / "adapter_config.json").is_file()
    cont = _steps(model, tok, opt, sched, stream, 3)

    fresh, _ = load_policy(cfg)
    opt2, sched2 = optimizer_from_config(fresh, cfg.sft, schedule="cosine")
    state = load_checkpoint(ck, fresh, opt2, sched2)
    stream2 = TaskStream(cfg.domains, seed=1)
    stream2.position = state.data_state["position"]
    assert _steps(fresh, tok, opt2, sched2, stream2, 3) == cont
    a, b = adapter_state_dict(model), adapter_state_dict(fresh)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    full, _ = load_policy(make_cfg(model__lora=None))
    with pytest.raises(CheckpointError, match="LoRA"):
        load_checkpoint(ck, full)
    weights = ck / "model" / "adapter_model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-3] ^= 0xFF  # same size, one flipped byte: only the checksum sees it
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="checksum"):
        load_checkpoint(ck, fresh)


def test_merged_checkpoint_evaluates_like_base_plus_adapter(tmp_path, make_cfg):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = make_cfg()
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    model, tok = load_policy(cfg)
    with torch.no_grad():  # a trained-looking adapter
        gen = torch.Generator().manual_seed(0)
        for n, p in model.named_parameters():
            if "lora_" in n:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.4)
    save_checkpoint(checkpoint_path(run, 1), model=model, tokenizer=tok, step=1, policy_version=1)
    info = merge_checkpoint(run, tmp_path / "merged")
    assert info["step"] == 1
    plain = AutoModelForCausalLM.from_pretrained(tmp_path / "merged").eval()
    ev = dict(specs=cfg.domains, n_per_domain=16, seed_offset=cfg.eval.seed_offset, max_new_tokens=6)
    want = heldout_accuracy(HFBackend(copy.deepcopy(model).eval(), tok), **ev)
    got = heldout_accuracy(HFBackend(plain, AutoTokenizer.from_pretrained(tmp_path / "merged")), **ev)
    assert want["per_domain"] == got["per_domain"]
    tasks = heldout_tasks(cfg.domains[0], 16, cfg.eval.seed_offset)
    greedy = SamplingParams(n=1, greedy=True, max_new_tokens=6)
    answers = [[g.trajectories[0].turns[-1].action.text for g in play_scheduled(b, tasks, greedy)[0]]
               for b in (HFBackend(copy.deepcopy(model).eval(), tok), HFBackend(plain, tok))]
    assert answers[0] == answers[1] and len(set(answers[0])) > 1  # answer for answer
    ids = torch.tensor([tok("31?7=")["input_ids"]])
    with torch.no_grad():
        assert (model(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() < 1e-4
        with model.disable_adapter():
            assert (model(input_ids=ids).logits - plain(input_ids=ids).logits).abs().max() > 1e-2
    with pytest.raises(CheckpointError, match="neither"):
        merge_checkpoint(tmp_path / "nothing", tmp_path / "m2")
    full, _ = load_policy(make_cfg(model__lora=None))  # a full fine-tuning checkpoint: no adapter
    ck = save_checkpoint(tmp_path / "full_run" / "checkpoints" / "step_00000001", model=full,
                         tokenizer=tok, step=1, policy_version=1)
    with pytest.raises(CheckpointError, match="full weights"):
        merge_checkpoint(ck, tmp_path / "m3")
