"""``posttrain serve``: the policy behind an OpenAI-compatible HTTP endpoint (``posttrain.serve``).

- ``posttrain serve FOLDER [--name NAME]``: one model folder (a saved Hugging Face model);
- ``posttrain serve --version v3 --version v4 [--route math=v4 ...] [--registry PATH]``:
  versions of the version registry side by side; requests are routed by their ``model``
  field, else by domain / task type (``--route KEY=VERSION``), else to the default: the
  registry channel's current version (``--channel serving``), which ``posttrain models
  promote`` / ``posttrain models rollback`` switch while the server runs (re-read every
  ``--refresh-s`` seconds). ``--no-channel`` pins the default to ``--default`` (or the first).
- ``--engine hf`` (default) or ``vllm``; ``--record FILE`` logs every answer's token ids and
  logprobs as JSONL; ``--api-key`` (or ``$POSTTRAIN_SERVE_API_KEY``) requires a bearer token.

It binds ``--host 127.0.0.1`` by default; any other host must be asked for with
``--allow-remote``. Once listening it prints one line, ``posttrain serve: URL/v1 ...``, and
serves until interrupted. A bad option or model exits 2 before serving. See docs/serve.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from posttrain.core.errors import ConfigError, PosttrainError


def _routes(pairs: list[str]) -> dict[str, str]:
    routes = {}
    for pair in pairs:
        key, sep, version = pair.partition("=")
        if not sep or not key or not version:
            raise ConfigError(f"--route {pair!r}: expected KEY=VERSION, e.g. math=v4")
        routes[key] = version
    return routes


def serve(
    models: List[Path] = typer.Argument(None, help="model folders to serve"),
    name: List[str] = typer.Option([], "--name", help="the served name of each folder (repeat)"),
    version: List[str] = typer.Option([], "--version", help="a registry version id to serve (repeat)"),
    route: List[str] = typer.Option([], "--route", help="KEY=VERSION: domain, family or task type (repeat)"),
    default: Optional[str] = typer.Option(None, "--default", help="the default version when no channel is followed"),
    registry: Optional[Path] = typer.Option(None, "--registry", help="version registry file"),
    channel: str = typer.Option("serving", "--channel", help="registry channel the default follows"),
    no_channel: bool = typer.Option(False, "--no-channel", help="do not follow a channel"),
    refresh_s: float = typer.Option(1.0, "--refresh-s", help="seconds between channel re-reads"),
    alias: str = typer.Option("policy", "--alias", help="model name that means 'route this request'"),
    engine: str = typer.Option("hf", "--engine", help="hf | vllm"),
    dtype: str = typer.Option("float32", "--dtype"),
    device: str = typer.Option("cpu", "--device"),
    policy_version: int = typer.Option(0, "--policy-version", help="weight version reported on answers"),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", help="0: a free port"),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="allow a non-loopback --host"),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="require 'Authorization: Bearer KEY'"),
    record: Optional[Path] = typer.Option(None, "--record", help="append every answer to this JSONL file"),
) -> None:
    """Serve model folders or registry versions behind an OpenAI-compatible API."""
    from posttrain.serve import LoadSpec, Recorder, ServeSpec, build_router, create_app
    from posttrain.serve.runner import LOOPBACK, run_foreground

    try:
        if host not in LOOPBACK and not allow_remote:
            raise ConfigError(f"--host {host} is not a loopback address; the policy is served "
                              "to this machine only unless --allow-remote is given")
        spec = ServeSpec(folders=[str(m) for m in models or ()], versions=list(version), names=list(name),
                         routes=_routes(route), default=default, registry=registry,
                         channel=None if no_channel else channel, refresh_s=refresh_s, alias=alias,
                         load=LoadSpec(engine=engine, dtype=dtype, device=device,
                                       policy_version=policy_version))
        router = build_router(spec)
        app = create_app(router, api_key=api_key or os.environ.get("POSTTRAIN_SERVE_API_KEY"),
                         recorder=Recorder(record) if record else None)
    except PosttrainError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)

    def ready(url: str) -> None:
        state = router.describe()
        routes = ", ".join(f"{k}={v}" for k, v in state["routes"].items()) or "none"
        typer.echo(f"posttrain serve: {url}/v1 default={state['default']} ({state['default_from']}) "
                   f"versions={','.join(router.models)} routes={routes}")

    try:
        run_foreground(app, host, port, ready)
    except PosttrainError as exc:  # e.g. the port is taken
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    finally:
        router.close()  # vLLM engines: shut down before the process ends


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
