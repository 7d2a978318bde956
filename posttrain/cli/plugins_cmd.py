"""``posttrain plugins``: every pluggable kind, its registered ids and where they come from.

What it is: the one view over the project's one extension mechanism (DESIGN.md §8): each
kind below is a :class:`~posttrain.core.registry.Registry` with an entry-point group; a
package extends a kind by naming, in that group, a module (or callable) that registers into
the registry. ``plugins list [KIND...] [--json]`` prints ``{kind, id, plugin, target}`` rows
(``plugin``: registered by an entry point rather than built in; ``target``: the
``module:attribute`` behind the id) and any plugin that failed to load.

Guarantees: listing loads every plugin of the listed kinds (that is how their ids become
known) and a plugin that fails to load is reported, never fatal; an unknown KIND exits 2
naming the known kinds. Does not: install or enable anything.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, List, Optional

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

# kind -> (module, registry attribute, what the ids name)
KINDS: dict[str, tuple[str, str, str]] = {
    "domain": ("posttrain.domains.base", "DOMAINS", "task domains (posttrain domains list)"),
    "algorithm": ("posttrain.trainer.algorithms", "ALGORITHM_REGISTRY", "rl.algorithm recipes"),
    "loss": ("posttrain.trainer.losses", "LOSSES", "policy losses"),
    "advantage": ("posttrain.trainer.advantages", "ADVANTAGES", "advantage estimators"),
    "correction": ("posttrain.trainer.corrections", "CORRECTIONS", "rl.correction behaviour corrections"),
    "producer_pool": ("posttrain.trainer.producers", "POOLS", "async_rl.executor rollout pools"),
    "inference_backend": ("posttrain.inference", "INFERENCE_BACKENDS", "inference backends"),
    "sandbox_backend": ("posttrain.sandbox.factory", "SANDBOX_BACKENDS", "sandbox backends"),
    "reward_source": ("posttrain.rollout.reward_service", "REWARD_SOURCES", "reward sources"),
    "tool": ("posttrain.tools.registry", "TOOLS", "tools a domain can offer"),
}


def registry(kind: str) -> Any:
    """The Registry of ``kind`` (imported on demand: some kinds import torch)."""
    module, attr, _ = KINDS[kind]
    reg = getattr(importlib.import_module(module), attr)
    if kind == "domain":
        from posttrain.domains import load_builtin_domains

        load_builtin_domains()
    return reg


def rows(kinds: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """``(rows, load errors)`` for the given kinds."""
    out, errors = [], []
    for kind in kinds:
        reg = registry(kind)
        for item_id in reg.ids():
            out.append({"kind": kind, "id": item_id, "plugin": item_id in reg.plugin_ids,
                        "target": reg.target(item_id)})
        errors += [{"kind": kind, "entry_point": n, "error": m}
                   for n, m in sorted(reg.discovery_errors.items())]
    return out, errors


@app.command("list")
def list_cmd(
    kind: Optional[List[str]] = typer.Argument(None, metavar="[KIND]...", help="Kinds (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
) -> None:
    """List the registered ids of every pluggable kind (built-in and plugins)."""
    bad = [k for k in kind or [] if k not in KINDS]
    if bad:
        typer.echo(f"error: unknown kind {bad[0]!r}; kinds: {', '.join(KINDS)}", err=True)
        raise typer.Exit(2)
    kinds = list(kind) if kind else list(KINDS)
    found, errors = rows(kinds)
    if as_json:
        typer.echo(json.dumps({"plugins": found, "errors": errors,
                               "groups": {k: registry(k).entry_point_group for k in kinds}}, indent=2))
        return
    for k in kinds:
        mine = [r for r in found if r["kind"] == k]
        typer.echo(f"{k} ({len(mine)}; entry points: {registry(k).entry_point_group}) - {KINDS[k][2]}")
        if k == "domain":  # hundreds: `posttrain domains list` shows them; here only plugins
            mine = [r for r in mine if r["plugin"]]
        for r in mine:
            typer.echo(f"  {r['id']}{'  [plugin]' if r['plugin'] else ''}  {r['target']}")
    for e in errors:
        typer.echo(f"plugin {e['entry_point']!r} ({e['kind']}) failed to load: {e['error']}", err=True)
