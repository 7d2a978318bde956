"""How far a backend's behaviour logprobs are from the trainer's recomputed ones (any backend).

What it is: the measurement behind the vLLM logprob-agreement tests and ``bench/inference.py``.
The trainer's side is :func:`posttrain.trainer.logprobs.logprobs_from_logits` on one unpadded
forward over ``prompt + completion`` — the function the loss uses — so a convention mismatch
(temperature applied or not, top-p before or after) shows up here as it would in the loss.

Reported, over every sampled token of every completion:
- ``mean_abs_logp`` / ``max_abs_logp``: mean and max of ``|logp_trainer - logp_behaviour|``;
- ``kl_k3``: the mean of ``exp(r) - 1 - r`` with ``r = logp_trainer - logp_behaviour``, an
  unbiased, non-negative per-token estimate of KL(behaviour || trainer) from the sampled tokens
  alone (Schulman's k3);
- ``kl_exact`` (only when the backend's whole per-step distributions are given): the mean over
  steps of ``sum_v p_b(v) (log p_b(v) - log p_t(v))``.

What it does not do: apply top-p to the trainer's side (compare at ``top_p = 1``), or batch the
forwards (one per completion: this is a measurement, not a training path).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import torch

from posttrain.core.types import Completion
from posttrain.trainer.logprobs import logprobs_from_logits


def trainer_step_logprobs(model: Any, completion: Completion, temperature: float) -> torch.Tensor:
    """``[T, V]`` log-distributions the trainer assigns at each completion step."""
    ids = list(completion.prompt_token_ids) + list(completion.token_ids_T)
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].float()
    steps = logits[len(completion.prompt_token_ids) - 1:-1]
    return torch.log_softmax(steps / temperature, -1)


def trainer_token_logprobs(model: Any, completion: Completion, temperature: float) -> torch.Tensor:
    """``[T]`` trainer logprobs of the completion's tokens, through the trainer's own function."""
    ids = torch.tensor([list(completion.prompt_token_ids) + list(completion.token_ids_T)])
    with torch.no_grad():
        logits = model(ids).logits.float()
        logprobs, _ = logprobs_from_logits(logits, ids, temperature=temperature)
    return logprobs[0, len(completion.prompt_token_ids):]


def logprob_agreement(model: Any, groups: Sequence[Sequence[Completion]], temperature: float,
                      distributions: Sequence[Sequence[Mapping[int, float]]] | None = None,
                      ) -> dict[str, float]:
    """Agreement figures (see the module docstring) over ``groups``' completions.

    ``distributions``, when given, holds one list of per-step ``{token id: logprob}`` dicts per
    completion (flattened in group order), covering the backend's whole vocabulary.
    """
    diffs, k3, exact = [], [], []
    flat = [c for g in groups for c in g if c.token_ids_T]
    for i, c in enumerate(flat):
        trainer = trainer_token_logprobs(model, c, temperature)
        r = trainer - torch.tensor(c.logprobs_T)
        diffs.append(r.abs())
        k3.append(torch.expm1(r) - r)
        if distributions is not None:
            exact.extend(_exact_kl(trainer_step_logprobs(model, c, temperature), distributions[i]))
    if not diffs:
        return {"tokens": 0, "mean_abs_logp": math.nan, "max_abs_logp": math.nan, "kl_k3": math.nan}
    d, k = torch.cat(diffs), torch.cat(k3)
    out = {"tokens": int(d.numel()), "mean_abs_logp": d.mean().item(),
           "max_abs_logp": d.max().item(), "kl_k3": k.mean().item()}
    if distributions is not None:
        out["kl_exact"] = sum(exact) / len(exact)
    return out


def _exact_kl(trainer_TV: torch.Tensor, steps: Sequence[Mapping[int, float]]) -> list[float]:
    out = []
    for t, step in enumerate(steps):
        ids = torch.tensor(list(step))
        logp_b = torch.tensor([step[i] for i in step.keys()])
        # Renormalise over the ids returned: a top-k list that misses tail mass still gives a
        # proper distribution to compare (exact when the whole vocabulary was returned).
        logp_b = logp_b - torch.logsumexp(logp_b, 0)
        out.append(float((logp_b.exp() * (logp_b - trainer_TV[t, ids])).sum()))
    return out
