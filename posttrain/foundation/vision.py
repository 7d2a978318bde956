"""``posttrain foundation build-vision``: the built-in vision-language foundation, from a recipe.

What it is: builds the tiny LLaVA-style VLM (:mod:`posttrain.vision.tiny_vlm`) from the
recipe's shape, pre-trains it (supervised, loss on the answer tokens only) on pictures the
project draws (:mod:`posttrain.vision.render`: shapes, colours, counts, bar and line charts,
machined-plate silhouettes; every training picture is new — seeds ``0, 1, 2, ...`` in draw
order, so the tiny model cannot memorise a pool —, held-out seeds from ``HELDOUT_SEED``), measures greedy held-out accuracy per kind with the ``vlm`` backend beside
the majority-answer baseline, and writes to ``OUT``: the model and processor
(``save_pretrained``: a folder ``load_vlm`` / ``--set model.path`` reads), ``recipe.json``
and ``foundation.json`` (recipe hash, parameters, steps, losses, held-out accuracy and
baseline per kind, wall seconds, threads, load, sha256 of every weight file). With a
registry it is registered as a foundation version.

Guarantees: the same recipe gives the same data and the same initial weights (seeded);
held-out pictures are never trained on; a bad recipe names its bad field before any work.

Not: a reader of printed values, thin lines or fine renders (the tiny encoder sees
``image_size`` pixels: the chart recipe's 64 px shows a bar chart's shape, enough for the
chart-shape domains, not the text of the other visual domains), resumable (a build takes
minutes).
"""

from __future__ import annotations

import json
import math
import os
import platform
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from pydantic import Field

from posttrain.core.config import _Strict, load_config

from .build import FOUNDATION_JSON, RECIPE_JSON, weight_files
from .recipe import _sha

HELDOUT_SEED = 1_000_000  # held-out pictures: seeds from here on, never trained on


class VisionShape(_Strict):
    image_size: int = Field(48, ge=24)
    patch_size: int = Field(8, ge=2)
    vision_hidden: int = Field(64, ge=8)
    vision_layers: int = Field(2, ge=1)
    vision_heads: int = Field(4, ge=1)
    text_hidden: int = Field(128, ge=8)
    text_layers: int = Field(3, ge=1)
    text_heads: int = Field(4, ge=1)
    text_intermediate: int = Field(320, ge=8)
    max_positions: int = Field(512, ge=64)


class VisionData(_Strict):
    kinds: list[str] = Field(default_factory=lambda: ["shape", "colour", "count", "tallest_bar",
                                                      "trend", "holes"])
    baseline_per_kind: int = Field(400, ge=1, description="training pictures per kind whose "
                                   "most common answer is the majority baseline")
    heldout_per_kind: int = Field(40, ge=1)


class VisionTraining(_Strict):
    steps: int = Field(600, ge=1)
    batch_size: int = Field(16, ge=1)
    lr: float = Field(2e-3, gt=0)
    warmup_steps: int = Field(20, ge=0)
    min_lr_ratio: float = Field(0.1, ge=0, le=1)
    weight_decay: float = Field(0.0, ge=0)
    threads: int = Field(1, ge=1)
    vision_lr_scale: float = Field(
        1.0, ge=0, le=1, description="the vision tower's learning rate as a share of lr; 0 keeps "
        "it at its random initialisation (trained from scratch together with the decoder it "
        "collapses to the global colour and ink features: spatial questions stay at chance)")


class VisionRecipe(_Strict):
    name: str = "vision-tiny"
    seed: int = 0
    model: VisionShape = Field(default_factory=VisionShape)
    data: VisionData = Field(default_factory=VisionData)
    training: VisionTraining = Field(default_factory=VisionTraining)


def load_vision_recipe(path: str | Path | None, overrides: list[str] | None = None) -> VisionRecipe:
    """Read and validate a vision recipe; ``ConfigError`` names every bad field."""
    from posttrain.core.errors import ConfigError
    from posttrain.vision.render import KINDS

    recipe = load_config(path, overrides, model=VisionRecipe)
    unknown = [k for k in recipe.data.kinds if k not in KINDS]
    if unknown or not recipe.data.kinds:
        raise ConfigError(f"data.kinds={recipe.data.kinds!r}: allowed kinds are {', '.join(KINDS)}")
    _shape(recipe).check()
    return recipe


def vision_recipe_hash(recipe: VisionRecipe) -> str:
    return _sha(recipe.model_dump(mode="json"))


def _shape(recipe: VisionRecipe):
    from posttrain.vision.tiny_vlm import TinyVLMConfig

    return TinyVLMConfig(**recipe.model.model_dump())


def _encode(processor: Any, ex: Any, with_answer: bool) -> tuple[list[int], int, Any]:
    """(ids, index where the answer starts, pixel_values) of one example."""
    from posttrain.inference.vlm import decode_png, hf_messages
    from posttrain.core.images import attach_images

    msgs = attach_images([{"role": "user", "content": ex.question}], [ex.image])
    prompt = processor.apply_chat_template(hf_messages(msgs), add_generation_prompt=True, tokenize=False)
    reply = ex.answer + processor.tokenizer.eos_token if with_answer else ""
    enc = processor(text=[prompt + reply], images=[decode_png(ex.image)], return_tensors="pt",
                    add_special_tokens=False)
    ids = enc["input_ids"][0].tolist()
    # The reply is plain text after the prompt: its tokens are the row's last ones.
    n_reply = len(processor.tokenizer(reply, add_special_tokens=False)["input_ids"])
    return ids, len(ids) - n_reply, enc["pixel_values"]


def _pictures(recipe: VisionRecipe, processor: Any, rng: random.Random, first_seed: int, n: int):
    """``n`` new encoded training pictures: kinds drawn by ``rng``, seeds from ``first_seed``."""
    from posttrain.vision.render import example

    size = recipe.model.image_size
    return [_encode(processor, example(rng.choice(recipe.data.kinds), first_seed + i, size), True)
            for i in range(n)]


def _lr(step: int, t: VisionTraining) -> float:
    if step < t.warmup_steps:
        return t.lr * (step + 1) / t.warmup_steps
    frac = (step - t.warmup_steps) / max(1, t.steps - t.warmup_steps)
    return t.lr * (t.min_lr_ratio + (1 - t.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac)))


def pretrain_vision(recipe: VisionRecipe, model: Any, processor: Any,
                    log: Callable[[str], None]) -> dict[str, float]:
    """Supervised pre-training on the recipe's pictures; returns first/last losses."""
    import torch

    t = recipe.training
    if t.steps * t.batch_size >= HELDOUT_SEED:
        from posttrain.core.errors import ConfigError

        raise ConfigError(f"training.steps x training.batch_size must stay below {HELDOUT_SEED} "
                          "(the held-out pictures' seeds)")
    from posttrain.inference.vlm import FROZEN_ATTR, freeze_declared

    rng = random.Random(recipe.seed)
    towers = [n for n, _ in model.named_modules() if n.endswith("vision_tower")]
    if t.vision_lr_scale == 0:
        # declared in the config (saved with the model), then applied as every later load
        # applies it: build, SFT and RL keep the same modules fixed by one rule
        setattr(model.config, FROZEN_ATTR, towers)
        freeze_declared(model)
    tower = {id(p) for n in towers for p in model.get_submodule(n).parameters()}
    groups = [{"params": [p for p in model.parameters() if id(p) not in tower and p.requires_grad],
               "scale": 1.0}]
    if t.vision_lr_scale > 0:
        groups.append({"params": [p for n in towers for p in model.get_submodule(n).parameters()],
                       "scale": t.vision_lr_scale})
    opt = torch.optim.AdamW(groups, lr=t.lr, weight_decay=t.weight_decay)
    pad = processor.tokenizer.pad_token_id
    model.train()
    losses: list[float] = []
    for step in range(t.steps):
        rows = _pictures(recipe, processor, rng, step * t.batch_size, t.batch_size)
        L = max(len(ids) for ids, _, _ in rows)
        ids = torch.full((len(rows), L), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), L), dtype=torch.long)
        target = torch.zeros((len(rows), L), dtype=torch.bool)  # answer tokens carry the loss
        for b, (x, start, _) in enumerate(rows):
            ids[b, :len(x)] = torch.tensor(x)
            mask[b, :len(x)] = 1
            target[b, start:len(x)] = True
        pixels = torch.cat([p for _, _, p in rows])
        logits = model(input_ids=ids, attention_mask=mask, pixel_values=pixels, use_cache=False).logits
        lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        loss = -(lp * target[:, 1:]).sum() / target[:, 1:].sum()
        for g in opt.param_groups:
            g["lr"] = _lr(step, t) * g["scale"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if step % 100 == 0 or step == t.steps - 1:
            log(f"step {step}: loss {losses[-1]:.4f}")
    model.eval()
    k = max(1, min(20, len(losses) // 5))
    return {"first_loss": sum(losses[:k]) / k, "final_loss": sum(losses[-k:]) / k}


def heldout_accuracy(recipe: VisionRecipe, model: Any, processor: Any) -> dict[str, Any]:
    """Greedy held-out accuracy per kind (vlm backend) and the majority-answer baseline."""
    from posttrain.core.images import attach_images
    from posttrain.inference.base import SamplingParams
    from posttrain.inference.vlm import VLMBackend
    from posttrain.vision.render import example

    backend = VLMBackend(model, processor)
    size = recipe.model.image_size
    acc, base = {}, {}
    for kind in recipe.data.kinds:
        train = Counter(example(kind, s, size).answer for s in range(recipe.data.baseline_per_kind))
        majority = train.most_common(1)[0][0]
        exs = [example(kind, HELDOUT_SEED + s, size) for s in range(recipe.data.heldout_per_kind)]
        prompts = [attach_images([{"role": "user", "content": e.question}], [e.image]) for e in exs]
        outs = backend.generate(prompts, SamplingParams(n=1, greedy=True, max_new_tokens=40))
        acc[kind] = sum(o[0].text.strip() == e.answer for o, e in zip(outs, exs)) / len(exs)
        base[kind] = sum(e.answer == majority for e in exs) / len(exs)
    mean = lambda d: sum(d.values()) / len(d)  # noqa: E731
    return {"heldout_accuracy": acc, "majority_baseline": base,
            "heldout_mean": mean(acc), "baseline_mean": mean(base)}


def build_vision_foundation(recipe: VisionRecipe, out: str | Path, *, registry: str | Path | None = None,
                            register: bool = True, version_id: str | None = None,
                            log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build, evaluate, save and (optionally) register; returns foundation.json's document."""
    import torch

    from posttrain.vision.tiny_vlm import build_tiny_vlm

    say = log or (lambda _m: None)
    torch.set_num_threads(recipe.training.threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rhash = vision_recipe_hash(recipe)
    t0 = time.perf_counter()
    model, processor = build_tiny_vlm(_shape(recipe), seed=recipe.seed)
    before = heldout_accuracy(recipe, model, processor)["heldout_mean"]
    t1 = time.perf_counter()
    losses = pretrain_vision(recipe, model, processor, say)
    t2 = time.perf_counter()
    evals = heldout_accuracy(recipe, model, processor)
    say(f"held-out accuracy {evals['heldout_mean']:.3f} (majority baseline "
        f"{evals['baseline_mean']:.3f}, before pre-training {before:.3f})")
    model.save_pretrained(out)  # with the declared frozen tower: load_vlm keeps it in SFT and RL
    processor.save_pretrained(out)
    (out / RECIPE_JSON).write_text(recipe.model_dump_json(indent=2))
    params = sum(p.numel() for p in model.parameters())
    info = {"name": recipe.name, "kind": "vision", "recipe_hash": rhash, "params": params,
            "image_tokens": _shape(recipe).image_tokens + 1, "steps": recipe.training.steps,
            **{k: round(v, 4) for k, v in losses.items()}, "heldout_mean_before": round(before, 4),
            **evals, "wall_s": {"pretrain": round(t2 - t1, 1), "total": round(time.perf_counter() - t0, 1)},
            "threads": recipe.training.threads, "machine": platform.machine(),
            "load_average_1m": round(os.getloadavg()[0], 2), "torch": str(torch.__version__),
            "weights_sha256": weight_files(out)}
    if register:
        from posttrain.models.versions import VersionRegistry

        vid = version_id or f"{recipe.name}-{rhash[:10]}"
        notes = json.dumps({"recipe_hash": rhash, "kind": "vision", "heldout_mean": evals["heldout_mean"]})
        with VersionRegistry(registry) as reg:
            info["version_id"] = reg.register_foundation(vid, out, notes=notes).id
    (out / FOUNDATION_JSON).write_text(json.dumps(info, indent=2, sort_keys=True))
    return info
