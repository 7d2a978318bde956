"""The ``posttrain`` command: thin typer commands over the library.

Each command group lives in its own module and exposes ``app`` (a typer app, mounted under
its name) or ``register(app)`` (top-level commands). ``posttrain --help`` lists every command
with a one-line purpose.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="posttrain",
    help="Post-train a fixed foundation model with RL on verifiable tasks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# (module, group name or None for top-level commands, one-line help)
_GROUPS = [
    ("posttrain.cli.run_cmd", None, ""),
    ("posttrain.cli.domains_cmd", "domains", "List, sample, check and calibrate task domains."),
    ("posttrain.cli.sandbox_cmd", "sandbox", "Run commands in an isolated sandbox; self-check it."),
    ("posttrain.cli.eval_cmd", "eval", "Evaluate models: pass@k, layers, regression gate."),
    ("posttrain.cli.models_cmd", "models", "Foundation and post-trained versions: list, promote, roll back."),
    ("posttrain.cli.serve_cmd", None, ""),
    ("posttrain.cli.foundation_cmd", "foundation", "Build a foundation model from a recipe; verify a built one."),
    ("posttrain.cli.plugins_cmd", "plugins", "List every pluggable kind's registered ids (built-in and plugins)."),
]


def _mount() -> None:
    for module, name, help_text in _GROUPS:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:  # that command group is not built in this checkout
                continue
            raise
        if name is None:
            mod.register(app)
        else:
            app.add_typer(mod.app, name=name, help=help_text)


_mount()


def _audit_alias() -> None:
    """``posttrain audit RUN --domain D`` is ``posttrain eval audit``, kept at the top level."""
    try:
        from posttrain.cli import eval_cmd
    except ModuleNotFoundError:
        return
    if hasattr(eval_cmd, "audit"):
        app.command("audit", help="Sample trajectories of a run for human review of reward hacking.")(
            eval_cmd.audit)


_audit_alias()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
