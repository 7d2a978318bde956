"""Token draws from logits: the HF backend's sampler and its random streams.

What it guarantees: the behaviour logprob of a drawn token is ``log_softmax(logits /
temperature)`` at that token, before top-p truncation (greedy: ``log_softmax(logits)``), the
trainer's convention; a call draws either from one generator for all its rows (``seed``: the
stream every figure before per-prompt seeds was sampled with) or, with ``prompt_seeds``, each
row from its own generator seeded by (its prompt's seed, its sample index), so a row's tokens
depend on its own logits only, not on the other rows of the call or when they finish.

What it does not do: top-k, min-p or repetition penalties.
"""

from __future__ import annotations

import torch
from torch import Generator

from posttrain.core.errors import InferenceError

from .base import SamplingParams


def generators(params: SamplingParams, rows: int, device: torch.device) -> Generator | list[Generator]:
    """One generator for a call (seeded ``params.seed``, or from the OS), or with
    ``params.prompt_seeds`` one per output row, seeded by (prompt seed, sample index)."""
    if params.prompt_seeds is None:
        gen = torch.Generator(device=device)
        if params.seed is None:
            gen.seed()
        else:
            gen.manual_seed(params.seed)
        return gen
    if len(params.prompt_seeds) * params.n != rows:
        raise InferenceError(f"{len(params.prompt_seeds)} prompt seeds for {rows // params.n} prompts")
    return [torch.Generator(device=device).manual_seed(_row_seed(s, j))
            for s in params.prompt_seeds for j in range(params.n)]


def sample(logits: torch.Tensor, params: SamplingParams, gen: Generator | list[Generator]):
    """Sampled ids (B,) and their behaviour logprobs (B,) — before top-p truncation.

    ``gen``: one generator for the batch, or one per row (each row then draws alone, so its
    tokens depend only on its own logits and generator)."""
    if params.greedy or params.temperature == 0:
        logp = torch.log_softmax(logits, -1)
        tok = logp.argmax(-1, keepdim=True)
        return tok.squeeze(1), logp.gather(1, tok).squeeze(1)
    logp = torch.log_softmax(logits / params.temperature, -1)
    probs = logp.exp()
    if params.top_p < 1.0:
        sorted_p, order = probs.sort(-1, descending=True)
        # Keep the smallest head whose mass reaches top_p (the top token always survives).
        sorted_p[(sorted_p.cumsum(-1) - sorted_p) >= params.top_p] = 0.0
        tok = order.gather(1, _draw(sorted_p, gen))
    else:
        tok = _draw(probs, gen)
    return tok.squeeze(1), logp.gather(1, tok).squeeze(1)


def _draw(probs: torch.Tensor, gen: Generator | list[Generator]) -> torch.Tensor:
    if isinstance(gen, torch.Generator):
        return torch.multinomial(probs, 1, generator=gen)
    return torch.cat([torch.multinomial(probs[i:i + 1], 1, generator=g) for i, g in enumerate(gen)])


def _row_seed(prompt_seed: int, sample: int) -> int:
    """The seed of sample ``sample`` of a prompt seeded ``prompt_seed`` (a 63-bit mix)."""
    return (prompt_seed * 1_000_003 + sample * 7_777_777_777) % (1 << 63)
