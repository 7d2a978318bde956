"""Rich progress bars for the phases of a run (SFT steps, RL steps), and one-line notes.

Disabled (``enabled=False``) it does nothing, so tests and ``--json`` callers stay quiet.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    def __init__(self, cfg: Any, enabled: bool = True):
        self.enabled = enabled
        self.console = Console(stderr=True)
        self.totals = {"sft": cfg.sft.steps, "rl": cfg.rl.steps}
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(),
                                  console=self.console, disable=not enabled)
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> "RunProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)

    def advance(self, phase: str, start: int = 0) -> Callable[[int], None]:
        """A callback setting the phase's bar to the step it is given."""
        if phase not in self._tasks:
            self._tasks[phase] = self._progress.add_task(phase.upper(), total=self.totals[phase],
                                                         completed=start)

        def update(step: int) -> None:
            self._progress.update(self._tasks[phase], completed=step)

        return update

    def note(self, text: str) -> None:
        if self.enabled:
            self._progress.console.print(text)
