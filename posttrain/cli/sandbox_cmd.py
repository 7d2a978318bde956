"""``posttrain sandbox``: run a command in an isolated sandbox; self-check the isolation.

- ``posttrain sandbox exec [--limits JSON] [--timeout S] [--backend B] -- CMD...`` prints the
  ExecResult as one JSON document; the exit status is 0 when the command's status is ``ok``.
- ``posttrain sandbox selfcheck [--json]`` runs the attack suite (posttrain.sandbox.attacks)
  against this host and prints a table (or JSON); exit status 1 if any case is not contained
  or leaves the host dirty.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
import uuid
from typing import List, Optional

import typer

from posttrain.core.errors import ConfigError, SandboxError

app = typer.Typer(help="Run commands in an isolated sandbox; self-check it.", no_args_is_help=True,
                  add_completion=False)


@app.command("exec", context_settings={"allow_interspersed_args": False})
def exec_cmd(
    cmd: List[str] = typer.Argument(..., help="The command and its arguments (after --)."),
    limits: Optional[str] = typer.Option(None, "--limits", help='JSON, e.g. {"memory_bytes": 268435456}'),
    timeout: float = typer.Option(30.0, "--timeout", help="Wall-clock budget in seconds."),
    cpu_time: Optional[float] = typer.Option(None, "--cpu-time", help="CPU budget in seconds."),
    backend: str = typer.Option("auto", "--backend", help="auto, isolated or process."),
    stdin: bool = typer.Option(False, "--stdin", help="Pass this process's stdin to the command."),
) -> None:
    """Run CMD in a fresh sandbox and print its ExecResult as JSON."""
    from posttrain.sandbox import open_sandbox

    try:
        lim = json.loads(limits) if limits else None
        data = sys.stdin.buffer.read() if stdin else None
        with open_sandbox(limits=lim, backend=backend) as sb:
            result = sb.exec(list(cmd), stdin=data, timeout=timeout, cpu_time=cpu_time)
            out = result.to_dict()
            out["backend"] = sb.backend
    except (json.JSONDecodeError, ConfigError, SandboxError) as exc:
        typer.echo(json.dumps({"status": "sandbox_error", "reason": str(exc)}))
        raise typer.Exit(2)
    typer.echo(json.dumps(out))
    raise typer.Exit(0 if out["status"] == "ok" else 1)


def run_selfcheck() -> list[dict]:
    """Run every attack case with host-clean checks; one row per case."""
    from posttrain.sandbox import attacks, hostcheck
    from posttrain.sandbox.isolated import IsolatedSandbox

    rows = []
    for name, case in attacks.ATTACKS:
        marker = f"ptmark{uuid.uuid4().hex[:12]}"
        scratch = tempfile.mkdtemp(prefix=f"pt-selfcheck-{marker}-")
        opened: list = []

        def make(**kw):
            kw.setdefault("limits", attacks.SMALL)
            kw.setdefault("timeouts", attacks.QUICK)
            sb = IsolatedSandbox(**kw)
            opened.append(sb)
            return sb

        before = hostcheck.capture(marker)
        t0 = time.monotonic()
        try:
            contained, detail = case(attacks.Ctx(open=make, marker=marker, scratch=scratch))
        except Exception as exc:  # noqa: BLE001 - a crashed case is a failed case
            contained, detail = False, f"{type(exc).__name__}: {exc}"
        for sb in opened:
            sb.close()
        shutil.rmtree(scratch, ignore_errors=True)
        dirty = hostcheck.leftovers(before, hostcheck.capture(marker))
        rows.append({"case": name, "contained": bool(contained), "host_clean": not dirty,
                     "seconds": round(time.monotonic() - t0, 2),
                     "detail": str(detail)[:120] + (f" | leftovers: {dirty}" if dirty else "")})
    return rows


@app.command("selfcheck")
def selfcheck(as_json: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    """Run the attack suite against this host and report containment per case."""
    from posttrain.sandbox import isolated_available

    ok, why = isolated_available()
    if not ok:
        typer.echo(json.dumps({"ok": False, "reason": why}) if as_json else f"isolated backend unavailable: {why}")
        raise typer.Exit(1)
    rows = run_selfcheck()
    passed = all(r["contained"] and r["host_clean"] for r in rows)
    if as_json:
        typer.echo(json.dumps({"ok": passed, "cases": rows}))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title="posttrain sandbox selfcheck")
        for col in ("case", "contained", "host clean", "s", "detail"):
            table.add_column(col)
        for r in rows:
            table.add_row(r["case"], "yes" if r["contained"] else "NO",
                          "yes" if r["host_clean"] else "NO", f"{r['seconds']:.1f}", r["detail"])
        Console(width=160).print(table)
        typer.echo(f"{sum(r['contained'] and r['host_clean'] for r in rows)}/{len(rows)} cases passed")
    raise typer.Exit(0 if passed else 1)
