"""``posttrain models``: foundation and post-trained versions — list, show, promote, roll back.

- ``models register-foundation ID PATH`` / ``models register PATH --base ID --run-id R
  --config-hash H [--domain math.add-v1 ...]`` record versions (the trainer does the latter);
- ``models list [--kind foundation|posttrain] [--json]`` and ``models show ID [--json]``
  (lineage included);
- ``models promote ID [--gate NEW/compare.json]`` makes a post-training version current on a
  channel (``serving`` by default), refusing when the given regression gate failed;
- ``models rollback [--to ID]`` restores the previous post-training version; the foundation
  is never touched.
- ``models merge RUN_OR_CHECKPOINT --out DIR`` merges a LoRA run's adapter into its base and
  writes a plain Hugging Face folder (``from_pretrained`` loads it without peft).

The registry file is ``--registry PATH``, else ``$POSTTRAIN_REGISTRY``, else
``$POSTTRAIN_HOME/versions.sqlite``. Errors print one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer

from posttrain.core.errors import PosttrainError
from posttrain.models.versions import VersionRegistry

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

_REG = typer.Option(None, "--registry", help="registry file (default $POSTTRAIN_HOME/versions.sqlite)")


def _open(registry: Optional[Path]) -> VersionRegistry:
    return VersionRegistry(registry)


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _line(v: Any, current: str | None) -> str:
    mark = "*" if v.id == current else " "
    lineage = f"base={v.base_id} run={v.run_id} config={v.config_hash}" if v.base_id else "foundation"
    return f"{mark} {v.id:28s} {v.kind:10s} {v.weights_hash[:12]}  {lineage}"


@app.command("list")
def list_cmd(kind: Optional[str] = typer.Option(None, "--kind", help="foundation | posttrain"),
             channel: str = typer.Option("serving", "--channel"),
             as_json: bool = typer.Option(False, "--json"), registry: Optional[Path] = _REG) -> None:
    """List versions; '*' marks the channel's current post-training version."""
    try:
        with _open(registry) as reg:
            versions, cur = reg.list(kind), reg.current(channel)
    except PosttrainError as exc:
        _fail(exc)
    cur_id = cur.id if cur else None
    if as_json:
        typer.echo(json.dumps([{**v.to_dict(), "current": v.id == cur_id} for v in versions], indent=2))
        return
    for v in versions:
        typer.echo(_line(v, cur_id))


@app.command("show")
def show(version_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json"),
         registry: Optional[Path] = _REG) -> None:
    """One version with its lineage (newest first) and whether its weights are intact."""
    try:
        with _open(registry) as reg:
            chain = reg.lineage(version_id)
            doc = {**chain[0].to_dict(), "lineage": [v.id for v in chain],
                   "weights_intact": reg.verify(version_id)}
    except PosttrainError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(doc, indent=2))
        return
    for key, value in doc.items():
        typer.echo(f"{key:16s} {value}")


@app.command("register-foundation")
def register_foundation(version_id: str = typer.Argument(...), path: Path = typer.Argument(...),
                        notes: str = typer.Option("", "--notes"), registry: Optional[Path] = _REG) -> None:
    """Record a base model folder as a foundation version."""
    try:
        with _open(registry) as reg:
            v = reg.register_foundation(version_id, path, notes)
    except PosttrainError as exc:
        _fail(exc)
    typer.echo(v.id)


@app.command("register")
def register(path: Path = typer.Argument(...), base: str = typer.Option(..., "--base"),
             run_id: str = typer.Option(..., "--run-id"), config_hash: str = typer.Option(..., "--config-hash"),
             domain: List[str] = typer.Option([], "--domain", help="a domain version trained on (repeat)"),
             data_position: str = typer.Option("{}", "--data-position", help="JSON, e.g. '{\"step\": 300}'"),
             version_id: Optional[str] = typer.Option(None, "--id"),
             eval_dir: Optional[str] = typer.Option(None, "--eval-dir"),
             registry: Optional[Path] = _REG) -> None:
    """Record post-trained weights with their lineage."""
    try:
        pos = json.loads(data_position)
        with _open(registry) as reg:
            v = reg.register_posttrain(path, base_id=base, run_id=run_id, config_hash=config_hash,
                                       domain_versions=domain, data_position=pos,
                                       version_id=version_id, eval_dir=eval_dir)
    except (PosttrainError, json.JSONDecodeError) as exc:
        _fail(exc)
    typer.echo(v.id)


@app.command("promote")
def promote(version_id: str = typer.Argument(...), channel: str = typer.Option("serving", "--channel"),
            gate: Optional[Path] = typer.Option(None, "--gate", help="compare.json that must show no regression"),
            registry: Optional[Path] = _REG) -> None:
    """Make a post-training version current (optionally only if its regression gate passed)."""
    if gate is not None:
        if not gate.is_file():
            _fail(FileNotFoundError(f"gate file {gate} does not exist"))
        verdict = json.loads(gate.read_text())
        if verdict.get("regression", True):
            typer.echo(f"refused: {gate} shows a significant regression in "
                       f"{', '.join(verdict.get('regressed_domains', [])) or 'overall'}", err=True)
            raise typer.Exit(1)
    try:
        with _open(registry) as reg:
            v = reg.promote(version_id, channel)
    except PosttrainError as exc:
        _fail(exc)
    typer.echo(f"{channel}: {v.id}")


@app.command("rollback")
def rollback(channel: str = typer.Option("serving", "--channel"),
             to: Optional[str] = typer.Option(None, "--to", help="an earlier promoted version"),
             registry: Optional[Path] = _REG) -> None:
    """Restore the previous post-training version on a channel (the foundation is untouched)."""
    try:
        with _open(registry) as reg:
            v = reg.rollback(channel, to)
    except PosttrainError as exc:
        _fail(exc)
    typer.echo(f"{channel}: {v.id} ({v.path})")


@app.command("merge")
def merge(source: Path = typer.Argument(..., help="a LoRA run folder (its newest checkpoint) or "
                                                  "one checkpoint folder"),
          out: Path = typer.Option(..., "--out", help="the merged Hugging Face folder to write"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Merge a LoRA run's adapter into its base model: a plain HF folder (no peft needed)."""
    from posttrain.trainer.lora import merge_checkpoint

    try:
        info = merge_checkpoint(source, out)
    except PosttrainError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(info))
        return
    typer.echo(f"merged {info['checkpoint']} (step {info['step']}) into {info['out']}")
