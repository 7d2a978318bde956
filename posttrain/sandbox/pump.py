"""The host side of one running command: feed stdin, capture capped output, enforce budgets.

What it is: :func:`pump` multiplexes the command's stdout/stderr pipes, its stdin pipe and a
"done" fd (the supervisor's control socket, or a pidfd for the process backend) in one
``select`` loop, and applies the per-command stages of the timeout policy: wall clock,
CPU time (polled from the sandbox's cgroup), idle (no output), the sandbox lifetime, and the
output caps. A stage that fires asks the backend to signal the process tree: TERM first, KILL
after ``kill_grace_s``; the first stage to fire is the one reported.

Guarantees: memory held for output is bounded by the caps (plus one read); the loop ends
within ``kill_grace_s`` + ``drain_s`` of a kill even if the code inside ignores signals, holds
its pipes open, or floods; stdin is written without blocking, so a command that never reads it
cannot wedge the host.

Does not: interpret exit statuses (the backend maps them into an ExecResult).
"""

from __future__ import annotations

import os
import selectors
import time
from dataclasses import dataclass
from typing import Callable

_READ = 65536
CPU_POLL_S = 0.05


@dataclass
class Stream:
    fd: int
    cap: int
    chunks: list
    size: int = 0
    truncated: bool = False
    closed: bool = False

    def take(self, data: bytes) -> bool:
        """Keep data up to the cap; True when the cap was exceeded."""
        room = self.cap - self.size
        if len(data) > room:
            self.chunks.append(data[:max(room, 0)])
            self.size = self.cap
            self.truncated = True
            return True
        self.chunks.append(data)
        self.size += len(data)
        return False

    def value(self) -> bytes:
        return b"".join(self.chunks)


@dataclass
class PumpOutcome:
    stdout: Stream
    stderr: Stream
    stage: str | None  # which budget fired: timeout / idle / cpu_limit / output_limit / lifetime
    wall_s: float
    cpu_s: float | None


@dataclass
class Budgets:
    wall_s: float
    cpu_s: float | None
    idle_s: float | None
    lifetime_deadline: float | None  # absolute monotonic time
    kill_grace_s: float
    drain_s: float = 1.0


def pump(*, out_fd: int, err_fd: int, caps: tuple[int, int], stdin: bytes | None,
         stdin_fd: int | None, done_fd: int, on_done: Callable[[], bool],
         budgets: Budgets, cpu_probe: Callable[[], float | None],
         signal_tree: Callable[[bool], None]) -> PumpOutcome:
    """Run the loop until the command finished and its output is drained (see module doc)."""
    start = time.monotonic()
    out, err = Stream(out_fd, caps[0], []), Stream(err_fd, caps[1], [])
    sel = selectors.DefaultSelector()
    for s in (out, err):
        os.set_blocking(s.fd, False)
        sel.register(s.fd, selectors.EVENT_READ, s)
    pending = memoryview(stdin or b"")
    if stdin_fd is not None:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE, "stdin")
    sel.register(done_fd, selectors.EVENT_READ, "done")
    stage, term_at, kill_sent, done_at = None, None, False, None
    last_output, next_cpu, cpu0 = start, start + CPU_POLL_S, cpu_probe()
    cpu_used = None

    def fire(name: str) -> None:
        nonlocal stage, term_at
        if stage is None:
            stage, term_at = name, time.monotonic()
            signal_tree(False)

    try:
        while True:
            now = time.monotonic()
            if done_at is not None and (out.closed and err.closed or now - done_at > budgets.drain_s):
                break
            if done_at is None:
                if now - start >= budgets.wall_s:
                    fire("timeout")
                elif budgets.idle_s is not None and now - last_output >= budgets.idle_s:
                    fire("idle")
                elif budgets.lifetime_deadline is not None and now >= budgets.lifetime_deadline:
                    fire("lifetime")
                if budgets.cpu_s is not None and cpu0 is not None and now >= next_cpu:
                    cur = cpu_probe()
                    cpu_used = None if cur is None else cur - cpu0
                    next_cpu = now + CPU_POLL_S
                    if cpu_used is not None and cpu_used >= budgets.cpu_s:
                        fire("cpu_limit")
                if term_at is not None and not kill_sent and now - term_at >= budgets.kill_grace_s:
                    kill_sent = True
                    signal_tree(True)
            wake = _next_wake(now, start, last_output, next_cpu, term_at, kill_sent, done_at,
                              budgets, cpu0 is not None)
            for key, _ in sel.select(timeout=max(0.0, wake - now)):
                if key.data == "done":
                    if on_done():
                        done_at = time.monotonic()
                        sel.unregister(done_fd)
                elif key.data == "stdin":
                    pending = _feed(sel, stdin_fd, pending)
                    if not pending:  # _feed closed it: the command sees EOF
                        stdin_fd = None
                else:
                    s = key.data
                    try:
                        data = os.read(s.fd, _READ)
                    except BlockingIOError:
                        continue
                    if not data:
                        s.closed = True
                        sel.unregister(s.fd)
                        continue
                    last_output = time.monotonic()
                    if s.take(data):
                        fire("output_limit")
    finally:
        sel.close()
        if stdin_fd is not None:
            _close(stdin_fd)
    end_cpu = cpu_probe()
    if end_cpu is not None and cpu0 is not None:
        cpu_used = end_cpu - cpu0
    return PumpOutcome(out, err, stage, time.monotonic() - start, cpu_used)


def _next_wake(now, start, last_output, next_cpu, term_at, kill_sent, done_at, b, poll_cpu):
    if done_at is not None:
        return done_at + b.drain_s
    wakes = [start + b.wall_s]
    if b.idle_s is not None:
        wakes.append(last_output + b.idle_s)
    if b.lifetime_deadline is not None:
        wakes.append(b.lifetime_deadline)
    if poll_cpu and b.cpu_s is not None:
        wakes.append(next_cpu)
    if term_at is not None and not kill_sent:
        wakes.append(term_at + b.kill_grace_s)
    if term_at is not None and kill_sent:
        wakes.append(now + 0.05)
    return min(wakes)


def _feed(sel, fd: int, pending: memoryview) -> memoryview:
    try:
        n = os.write(fd, pending[:_READ])
        pending = pending[n:]
    except BlockingIOError:
        return pending
    except (BrokenPipeError, OSError):
        pending = memoryview(b"")
    if not pending:
        sel.unregister(fd)
        _close(fd)
    return pending


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
