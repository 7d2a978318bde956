"""The console entry point: pins the hash seed, then runs the typer app.

Why: third-party task generators (reasoning-gym's, behind the ``rg_*`` adapter domains)
iterate sets of strings, whose order follows the interpreter's per-process hash seed, so the
same (domain, seed, difficulty) gave different prompts in two processes — 21 of 1,386 tasks
of a foundation corpus differed — and held-out sets, process producers and resumed runs
could disagree about what a task is. When ``PYTHONHASHSEED`` is unset the command re-runs
itself once with ``PYTHONHASHSEED=0`` (before importing anything heavy, so it costs one
interpreter start, tens of milliseconds); worker processes inherit it. A user who sets
``PYTHONHASHSEED`` keeps theirs (and with it, that hash order).

Does not: fix library code imported into another program (``import posttrain`` in a
notebook keeps that interpreter's seed; set ``PYTHONHASHSEED`` there).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") is None:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "posttrain", *sys.argv[1:]])
    from posttrain.cli.main import main as run

    run()
