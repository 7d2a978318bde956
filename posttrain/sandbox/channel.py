"""The host's conversation with one isolated sandbox's supervisor.

What it is: :class:`SupervisorChannel` sends requests to the in-sandbox supervisor and waits
for its replies with a deadline (``control.py`` encodes them for whichever front serves),
upgrades the native front to the Python supervisor when an operation needs it, and keeps
what the supervisor hands over: the pre-forked command process ("zygote": its request socket
and status fd) and the snippet server's socket.

Guarantees: a supervisor that does not answer within the deadline, or whose socket fails,
gets the whole sandbox closed (``on_dead``) and the caller a ``SandboxError``: nobody waits
forever on a wedged sandbox. A zygote or server socket that arrives while another reply is
awaited is kept, not lost; every fd received is either kept here (and closed by
:meth:`close`) or closed at once.

Does not: serialise callers (the sandbox's lock does), or run commands (``execution.py``).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time
from typing import Callable

from posttrain.core.errors import SandboxError

from .control import Control

# Operations only the Python supervisor serves: asking for one upgrades the native front.
PYTHON_OPS = ("write", "remove", "mkdir", "mount", "forwarder", "pyserver")


class SupervisorChannel:
    def __init__(self, ctl: Control, on_dead: Callable[[], None], create_s: float):
        self.ctl = ctl
        self.create_s = create_s
        self.closed = False
        self.zygote = None  # (reaper pid, request socket, status fd, kind)
        self.pyserver = None  # (server pid, socket): the pre-started snippet interpreter
        self._on_dead = on_dead
        self._want_zygote = False
        self.last_words: Callable[[], str] = lambda: "(no log)"  # the supervisor's stderr

    @property
    def native(self) -> bool:
        return self.ctl.native

    def dead(self) -> None:
        """The supervisor is unusable: close the sandbox (which closes this channel)."""
        self._on_dead()

    def close(self) -> None:
        self.closed = True
        self.drop_zygote()
        self.drop_pyserver()
        self.ctl.close()

    def call(self, msg: dict, timeout: float = 10.0) -> dict:
        """Send one request and return its reply; a refusal raises ``SandboxError``."""
        if self.closed:
            raise SandboxError("sandbox is closed")
        if msg.get("op") in PYTHON_OPS:
            self.ensure_python()
        try:
            self.ctl.send(msg)
            reply = self.recv(timeout)
        except (OSError, EOFError) as exc:
            self.dead()
            raise SandboxError(f"sandbox supervisor is gone: {exc}") from exc
        if reply.get("op") == "error":
            raise SandboxError(f"sandbox refused {msg.get('op')}: {reply.get('message')}")
        return reply

    def send_quiet(self, msg: dict) -> bool:
        """Send a request no reply is awaited for (prepare, signal); False if it failed."""
        try:
            self.ctl.send(msg)
            return True
        except OSError:
            return False

    def ensure_python(self) -> None:
        """Upgrade the native front to the Python supervisor (once; same process)."""
        if self.ctl.native and not self.closed:
            try:
                self.ctl.send({"op": "upgrade"})
            except OSError as exc:
                self.dead()
                raise SandboxError(f"sandbox supervisor is gone: {exc}") from exc
            try:
                reply = self.recv(self.create_s)
            except (OSError, EOFError) as exc:  # say what failed, not just "EOF"
                self.dead()
                raise SandboxError(f"the Python supervisor did not start (upgrade from ptinit): "
                                   f"{exc}; its stderr: {self.last_words()}") from exc
            if reply.get("op") != "ok":
                raise SandboxError(f"sandbox supervisor did not start: {reply}")

    def recv_one(self, timeout: float) -> tuple[dict, list]:
        if not select.select([self.ctl], [], [], timeout)[0]:
            self.dead()
            raise SandboxError(f"sandbox supervisor did not answer within {timeout:.1f}s")
        return self.ctl.recv()

    def recv(self, timeout: float) -> dict:
        """Next reply; a pre-forked command ("zygote") arriving meanwhile is kept."""
        deadline = time.monotonic() + timeout
        while True:
            msg, fds = self.recv_one(max(0.0, deadline - time.monotonic()))
            if msg.get("op") == "zygote" and len(fds) == 2:
                self.drop_zygote()
                self.zygote = (int(msg["pid"]), socket.socket(fileno=fds[0]), fds[1],
                               msg.get("kind", "python"))
                if self._want_zygote:
                    return msg
                continue
            if msg.get("op") == "pyserver" and len(fds) == 1:
                self.drop_pyserver()
                self.pyserver = (int(msg["pid"]), socket.socket(fileno=fds[0]))
                return msg
            for fd in fds:
                os.close(fd)
            return msg

    def take_zygote(self) -> tuple:
        """The waiting command process (pid, socket, status fd, kind), waiting for one if needed."""
        if self.zygote is None:
            self._want_zygote = True
            try:
                self.recv(self.create_s)
            finally:
                self._want_zygote = False
        zyg, self.zygote = self.zygote, None
        return zyg

    def pyserver_target(self) -> tuple:
        """(pid, socket, fd) of the snippet interpreter, starting it when there is none (or
        when it left after the last report: it exits when it cannot restore its pristine
        state, ``pristine.py``)."""
        if self.pyserver is not None and _peer_closed(self.pyserver[1]):
            self.drop_pyserver()
        if self.pyserver is None:
            self.call({"op": "pyserver"}, self.create_s)
        pid, sock = self.pyserver
        return pid, sock, sock.fileno()

    def after_command(self, sock, done_fd: int, snippet: bool) -> None:
        if snippet:  # the server lives on; a killed one (EOF) is restarted on demand
            if self.pyserver is not None and _peer_closed(sock):
                self.drop_pyserver()
            return
        sock.close()
        os.close(done_fd)
        self.send_quiet({"op": "prepare"})  # fork the next command now, off its critical path

    def signal_tree(self, pid: int, hard: bool, kill_all: Callable[[], None] | None) -> None:
        """TERM (or KILL) to a command's whole tree; the cgroup kill if the supervisor is gone."""
        sig = int(signal.SIGKILL if hard else signal.SIGTERM)
        if not self.send_quiet({"op": "signal", "pid": pid, "sig": sig}) and hard and kill_all:
            kill_all()

    def drop_zygote(self) -> None:
        if self.zygote is not None:
            _pid, sock, report, _kind = self.zygote
            sock.close()  # the waiting command sees EOF and exits
            os.close(report)
            self.zygote = None

    def drop_pyserver(self) -> None:
        if self.pyserver is not None:
            self.pyserver[1].close()  # the server sees EOF and exits (if still alive)
            self.pyserver = None


def _peer_closed(sock) -> bool:
    """True when the other end of ``sock`` is gone (a killed snippet server).

    A zero-timeout poll first: in the usual case (nothing to read) it answers without the
    exception a non-blocking ``recv`` raises, which costs more here than the syscall.
    """
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    events = poller.poll(0)
    if not events:
        return False
    if events[0][1] & (select.POLLHUP | select.POLLERR):
        return True
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
