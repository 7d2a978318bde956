"""``posttrain domains``: list, sample, check and calibrate task domains.

Output shapes are stable (DESIGN.md §3, "Command line"); with ``--json`` a command prints
exactly one JSON document on stdout and nothing else (progress, warnings and anything a
domain prints go to stderr):

- ``list --json`` → ``[{id, family, difficulties, native, multi_turn, needs_sandbox, tier,
  vision, ...}]``;
- ``sample ID --difficulty D --seed S --json`` → the Task's ``public_view()`` (never hidden);
- ``check [IDS...] | --all --json`` → ``[{id, ok, failures, warnings, timings}]``, exit 1
  when any domain fails;
- ``calibrate --model PATH --out DIR`` → ``DIR/calibration.json`` and ``calibration.png``;
- ``catalogue [--check]`` → ``docs/catalogue.md`` (see :mod:`posttrain.cli.catalogue_cmd`);
- ``build-pool repos`` → fetches, verifies and validates the real repository tier's pool.

An unknown id prints the registry's "did you mean" message and exits 2, without a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from posttrain.core.errors import PosttrainError
from posttrain.domains import (
    DOMAINS,
    FAMILIES,
    get_domain,
    load_builtin_domains,
    sample_task,
)
from posttrain.domains.base import TIERS
from posttrain.rollout.conformance import CheckReport, check_domains

from .catalogue_cmd import catalogue_cmd

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
app.command("catalogue")(catalogue_cmd)
err = Console(stderr=True, soft_wrap=True)


def _die(msg: str, code: int = 2) -> None:
    err.print(f"[red]error:[/red] {escape(msg)}", highlight=False)
    raise typer.Exit(code)


@contextlib.contextmanager
def _quiet_stdout(active: bool) -> Iterator[None]:
    """Route stray prints (chatty domains) to stderr so ``--json`` stays one document."""
    if not active:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _emit_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, sort_keys=False, default=str))


def _resolve(ids: List[str]) -> List[str]:
    out = []
    for i in ids:
        try:
            rid = DOMAINS.resolve(i)
        except PosttrainError as exc:
            _die(str(exc))
        if rid not in out:
            out.append(rid)
    return out


def describe(dom: Any) -> dict[str, Any]:
    """The ``list`` record of one domain."""
    module = sys.modules.get(type(dom).__module__)
    text = getattr(dom, "description", None) or getattr(module, "__doc__", None) or ""
    summary = str(text).strip().splitlines()
    env_kind = getattr(dom, "env_kind", "single_turn")
    return {
        "id": dom.id,
        "family": dom.family,
        "difficulties": [int(d) for d in dom.difficulties],
        "native": bool(getattr(dom, "native", True)) and dom.id not in DOMAINS.plugin_ids,
        "multi_turn": env_kind != "single_turn",
        "needs_sandbox": env_kind == "sandbox" or bool(getattr(dom, "needs_sandbox", False)),
        "env_kind": env_kind,
        # light: a self-contained generator; real: drives a real tool (CAD kernel, PDF parser,
        # a real repository's test suite). Domains declare ``tier = "real"``; light is the default.
        "tier": str(getattr(dom, "tier", "light")),
        "vision": bool(getattr(dom, "vision", False)),
        "summary": summary[0] if summary else "",
    }


@app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON list on stdout."),
    family: Optional[str] = typer.Option(None, "--family", help="Only this family."),
) -> None:
    """List registered domains (built-in and plugins)."""
    if family is not None and family not in FAMILIES:
        _die(f"unknown family {family!r}; families: {', '.join(FAMILIES)}")
    with _quiet_stdout(as_json):
        load_builtin_domains()
        rows = [describe(DOMAINS.get(i)) for i in DOMAINS.ids()]
    rows = [r for r in rows if family is None or r["family"] == family]
    if as_json:
        _emit_json(rows)
        return
    out = Console()
    wide = out.width >= 120  # the summary column only where it fits without crushing the ids
    table = Table(title=f"{len(rows)} domains")
    for col in ("id", "family", "levels", "kind", "native") + (("summary",) if wide else ()):
        table.add_column(col, no_wrap=True, overflow="ellipsis")
    for r in rows:
        cells = [r["id"], r["family"], ",".join(map(str, r["difficulties"])), r["env_kind"],
                 "yes" if r["native"] else "no"]
        table.add_row(*cells, *([r["summary"][:70]] if wide else []))
    out.print(table)
    for name, msg in DOMAINS.discovery_errors.items():
        err.print(f"[yellow]plugin {name!r} failed to load:[/yellow] {msg}")


@app.command("sample")
def sample_cmd(
    domain_id: str = typer.Argument(..., metavar="ID", help="Domain id, e.g. math.add-v1."),
    difficulty: Optional[int] = typer.Option(None, "--difficulty", "-d",
                                             help="Difficulty level (default: the easiest)."),
    seed: int = typer.Option(0, "--seed", "-s", help="Task seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the task as one JSON object."),
) -> None:
    """Show one generated task as the policy sees it (never the hidden part)."""
    with _quiet_stdout(as_json):
        try:
            dom = get_domain(domain_id)
        except PosttrainError as exc:
            _die(str(exc))
        level = min(dom.difficulties) if difficulty is None else difficulty
        try:
            view = sample_task(dom, seed, level).public_view()
        except ValueError as exc:
            _die(str(exc))
    if as_json:
        _emit_json(view)
        return
    out = Console()
    out.print(f"[bold]{view['domain']}[/bold] difficulty {view['difficulty']} seed {view['seed']}")
    for m in view["prompt"]:
        out.print(f"[cyan]{m.get('role')}:[/cyan] {m.get('content')}", markup=True, highlight=False)
    if view["public"]:
        out.print(f"[dim]public:[/dim] {json.dumps(view['public'], default=str)}", highlight=False)


@app.command("check")
def check_cmd(
    ids: Optional[List[str]] = typer.Argument(None, metavar="[IDS]...", help="Domain ids."),
    all_: bool = typer.Option(False, "--all", help="Check every registered domain."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON list on stdout."),
    workers: Optional[int] = typer.Option(None, "--workers", "-w",
                                          help="Parallel worker processes (default: CPU count)."),
    seeds: int = typer.Option(3, "--seeds", help="Seeds per difficulty."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds per domain before it fails."),
    tier: Optional[str] = typer.Option(None, "--tier",
                                       help="Only domains of this tier: light or real (with --all)."),
) -> None:
    """Run the conformance checker (exit 1 when any domain fails)."""
    if not ids and not all_:
        _die("give domain ids or --all")
    if tier is not None and tier not in TIERS:
        _die(f"unknown tier {tier!r}; tiers: {', '.join(TIERS)}")
    with _quiet_stdout(as_json):
        load_builtin_domains()
        chosen = DOMAINS.ids() if all_ else _resolve(list(ids or []))
        if tier is not None:  # the real tier drives real tools (minutes a domain): CI checks it apart
            chosen = [i for i in chosen if describe(DOMAINS.get(i))["tier"] == tier]
        reports = _run_checks(chosen, workers, seeds, timeout, progress=not as_json)
    if all_:  # a plugin that failed to load is a failed check, not a silently missing domain
        reports += [CheckReport(f"plugin:{name}", False, [f"failed to load: {msg}"])
                    for name, msg in sorted(DOMAINS.discovery_errors.items())]
    failed = [r for r in reports if not r.ok]
    if as_json:
        _emit_json([r.to_json() for r in reports])
    else:
        _print_reports(reports)
    if failed:
        raise typer.Exit(1)


def _run_checks(ids: List[str], workers: Optional[int], seeds: int, timeout: float,
                progress: bool) -> list:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    workers = workers if workers is not None else min(os.cpu_count() or 1, 8)
    kw = dict(workers=workers, seeds=tuple(range(max(1, seeds))), timeout_s=timeout)
    if not progress:
        return check_domains(ids, **kw)
    columns = (TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=err, transient=True) as bar:
        job = bar.add_task("", total=len(ids))

        def tick(_i: int, rep: Any) -> None:
            bar.update(job, advance=1, description=f"{rep.id} {'ok' if rep.ok else 'FAIL'}")

        return check_domains(ids, on_result=tick, **kw)


def _print_reports(reports: list) -> None:
    table = Table(title=f"conformance: {sum(r.ok for r in reports)}/{len(reports)} ok")
    table.add_column("id")
    table.add_column("ok")
    table.add_column("time s", justify="right")
    table.add_column("failures / warnings", overflow="fold")
    for r in reports:
        notes = "\n".join(r.failures[:6] + [f"[yellow]warn:[/yellow] {w}" for w in r.warnings[:3]])
        more = len(r.failures) - 6
        notes += f"\n... {more} more" if more > 0 else ""
        table.add_row(r.id, "[green]ok[/green]" if r.ok else "[red]FAIL[/red]",
                      f"{r.timings.get('total_s', 0.0):.2f}", notes)
    Console().print(table)


@app.command("calibrate")
def calibrate_cmd(
    model: Path = typer.Option(..., "--model", help="Local Hugging Face model folder."),
    out: Path = typer.Option(..., "--out", help="Folder for calibration.json and .png."),
    domains: Optional[List[str]] = typer.Option(None, "--domains",
                                                help="Domain ids (repeat or comma-separate; default: every light-tier domain)."),
    n: int = typer.Option(16, "--n", help="Tasks per (domain, difficulty) cell."),
    samples: int = typer.Option(1, "--samples", help="Completions per task."),
    temperature: float = typer.Option(0.0, "--temperature", help="0 = greedy."),
    max_new_tokens: int = typer.Option(32, "--max-new-tokens"),
    seed: int = typer.Option(1_000_000, "--seed", help="First task seed (away from training seeds)."),
    device: str = typer.Option("cpu", "--device"),
    as_json: bool = typer.Option(False, "--json", help="Print the result JSON on stdout."),
) -> None:
    """Measure a model's pass rate per domain and difficulty (JSON + PNG heatmap)."""
    from posttrain.cli._calibrate import calibrate, write_outputs

    with _quiet_stdout(as_json):
        load_builtin_domains()
        wanted = [d.strip() for item in (domains or []) for d in item.split(",") if d.strip()]
        # the real tier (a CAD kernel, PDFs, repositories: seconds to minutes an episode) only
        # when named
        ids = _resolve(wanted) if wanted else [
            i for i in DOMAINS.ids() if getattr(DOMAINS.get(i), "tier", "light") == "light"]
        try:
            from posttrain.models.loading import load_model, policy_backend

            backend = policy_backend(*load_model(model), device=device)
        except PosttrainError as exc:
            _die(str(exc))
        result = calibrate(backend, ids, n_tasks=n, samples=samples, temperature=temperature,
                           max_new_tokens=max_new_tokens, seed=seed)
        result["model"] = str(model)
        paths = write_outputs(result, out)
    if as_json:
        _emit_json(result)
        return
    table = Table(title=f"pass rate of {model} ({result['wall_s']:.1f}s)")
    table.add_column("domain")
    levels = sorted({int(d) for c in result["domains"].values() for d in c if d.isdigit()})
    for d in levels:
        table.add_column(f"d{d}", justify="right")
    table.add_column("flags")  # levels that are not monotone, a saturated level 1
    for did, cells in result["domains"].items():
        vals = [cells.get(str(d), {}).get("pass_rate") for d in levels]
        table.add_row(did, *["-" if v is None else f"{v:.2f}" for v in vals],
                      "; ".join(result.get("flags", {}).get(did, [])))
    Console().print(table)
    err.print(f"wrote {paths['json']} and {paths['png']}")


@app.command("build-pool")
def build_pool_cmd(
    which: str = typer.Argument(..., metavar="POOL", help="The pool to build: repos."),
    fetch_only: bool = typer.Option(False, "--fetch-only",
                                    help="Download, verify and build the images; do not validate."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where to write the pool (default: the committed pool.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-package figures as JSON."),
) -> None:
    """Build a real-tier task pool: ``repos`` fetches the pinned sdists (sha256-checked, cached),
    builds each package image and validates AST-mutated bugs against the packages' own tests."""
    if which != "repos":
        _die(f"unknown pool {which!r}; known: repos")
    from posttrain.domains.code.repos.fetch import load_manifest
    from posttrain.domains.code.repos.image import image_dir
    from posttrain.domains.code.repos.pool import build_pool

    with _quiet_stdout(as_json):
        try:
            if fetch_only:
                result = {p.key: str(image_dir(p)) for p in load_manifest()}
            else:
                pool = build_pool(out=out, log=lambda s: err.print(escape(s)))
                result = {name: {k: v for k, v in info.items() if k != "baseline"}
                          for name, info in pool["packages"].items()}
                result["tasks"] = len(pool["tasks"])
        except PosttrainError as exc:
            _die(str(exc))
    if as_json:
        _emit_json(result)
    else:
        for k, v in result.items():
            typer.echo(f"{k}: {v}")
