"""Top-level run commands: ``posttrain quickstart`` and ``posttrain train CONFIG``.

Both run :func:`posttrain.trainer.pipeline.run_pipeline`. The config is loaded (pydantic: types,
ranges, unknown fields) and checked (:func:`posttrain.trainer.validate.check_run_config`:
registries and cross-field rules) before anything heavy is imported; a config error is printed
as one message (field, value, what is allowed) and exits with status 2 before any work starts.
A run folder that cannot be resumed (a damaged checkpoint, log or work store) is one message
naming the file, exit status 1.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Optional

import typer

from posttrain.core.config import RunConfig, load_config
from posttrain.core.errors import ConfigError, MissingExtraError, PosttrainError

QUICKSTART = "quickstart.yaml"


def _run(config: Path | None, out: Path | None, overrides: list[str], model: str | None,
         default_out: str) -> None:
    sets = list(overrides)
    if model:
        sets.append(f"model.path={model}")
    try:
        cfg = _checked(load_config(config, sets))
    except PosttrainError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    from posttrain.trainer.pipeline import run_pipeline  # heavy imports only once the config is good

    target = out or Path(cfg.out if cfg.out != "runs/run" else default_out)
    if cfg.placement.enabled:  # the run placed on Ray actors (posttrain/distributed/placement.py)
        return _placed(cfg, target)
    try:
        summary = run_pipeline(cfg, target)
    except ConfigError as exc:  # a rule only the run folder can tell (e.g. what a resume needs)
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    except PosttrainError as exc:  # a damaged run folder (checkpoint, log, work store): say which
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1)
    before, after = summary["heldout_before"], summary["heldout_after"]
    typer.echo(json.dumps({
        "out": str(target),
        "heldout_before": round(before["overall"], 4),
        "heldout_after": round(after["overall"], 4),
        "per_domain_after": {k: round(v, 4) for k, v in after["per_domain"].items()},
        "heldout_gain": {k: v if v is None else round(v, 4)
                         for k, v in summary.get("heldout_gain", {}).get("overall", {}).items()},
        "wall_s": summary["wall_s"],
        "report": summary.get("report"),
    }, indent=2))


def _placed(cfg: RunConfig, target: Path) -> None:
    from posttrain.distributed.placement import run_placement

    try:
        summary = run_placement(cfg, target)
    except ConfigError as exc:  # e.g. actors the running cluster cannot hold
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(json.dumps({"out": str(target), **{k: summary[k] for k in (
        "rl_steps", "policy_version", "world_size", "placement", "wall_s")}}, indent=2))


def _checked(cfg: RunConfig) -> RunConfig:
    """The semantic checks, then ``executor: ray`` registered (the trainer never imports ray;
    the CLI wires it in). A missing extra is reported by the check, naming the field."""
    from posttrain.trainer.validate import check_run_config, ray_installed

    ray = cfg.async_rl.executor == "ray" and ray_installed()
    check_run_config(cfg, registering=("ray",) if ray else ())
    if ray:
        from posttrain.distributed import register

        try:
            register()
        except MissingExtraError as exc:  # installed but broken: the field and the import error
            raise ConfigError(f"invalid config:\n  async_rl.executor: got \"ray\"; {exc}") from None
    return cfg


def quickstart(out: Path = typer.Option(Path("runs/quickstart"), help="run folder"),
               set_: list[str] = typer.Option([], "--set", help="override, e.g. rl.steps=10")) -> None:
    """Build the tiny model, SFT cold start, RL on several domains, evaluate, report."""
    with resources.as_file(resources.files("posttrain.configs") / QUICKSTART) as path:
        _run(path, out, set_, None, "runs/quickstart")


def train(config: Path = typer.Argument(..., help="run config (YAML)"),
          model: Optional[str] = typer.Option(None, help="local HF causal LM folder"),
          out: Optional[Path] = typer.Option(None, help="run folder (default: the config's out)"),
          set_: list[str] = typer.Option([], "--set", help="override, e.g. rl.lr=1e-5")) -> None:
    """Run the training pipeline described by a YAML config."""
    _run(config, out, set_, model, "runs/run")


def register(app: typer.Typer) -> None:
    app.command("quickstart")(quickstart)
    app.command("train")(train)
