"""SFT: answer-only loss mask with a real tokenizer; loss falls on a toy copy task."""

import random
import time

import torch
from trainer_helpers import char_tokenizer, tiny_llama

from posttrain.trainer.optim import build_lr_schedule, build_optimizer
from posttrain.trainer.sft import build_sft_batch, collate_sft, sft_loss, sft_step, tokenize_examples


def test_loss_mask_covers_exactly_the_answer_and_eos():
    tok = char_tokenizer()
    batch = build_sft_batch(tok, [([{"role": "user", "content": "12+3"}], "15"),
                                  {"messages": [{"role": "user", "content": "1+1"}], "answer": "2"}])
    ids = batch.input_ids.tolist()
    # "<bos>Q:12+3A:" then "15<eos>"
    assert tok.decode(ids[0]) .replace(" ", "") == "<bos>Q:12+3A:15<eos>"
    answer_0 = [t for t, m in zip(ids[0], batch.loss_mask[0].tolist()) if m]
    assert tok.decode(answer_0).replace(" ", "") == "15<eos>"
    answer_1 = [t for t, m in zip(ids[1], batch.loss_mask[1].tolist()) if m]
    assert tok.decode(answer_1).replace(" ", "") == "2<eos>"
    assert batch.attention_mask[1].sum() == len(tok.apply_chat_template(
        [{"role": "user", "content": "1+1"}], add_generation_prompt=True, tokenize=True)["input_ids"]) + 2
    assert batch.input_ids[1, -1] == tok.pad_token_id  # right-padded


def test_max_length_cuts_the_prompt_never_the_answer():
    tok = char_tokenizer()
    ex = tokenize_examples(tok, [([{"role": "user", "content": "123456789"}], "42")])
    batch = collate_sft(ex, tok.pad_token_id, max_length=6)
    assert batch.input_ids.shape[1] == 6
    assert batch.loss_mask[0].sum() == 3 and batch.stats["sft/truncated"] == 1


def test_cross_entropy_is_the_masked_token_mean():
    tok = char_tokenizer()
    model = tiny_llama(0)
    batch = build_sft_batch(tok, [([{"role": "user", "content": "7"}], "77")])
    loss, metrics = sft_loss(model, batch)
    logp = torch.log_softmax(model(input_ids=batch.input_ids).logits[0, :-1], -1)
    targets = batch.input_ids[0, 1:]
    mask = batch.loss_mask[0, 1:]
    want = -logp[torch.arange(len(targets)), targets][mask].mean()
    assert abs(loss.item() - want.item()) < 1e-5
    assert metrics["sft/tokens"] == 3


def test_sft_learns_a_copy_task():
    tok = char_tokenizer()
    rng = random.Random(0)
    def example():
        s = "".join(rng.choice("0123456789") for _ in range(3))
        return ([{"role": "user", "content": s}], s)
    data = tokenize_examples(tok, [example() for _ in range(2048)])
    model = tiny_llama(0)
    opt = build_optimizer(model, lr=3e-3)
    sched = build_lr_schedule(opt, warmup_steps=10, total_steps=120)
    losses = []
    t0 = time.perf_counter()
    for step in range(120):
        rows = data[(step * 32) % 2048:(step * 32) % 2048 + 32]
        losses.append(sft_step(model, opt, collate_sft(rows, tok.pad_token_id), lr_scheduler=sched)["sft/loss"])
    per_step = (time.perf_counter() - t0) / 120
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    # starts near uniform guessing (ln 32 = 3.47); every answer token is copyable, so the
    # loss can go to 0 (measured: about 3.0 -> 0.1 here)
    assert last < 0.1 * first, (first, last)
    print(f"sft copy: loss {first:.3f} -> {last:.3f}, {per_step * 1e3:.1f} ms/step (B=32)")
