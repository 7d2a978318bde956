"""``posttrain foundation``: build a foundation from a recipe, verify a built folder.

- ``foundation build --recipe configs/foundation/smoke.yaml --out DIR [--set training.tokens=...]
  [--cache-dir C] [--registry R] [--version-id ID] [--no-register] [--json]``: corpus (cached
  by its key), pre-training (re-running with the same ``--out`` resumes a killed build),
  ``DIR/foundation.json``, registration as a foundation version; prints foundation.json's
  figures (``--json``: the whole document on stdout);
- ``foundation build-vision --out DIR [--recipe configs/foundation/vision-tiny.yaml] [--set ...]
  [--registry R] [--no-register] [--json]``: the built-in vision-language foundation
  (:mod:`posttrain.foundation.vision`): a tiny LLaVA-style VLM pre-trained on pictures the
  project draws; prints held-out accuracy beside the majority baseline;
- ``foundation verify DIR [--recipe R]``: recomputes the recipe hash and every weight file's
  sha256; exit 1 on any mismatch (each printed), 0 when intact.

A bad recipe prints the bad fields (dotted paths) and exits 2 before any work starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from posttrain.core.errors import PosttrainError

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _recipe(path: Optional[Path], sets: List[str]):
    from posttrain.foundation.recipe import load_recipe

    try:
        return load_recipe(path, sets)
    except PosttrainError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)


@app.command("build")
def build(recipe: Path = typer.Option(..., "--recipe", help="a recipe YAML (configs/foundation/)"),
          out: Path = typer.Option(..., "--out", help="folder of the built model"),
          set_: List[str] = typer.Option([], "--set", help="override, e.g. training.tokens=200000"),
          cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="corpus cache "
                                                   "(default $POSTTRAIN_HOME/corpus_cache)"),
          registry: Optional[Path] = typer.Option(None, "--registry", help="version registry file"),
          version_id: Optional[str] = typer.Option(None, "--version-id"),
          no_register: bool = typer.Option(False, "--no-register"),
          device: str = typer.Option("cpu", "--device", help="cpu or cuda"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Pre-train a foundation from a recipe and register it."""
    cfg = _recipe(recipe, set_)
    from rich.console import Console

    from posttrain.foundation.build import build_foundation

    console = Console(stderr=True)
    try:
        info = build_foundation(cfg, out, cache_dir=cache_dir, registry=registry,
                                register=not no_register, version_id=version_id,
                                progress=not as_json, device=device, log=console.print)
    except PosttrainError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"{out}: {info['params']:,} params, {info['tokens_trained']:,} tokens, val loss "
               f"{info['val_loss']} (unigram {info['unigram_val_loss']}), {info['tokens_per_s']} tok/s, "
               f"{info['wall_s']['total']} s; version {info.get('version_id', '-')}")


@app.command("build-vision")
def build_vision(recipe: Optional[Path] = typer.Option(None, "--recipe", help="a vision recipe YAML "
                                                       "(configs/foundation/vision-tiny.yaml); default: built-in"),
                 out: Path = typer.Option(..., "--out", help="folder of the built VLM"),
                 set_: List[str] = typer.Option([], "--set", help="override, e.g. training.steps=200"),
                 registry: Optional[Path] = typer.Option(None, "--registry", help="version registry file"),
                 version_id: Optional[str] = typer.Option(None, "--version-id"),
                 no_register: bool = typer.Option(False, "--no-register"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
    """Pre-train the built-in vision-language foundation on rendered pictures and register it."""
    from posttrain.foundation.vision import build_vision_foundation, load_vision_recipe

    try:
        cfg = load_vision_recipe(recipe, set_)
        info = build_vision_foundation(cfg, out, registry=registry, register=not no_register,
                                       version_id=version_id,
                                       log=(lambda m: None) if as_json else (lambda m: typer.echo(m, err=True)))
    except PosttrainError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"{out}: {info['params']:,} params, {info['steps']} steps, held-out accuracy "
               f"{info['heldout_mean']:.3f} (majority baseline {info['baseline_mean']:.3f}), "
               f"{info['wall_s']['total']} s; version {info.get('version_id', '-')}")


@app.command("verify")
def verify(folder: Path = typer.Argument(..., help="a built foundation folder"),
           recipe: Optional[Path] = typer.Option(None, "--recipe", help="the recipe it must match")) -> None:
    """Check a built foundation against its foundation.json (and recipe): exit 1 on mismatch."""
    from posttrain.foundation.build import verify_foundation

    problems = verify_foundation(folder, _recipe(recipe, []) if recipe else None)
    for p in problems:
        typer.echo(f"mismatch: {p}", err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"{folder}: intact")
