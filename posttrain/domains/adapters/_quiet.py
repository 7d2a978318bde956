"""Keep what a third-party generator prints off the user's terminal.

What it is: :func:`quiet_output`, a context manager that sends everything written to
``sys.stdout`` and ``sys.stderr`` while it is active to a logger (DEBUG level, one record per
line) instead of the terminal. reasoning-gym's generators print as they build items:
``code.rg_codeio`` executes data-set snippets that print ``ERROR: I/O error ...
log_file_0.txt`` when a file they expect is absent, and ``code.rg_bf``'s compiler prints a dot
per pass. A library must not print to its user's terminal (nor into a ``--json`` document).

Guarantees: the streams in place when the outermost block was entered are restored when the
last block (of any thread) exits, however the blocks interleave across threads (a depth
counter, not a stack of saved streams, so two threads can never leave a buffer installed);
the text is kept, at DEBUG level on the given logger.

Does not: catch writes to the file descriptors themselves (``os.write(1, ...)``, C code,
child processes); the generators it wraps write through Python's ``print``. While a block is
active, other threads' prints go to the log as well (the streams are process-wide).
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
from typing import Iterator, TextIO

_LOCK = threading.Lock()
_depth = 0
_saved: tuple[TextIO, TextIO] | None = None


class _LogStream(io.TextIOBase):
    """A text stream that turns complete lines into log records."""

    def __init__(self, logger: logging.Logger, name: str):
        self._logger, self._name, self._partial = logger, name, ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            lines = (self._partial + text).split("\n")
            self._partial = lines.pop()
        for line in lines:
            if line.strip():
                self._logger.debug("%s: %s", self._name, line)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            rest, self._partial = self._partial, ""
        if rest.strip():
            self._logger.debug("%s: %s", self._name, rest)


@contextlib.contextmanager
def quiet_output(logger: logging.Logger) -> Iterator[None]:
    """Route ``print`` output of the enclosed code to ``logger`` (see the module docstring)."""
    global _depth, _saved
    with _LOCK:
        if _depth == 0:
            _saved = (sys.stdout, sys.stderr)
            sys.stdout = _LogStream(logger, "stdout")  # type: ignore[assignment]
            sys.stderr = _LogStream(logger, "stderr")  # type: ignore[assignment]
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()
                sys.stdout, sys.stderr = _saved
                _saved = None
