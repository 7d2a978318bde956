"""Supervised fine-tuning on demonstrations: loss on the answer tokens (and EOS) only.

A demonstration is ``(messages, answer_text)``. Its row is the chat-templated prompt
(``apply_chat_template(messages, add_generation_prompt=True, tokenize=True)``) followed by
``tokenizer(answer_text, add_special_tokens=False)`` and ``eos_token_id``; ``loss_mask`` is
True on the answer and EOS tokens — the tokens the policy will later have to produce — with
the same alignment as :mod:`posttrain.trainer.batch` (token ``t`` is predicted at ``t - 1``).
So the SFT cold start and RL train exactly the same prompt → completion positions.

Speed: tokenise once with :func:`tokenize_examples`, then :func:`collate_sft` per step
(the chat template is the slow part). Only the generic HF tokenizer API is used.

Not here: packing several examples into one row and multi-turn demonstrations (tool calls,
tool results, final answers) — :mod:`posttrain.trainer.sft_multiturn` plays those through the
episode engine and packs them; :func:`sft_loss` and :func:`sft_step` train both kinds of
batch. Rows longer than ``max_length`` are cut from the left of the prompt, never inside the
answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import torch
import torch.nn.functional as F

from .logprobs import forward_logits


@dataclass(frozen=True)
class SFTBatch:
    input_ids: torch.Tensor  # [B, L] long, right-padded
    attention_mask: torch.Tensor  # [B, L] long
    position_ids: torch.Tensor  # [B, L] long
    loss_mask: torch.Tensor  # [B, L] bool, True on answer + EOS tokens
    stats: Mapping[str, float] = field(default_factory=dict)
    images: tuple[tuple[str, ...], ...] | None = None  # per row, base64 PNGs (vision models)


@dataclass(frozen=True)
class TokenizedExample:
    prompt_ids: tuple[int, ...]
    answer_ids: tuple[int, ...]  # answer tokens followed by EOS
    images: tuple[str, ...] = ()  # the prompt's base64 PNGs, in order (its image tokens are in prompt_ids)


def _ids(encoded: Any) -> list[int]:
    """Token ids from whatever a tokenizer call returned (list, BatchEncoding, dict)."""
    if isinstance(encoded, Mapping) or hasattr(encoded, "input_ids"):
        encoded = encoded["input_ids"]
    if hasattr(encoded, "tolist"):
        encoded = encoded.tolist()
    if encoded and isinstance(encoded[0], list):  # a batch of one
        encoded = encoded[0]
    return [int(i) for i in encoded]


def _unpack(example: Any) -> tuple[Sequence[Mapping[str, Any]], str]:
    if isinstance(example, Mapping):
        return example["messages"], example["answer"]
    messages, answer = example
    return messages, answer


def tokenize_examples(tokenizer: Any, examples: Sequence[Any]) -> list[TokenizedExample]:
    """Prompt and answer(+EOS) ids for each ``(messages, answer_text)`` (or ``{"messages", "answer"}``)."""
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no eos_token_id; SFT must teach the model to stop")
    out = []
    for example in examples:
        messages, answer = _unpack(example)
        prompt = _ids(tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=True))
        answer_ids = _ids(tokenizer(answer, add_special_tokens=False))
        out.append(TokenizedExample(tuple(prompt), tuple(answer_ids) + (int(eos),)))
    return out


def collate_sft(examples: Sequence[TokenizedExample], pad_id: int,
                max_length: int | None = None) -> SFTBatch:
    """Right-padded SFTBatch; the answer always survives ``max_length`` (the prompt is cut).

    An example with images is never cut (its image tokens must stay with their pixels): one
    that does not fit is left out and counted in ``sft/dropped``."""
    rows, masks, truncated, dropped, images = [], [], 0, 0, []
    for ex in examples:
        prompt = list(ex.prompt_ids)
        too_long = max_length is not None and len(prompt) + len(ex.answer_ids) > max_length
        if too_long and ex.images:
            dropped += 1
            continue
        images.append(tuple(ex.images))
        if too_long:
            keep = max(1, max_length - len(ex.answer_ids))
            prompt = prompt[-keep:]
            truncated += 1
        rows.append(prompt + list(ex.answer_ids))
        masks.append([False] * len(prompt) + [True] * len(ex.answer_ids))
    B, L = len(rows), max((len(r) for r in rows), default=1)
    input_ids = torch.full((B, L), int(pad_id), dtype=torch.long)
    attention_mask = torch.zeros((B, L), dtype=torch.long)
    loss_mask = torch.zeros((B, L), dtype=torch.bool)
    for b, (row, mask) in enumerate(zip(rows, masks)):
        input_ids[b, :len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[b, :len(row)] = 1
        loss_mask[b, :len(row)] = torch.tensor(mask, dtype=torch.bool)
    loss_mask[:, 0] = False  # nothing predicts column 0
    position_ids = (attention_mask.cumsum(1) - 1).clamp(min=0) * attention_mask
    stats = {"sft/truncated": float(truncated), "sft/tokens": float(loss_mask.sum())}
    if dropped:
        stats["sft/dropped"] = float(dropped)
    return SFTBatch(input_ids, attention_mask, position_ids, loss_mask, stats,
                    images=tuple(images) if any(images) else None)


def pad_id_of(tokenizer: Any) -> int:
    pad = getattr(tokenizer, "pad_token_id", None)
    return int(pad if pad is not None else tokenizer.eos_token_id)


def build_sft_batch(tokenizer: Any, examples: Sequence[Any],
                    max_length: int | None = None) -> SFTBatch:
    """Tokenise and collate in one call (for pre-tokenised data use :func:`collate_sft`)."""
    return collate_sft(tokenize_examples(tokenizer, examples), pad_id_of(tokenizer), max_length)


def sft_loss(model: Any, batch: SFTBatch) -> tuple[torch.Tensor, dict[str, float]]:
    """Token-mean cross-entropy over the loss mask, and the answer-token accuracy."""
    logits = forward_logits(model, batch)[:, :-1]
    targets = batch.input_ids[:, 1:].masked_fill(~batch.loss_mask[:, 1:], -100)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1),
                           ignore_index=-100)
    with torch.no_grad():
        mask = batch.loss_mask[:, 1:]
        correct = (logits.argmax(-1) == batch.input_ids[:, 1:]) & mask
        accuracy = float(correct.sum()) / max(1, int(mask.sum()))
    return loss, {"sft/loss": float(loss.detach()), "sft/token_accuracy": accuracy,
                  "sft/tokens": float(mask.sum())}


def sft_step(model: Any, optimizer: torch.optim.Optimizer, batch: SFTBatch, *,
             lr_scheduler: Any = None, grad_clip: float | None = 1.0) -> dict[str, float]:
    """One optimizer step of cross-entropy on ``batch``; returns ``sft/*`` metrics."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss, metrics = sft_loss(model, batch)
    loss.backward()
    if grad_clip is not None:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        metrics["sft/grad_norm"] = float(norm)
    metrics["sft/lr"] = float(optimizer.param_groups[0]["lr"])
    optimizer.step()
    if lr_scheduler is not None:
        lr_scheduler.step()
    return metrics
