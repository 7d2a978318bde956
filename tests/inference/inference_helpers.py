"""Shared helpers for the inference tests: the tiny model, prompts, and logprob recomputation."""

from __future__ import annotations

import torch

from posttrain.models.tiny import build_tiny_model

torch.set_num_threads(1)

SYSTEM = {"role": "system", "content": "You are a careful calculator. Answer with the digits only."}


def tiny(seed: int = 0):
    return build_tiny_model(seed=seed)


def addition_prompts(pairs, system: bool = False):
    head = [SYSTEM] if system else []
    return [head + [{"role": "user", "content": f"{a}+{b}="}] for a, b in pairs]


def recompute_logprobs(model, completion, temperature: float = 1.0) -> torch.Tensor:
    """Per-token logprobs of ``completion`` from one unpadded forward pass over prompt+answer."""
    prompt, answer = list(completion.prompt_token_ids), list(completion.token_ids_T)
    with torch.no_grad():
        logits = model(torch.tensor([prompt + answer])).logits[0].float()
    steps = logits[len(prompt) - 1:-1] / temperature
    return torch.log_softmax(steps, -1).gather(1, torch.tensor(answer)[:, None]).squeeze(1)


def max_logprob_error(model, groups, temperature: float = 1.0) -> float:
    worst = 0.0
    for group in groups:
        for c in group:
            if not c.token_ids_T:
                continue
            diff = recompute_logprobs(model, c, temperature) - torch.tensor(c.logprobs_T)
            worst = max(worst, diff.abs().max().item())
    return worst
