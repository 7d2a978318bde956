"""``posttrain foundation build`` and ``verify``: recipe -> corpus -> pre-training -> a registered folder.

What a build writes in ``OUT``: the model (``save_pretrained``, safetensors) and its BPE
tokenizer with the chat template (``--set model.path=OUT`` post-trains it), ``recipe.json``
(the validated recipe) and ``foundation.json``: recipe hash, corpus key and hash, corpus
and trained token counts, parameters, train / validation / unigram-baseline losses, wall
time per phase, tokens per second, and the sha256 of every weight file. Checkpoints live in
``OUT/_build/`` while the build runs (a killed build re-run with the same ``OUT`` resumes
from the last one) and are deleted once the model is saved. The folder is then registered
as a *foundation* version whose ``notes`` hold ``{"recipe_hash", "corpus_hash", ...}`` as JSON.

``verify`` recomputes the recipe hash from ``recipe.json`` (and, given ``recipe``, from that
file too: the shipped folder must match its committed recipe) and the sha256 of every weight
file, and lists each mismatch; an empty list means intact.

Not: a guarantee that two machines produce the same weights (float kernels differ across
CPUs and torch builds; the corpus hash is the cross-machine check), or an uploader.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from posttrain.core.errors import ConfigError
from posttrain.models.loading import save_model
from posttrain.models.versions import WEIGHT_SUFFIXES, VersionRegistry

from .corpus import build_corpus, file_sha256, select_domains
from .recipe import FoundationRecipe, recipe_hash

BUILD_SUBDIR = "_build"
FOUNDATION_JSON = "foundation.json"
RECIPE_JSON = "recipe.json"


def weight_files(folder: Path) -> dict[str, str]:
    """sha256 of every weight file directly in ``folder`` (the model, not checkpoints)."""
    return {p.name: file_sha256(p) for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix in WEIGHT_SUFFIXES}


def default_cache_dir() -> Path:
    home = Path(os.environ.get("POSTTRAIN_HOME", Path.home() / ".posttrain"))
    return home / "corpus_cache"


def _load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def build_foundation(recipe: FoundationRecipe, out: str | Path, *, cache_dir: str | Path | None = None,
                     registry: str | Path | None = None, register: bool = True,
                     version_id: str | None = None, progress: bool = True,
                     stop_after: int | None = None, device: str = "cpu",
                     log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build (or resume building) the recipe's foundation in ``out``; returns foundation.json."""
    from .train import pretrain

    say = log or (lambda _m: None)
    select_domains(recipe.corpus)  # unknown ids or families fail before anything is written
    out = Path(out)
    rhash = recipe_hash(recipe)
    out.mkdir(parents=True, exist_ok=True)
    old = out / RECIPE_JSON
    if old.exists() and recipe_hash(FoundationRecipe.model_validate_json(old.read_text())) != rhash:
        raise ConfigError(f"{out} holds a build of another recipe; use a new --out")
    old.write_text(recipe.model_dump_json(indent=2))
    t0 = time.perf_counter()
    corpus = build_corpus(recipe, cache_dir or default_cache_dir(), log=say)
    corpus_s = time.perf_counter() - t0
    tokenizer = _load_tokenizer(corpus.tokenizer_dir)
    say(f"corpus {corpus.corpus_hash[:12]}: {corpus.manifest['tokens']:,} tokens in "
        f"{corpus.manifest['rows']} rows; pre-training {recipe.training.steps()} steps")
    res = pretrain(recipe, corpus.tokens, tokenizer, out / BUILD_SUBDIR, progress=progress,
                   device=device, stop_after=stop_after, corpus_hash=corpus.corpus_hash, log=say)
    model = res.model.to("cpu")
    for p in out.iterdir():  # a previous build's weights must not survive beside the new ones
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES:
            p.unlink()
    save_model(model, tokenizer, out)
    shutil.rmtree(out / BUILD_SUBDIR, ignore_errors=True)
    info = _info(recipe, rhash, corpus, tokenizer, res, model, out, device, corpus_s, t0)
    (out / FOUNDATION_JSON).write_text(json.dumps(info, indent=2, sort_keys=True))
    if register:
        vid = version_id or f"{recipe.name}-{rhash[:10]}"
        notes = json.dumps({"recipe_hash": rhash, "corpus_hash": corpus.corpus_hash,
                            "corpus_key": info["corpus_key"], "val_loss": info["val_loss"]})
        with VersionRegistry(registry) as reg:
            info["version_id"] = reg.register_foundation(vid, out, notes=notes).id
        say(f"registered foundation version {info['version_id']}")
    return info


def _info(recipe: FoundationRecipe, rhash: str, corpus: Any, tokenizer: Any, res: Any, model: Any,
          out: Path, device: str, corpus_s: float, t0: float) -> dict[str, Any]:
    """foundation.json's document."""
    params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    emb = model.get_input_embeddings().weight.numel()
    info = {"name": recipe.name, "recipe_hash": rhash, "corpus_key": corpus.manifest["corpus_key"],
            "corpus_hash": corpus.corpus_hash, "corpus_tokens": corpus.manifest["tokens"],
            "corpus": {k: corpus.manifest[k] for k in ("tasks", "single_turn", "demos", "demos_failed",
                                                      "stdlib_files", "documents", "chars", "python")},
            "vocab_size": len(tokenizer), "params": params, "non_embedding_params": params - emb,
            "steps": res.steps, "tokens_trained": res.tokens_trained, "resumed_from_step": res.resumed_from,
            "train_loss": round(res.train_loss, 4), "val_loss": round(res.val_loss, 4),
            "unigram_val_loss": round(res.unigram_loss, 4), "tokens_per_s": round(res.tokens_per_s, 1),
            "wall_s": {"corpus": round(corpus_s, 1), "pretrain": round(res.train_s, 1),
                       "total": round(time.perf_counter() - t0, 1)},
            "threads": recipe.training.threads, "device": device, "torch": _torch_version(),
            "machine": platform.machine(), "load_average_1m": round(os.getloadavg()[0], 2),
            "weights_sha256": weight_files(out)}
    return info


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def verify_foundation(folder: str | Path, recipe: FoundationRecipe | None = None) -> list[str]:
    """Mismatches between ``folder`` and its foundation.json (and ``recipe``); [] when intact."""
    folder = Path(folder)
    try:
        info = json.loads((folder / FOUNDATION_JSON).read_text())
        stored = FoundationRecipe.model_validate_json((folder / RECIPE_JSON).read_text())
    except (OSError, ValueError) as exc:
        return [f"{folder} is not a built foundation: {exc}"]
    problems = []
    if recipe_hash(stored) != info.get("recipe_hash"):
        problems.append(f"{RECIPE_JSON} hashes to {recipe_hash(stored)[:12]}, "
                        f"foundation.json says {str(info.get('recipe_hash'))[:12]}")
    if recipe is not None and recipe_hash(recipe) != info.get("recipe_hash"):
        problems.append(f"the given recipe hashes to {recipe_hash(recipe)[:12]}, this folder was "
                        f"built from {str(info.get('recipe_hash'))[:12]}")
    expected = dict(info.get("weights_sha256") or {})
    actual = weight_files(folder)
    for name in sorted(set(expected) | set(actual)):
        if name not in actual:
            problems.append(f"weight file {name} is missing")
        elif name not in expected:
            problems.append(f"weight file {name} is not in foundation.json")
        elif actual[name] != expected[name]:
            problems.append(f"weight file {name}: sha256 {actual[name][:12]} != recorded {expected[name][:12]}")
    if not expected:
        problems.append("foundation.json records no weight file")
    return problems
