"""The host side of one running command: feed stdin, capture capped output, enforce budgets.

What it is: :func:`pump` multiplexes the command's stdout/stderr pipes, its stdin pipe and a
"done" fd (the supervisor's control socket, or a pidfd for the process backend) in one
``poll`` loop (not an epoll selector: creating, filling and closing one costs more syscalls
than a short command's whole loop), and applies the per-command stages of the timeout
policy: wall clock, CPU time (polled from the sandbox's cgroup), idle (no output), the
sandbox lifetime, and the output caps. A stage that fires asks the backend to signal the
process tree: TERM first, KILL after ``kill_grace_s``; the first stage to fire is the one
reported.

Guarantees: memory held for output is bounded by the caps (plus one read); the loop ends
within ``kill_grace_s`` + ``drain_s`` of a kill even if the code inside ignores signals, holds
its pipes open, or floods; stdin is written without blocking, so a command that never reads it
cannot wedge the host.

Does not: interpret exit statuses (the backend maps them into an ExecResult).
"""

from __future__ import annotations

import os
import select
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


class _Ladder:
    """The budgets of one command as it runs: which stage fired first, and the kill ladder."""

    def __init__(self, budgets: Budgets, cpu_probe: Callable[[], float | None],
                 signal_tree: Callable[[bool], None]):
        self.b, self.cpu_probe, self.signal_tree = budgets, cpu_probe, signal_tree
        self.start = self.last_output = time.monotonic()
        self.next_cpu, self.cpu0 = self.start + CPU_POLL_S, cpu_probe()
        self.cpu_used: float | None = None
        self.stage: str | None = None
        self.term_at: float | None = None
        self.kill_sent = False

    def fire(self, name: str) -> None:
        if self.stage is None:
            self.stage, self.term_at = name, time.monotonic()
            self.signal_tree(False)

    def check(self, now: float) -> None:
        b = self.b
        if now - self.start >= b.wall_s:
            self.fire("timeout")
        elif b.idle_s is not None and now - self.last_output >= b.idle_s:
            self.fire("idle")
        elif b.lifetime_deadline is not None and now >= b.lifetime_deadline:
            self.fire("lifetime")
        if b.cpu_s is not None and self.cpu0 is not None and now >= self.next_cpu:
            cur = self.cpu_probe()
            self.cpu_used = None if cur is None else cur - self.cpu0
            self.next_cpu = now + CPU_POLL_S
            if self.cpu_used is not None and self.cpu_used >= b.cpu_s:
                self.fire("cpu_limit")
        if self.term_at is not None and not self.kill_sent and now - self.term_at >= b.kill_grace_s:
            self.kill_sent = True
            self.signal_tree(True)

    def next_wake(self, now: float) -> float:
        b = self.b
        wakes = [self.start + b.wall_s]
        if b.idle_s is not None:
            wakes.append(self.last_output + b.idle_s)
        if b.lifetime_deadline is not None:
            wakes.append(b.lifetime_deadline)
        if self.cpu0 is not None and b.cpu_s is not None:
            wakes.append(self.next_cpu)
        if self.term_at is not None:
            wakes.append(now + 0.05 if self.kill_sent else self.term_at + b.kill_grace_s)
        return min(wakes)

    def finish(self) -> float | None:
        end = self.cpu_probe()
        if end is not None and self.cpu0 is not None:
            self.cpu_used = end - self.cpu0
        return self.cpu_used


def pump(*, out_fd: int, err_fd: int, caps: tuple[int, int], stdin: bytes | None,
         stdin_fd: int | None, done_fd: int, on_done: Callable[[], bool],
         budgets: Budgets, cpu_probe: Callable[[], float | None],
         signal_tree: Callable[[bool], None]) -> PumpOutcome:
    """Run the loop until the command finished and its output is drained (see module doc)."""
    out, err = Stream(out_fd, caps[0], []), Stream(err_fd, caps[1], [])
    poller, what = select.poll(), {out_fd: out, err_fd: err, done_fd: "done"}
    for s in (out, err):
        os.set_blocking(s.fd, False)
    if stdin_fd is not None:
        os.set_blocking(stdin_fd, False)
        what[stdin_fd] = "stdin"
    for fd, key in what.items():
        poller.register(fd, select.POLLOUT if key == "stdin" else select.POLLIN)
    pending = memoryview(stdin or b"")
    ladder, done_at = _Ladder(budgets, cpu_probe, signal_tree), None
    try:
        while True:
            now = time.monotonic()
            if done_at is not None and (out.closed and err.closed or now - done_at > budgets.drain_s):
                break
            if done_at is None:
                ladder.check(now)
            wake = done_at + budgets.drain_s if done_at is not None else ladder.next_wake(now)
            for fd, _ev in poller.poll(max(0.0, wake - now) * 1e3):
                key = what.get(fd)
                if key == "done":
                    if on_done():
                        done_at = time.monotonic()
                        _forget(poller, what, done_fd)
                elif key == "stdin":
                    pending = _feed(stdin_fd, pending)
                    if not pending:  # _feed closed it: the command sees EOF
                        _forget(poller, what, stdin_fd)
                        stdin_fd = None
                elif key is not None and _drain(key, poller, what):
                    ladder.last_output = time.monotonic()
                    if key.truncated:
                        ladder.fire("output_limit")
    finally:
        if stdin_fd is not None:
            _close(stdin_fd)
    cpu_used = ladder.finish()
    return PumpOutcome(out, err, ladder.stage, time.monotonic() - ladder.start, cpu_used)


def _drain(s: Stream, poller, what: dict) -> bool:
    """Read what is there; True when output came (the cap may now be exceeded)."""
    try:
        data = os.read(s.fd, _READ)
    except BlockingIOError:
        return False
    if not data:
        s.closed = True
        _forget(poller, what, s.fd)
        return False
    s.take(data)
    return True


def _feed(fd: int, pending: memoryview) -> memoryview:
    """Write what the pipe takes now; closes ``fd`` once all is written (or the reader left)."""
    try:
        n = os.write(fd, pending[:_READ])
        pending = pending[n:]
    except BlockingIOError:
        return pending
    except (BrokenPipeError, OSError):
        pending = memoryview(b"")
    if not pending:
        _close(fd)
    return pending


def _forget(poller, what: dict, fd: int) -> None:
    poller.unregister(fd)
    del what[fd]


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
