"""Benchmark: the HF backend against vLLM (CPU build) — throughput, weight updates, mismatch.

Run in the vLLM venv (``make setup-vllm``): ``.venv-vllm/bin/python bench/inference.py [--quick]``.

What is measured, in one process, with the same prompts, weights and seeds for both backends:
- **throughput**: completions/s and generated tokens/s of one ``generate`` call of P = 4
  two-digit-addition prompts x ``n`` samples (group sizes 1, 8, 32) at ``max_new_tokens``
  16, 128 and 512, temperature 1. Models: the built-in tiny model (1.8M parameters; built with
  1,024 positions so that 512 new tokens fit — rotary positions, so the same weights) and a
  ~100M-parameter Llama built from a config (hidden 768, 12 layers, MLP 2,560; random weights:
  throughput does not depend on what the weights know). Samples stop at eos, so a row's
  length is whatever the model sampled; both backends sample the same distribution, and the
  token counts are reported next to the rates. Each cell: one warm-up call, then the median
  of ``--repeats`` timed calls;
- **weight update**: ``load_weights`` of a full state dict into the running engine (vLLM:
  in-place reload + prefix-cache reset; HF: in-place copy), seconds per 100 MB of float32
  weights, median of 3, on the 100M model;
- **mismatch**: :func:`posttrain.trainer.agreement.logprob_agreement` of vLLM's behaviour
  logprobs against the trainer's recomputation, built-in model, temperatures 1.0 and 0.7.

Machine notes: torch runs one thread for both backends (vLLM's CPU worker drops to one thread
itself on a 2-core host, and the HF backend is given the same); the vLLM engine runs in process
with eager execution (see ``posttrain/inference/vllm_backend.py``). Engine start-up time is
reported separately and excluded from the rates.

``--grid-100m short``: the whole grid on the built-in model, the 100M model at four cells
(its full grid takes hours on a shared 2-core machine). ``--quick``: the built-in model at group 8 x length 128 (the JSON keys), group 1/32 x length
16 and group 8 x length 4 (the quickstart's RL shape), the 100M model at group 8 x length 16.

Last line: one JSON object with ``hf_completions_per_s``, ``vllm_completions_per_s`` (built-in
model, group 8, length 128), ``vllm_weight_update_s_per_100mb``, ``vllm_mismatch_mean_abs_logp``
and the whole grid under ``cells``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time


def _models():
    from transformers import LlamaConfig, LlamaForCausalLM

    from posttrain.core.config import TinyModelConfig
    from posttrain.models.tiny import build_tiny_model, tiny_llama_config

    import torch

    tiny, tok = build_tiny_model(TinyModelConfig(max_position_embeddings=1024), seed=0)
    cfg = tiny_llama_config(TinyModelConfig(hidden_size=768, num_layers=12, num_heads=12,
                                            intermediate_size=2560, max_position_embeddings=1024), tok)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        big = LlamaForCausalLM(cfg).float().eval()
    big.generation_config.eos_token_id = tok.eos_token_id
    return {"tiny": tiny, "100m": big}, tok


def _grid(quick: bool, big: str):
    cells = [(g, n) for g in (1, 8, 32) for n in (16, 128, 512)]
    if quick:
        return {"tiny": [(8, 128), (1, 16), (32, 16), (8, 4)], "100m": [(8, 16)]}
    # The 100M model's whole grid takes hours on 2 shared cores (HF: ~8 tokens/s at one row).
    return {"tiny": cells + [(8, 4)], "100m": cells if big == "full" else [(1, 16), (8, 16), (8, 128), (32, 16)]}


def _time_cell(backend, prompts, group: int, length: int, repeats: int) -> dict:
    from posttrain.inference.base import SamplingParams

    params = SamplingParams(n=group, max_new_tokens=length, temperature=1.0, seed=0)
    backend.generate(prompts, params)  # warm-up: first-call allocations, kernel selection
    times, tokens = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        groups = backend.generate(prompts, SamplingParams(n=group, max_new_tokens=length,
                                                          temperature=1.0, seed=r + 1))
        times.append(time.perf_counter() - t0)
        tokens.append(sum(len(c.token_ids_T) for g in groups for c in g))
    wall = statistics.median(times)
    completions = len(prompts) * group
    return {"wall_s": round(wall, 4), "completions_per_s": round(completions / wall, 2),
            "tokens_per_s": round(statistics.median(tokens) / wall, 1),
            "mean_tokens": round(statistics.median(tokens) / completions, 1)}


def _update_s_per_100mb(backend, model) -> float:
    state = {k: v.clone() for k, v in model.state_dict().items()}
    mb = sum(v.numel() * v.element_size() for v in state.values()) / 1e8
    times = []
    for i in range(3):
        t0 = time.perf_counter()
        backend.load_weights(backend.policy_version + 1, state)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / mb


def _run_backend(name: str, models, tok, folders, grid, prompts, repeats, out):
    from posttrain.inference import make_backend

    for key, model in models.items():
        t0 = time.perf_counter()
        if name == "hf":
            backend = make_backend("hf", model=model, tokenizer=tok)
        else:
            backend = make_backend("vllm", model=folders[key], dtype="float32", max_model_len=1024,
                                   kv_cache_gib=1 if key == "tiny" else 4)
        out["startup_s"][f"{name}/{key}"] = round(time.perf_counter() - t0, 1)
        for group, length in grid[key]:
            cell = _time_cell(backend, prompts, group, length, repeats)
            out["cells"][f"{name}/{key}/g{group}/len{length}"] = cell
            print(f"{name:5s} {key:5s} group {group:3d} len {length:4d}: {cell}", flush=True)
        if key == "100m":
            out[f"{name}_weight_update_s_per_100mb"] = round(_update_s_per_100mb(backend, model), 4)
            print(f"{name} weight update: {out[f'{name}_weight_update_s_per_100mb']} s/100MB", flush=True)
        if name == "vllm" and key == "tiny":
            out["mismatch"] = _mismatch(backend, model, prompts)
        del backend
        gc.collect()


def _mismatch(backend, model, prompts) -> dict:
    from posttrain.trainer.agreement import logprob_agreement
    from posttrain.inference.base import SamplingParams

    out = {}  # the engine serves the folder saved from ``model``: the same weights
    for temperature in (1.0, 0.7):
        groups = backend.generate(prompts, SamplingParams(n=8, max_new_tokens=32, seed=7,
                                                          temperature=temperature))
        stats = logprob_agreement(model, groups, temperature)
        out[f"T{temperature}"] = {k: (v if isinstance(v, int) else float(f"{v:.3g}")) for k, v in stats.items()}
        print(f"mismatch at T={temperature}: {out[f'T{temperature}']}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cells only (see the docstring)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grid-100m", choices=("full", "short"), default="full",
                        help="short: the 100M model at (1,16), (8,16), (8,128), (32,16) only")
    args = parser.parse_args()
    import torch

    from posttrain.models.loading import save_model

    torch.set_num_threads(1)
    models, tok = _models()
    folders = {}
    for key, model in models.items():
        folders[key] = save_model(model, tok, tempfile.mkdtemp(prefix=f"bench-inference-{key}-"))
    prompts = [[{"role": "user", "content": f"{a}+{b}="}] for a, b in ((12, 34), (5, 67), (80, 9), (41, 41))]
    grid = _grid(args.quick, args.grid_100m)
    out: dict = {"cells": {}, "startup_s": {}, "quick": args.quick,
                 "params": {k: sum(p.numel() for p in m.parameters()) for k, m in models.items()}}
    print(f"models: {out['params']}", flush=True)
    # HF first: the in-process vLLM engine changes process-wide thread settings when it starts.
    _run_backend("hf", models, tok, folders, grid, prompts, args.repeats, out)
    _run_backend("vllm", models, tok, folders, grid, prompts, args.repeats, out)
    key = "tiny/g8/len128"
    summary = {
        "hf_completions_per_s": out["cells"][f"hf/{key}"]["completions_per_s"],
        "vllm_completions_per_s": out["cells"][f"vllm/{key}"]["completions_per_s"],
        "hf_tokens_per_s": out["cells"][f"hf/{key}"]["tokens_per_s"],
        "vllm_tokens_per_s": out["cells"][f"vllm/{key}"]["tokens_per_s"],
        "vllm_weight_update_s_per_100mb": out["vllm_weight_update_s_per_100mb"],
        "hf_weight_update_s_per_100mb": out["hf_weight_update_s_per_100mb"],
        "vllm_mismatch_mean_abs_logp": out["mismatch"]["T1.0"]["mean_abs_logp"],
        "vllm_mismatch_max_abs_logp": max(v["max_abs_logp"] for v in out["mismatch"].values()),
        "vllm_mismatch_kl_k3": max(v["kl_k3"] for v in out["mismatch"].values()),
    }
    print(json.dumps({**summary, **out}))


if __name__ == "__main__":  # vLLM may spawn processes: the guard is required
    main()
