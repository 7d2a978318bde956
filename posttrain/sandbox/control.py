"""The host's end of a sandbox's control socket, whichever front is serving it.

What it is: :class:`Control` sends requests to, and decodes replies from, the in-sandbox
supervisor: the native front (``ptinit``: one-letter text packets) until it is upgraded, the
Python supervisor (``wire``: marshal messages) after. Replies are decoded by their first byte
(``F``/``C`` are wire packets; ``R``, ``Z``, ``K``, ``E`` are ptinit's), so a reply the native
front sent just before an upgrade is still read correctly.

Guarantees: every reply comes back as ``(dict, fds)`` in the wire shape (``op`` key); a closed
peer raises ``EOFError``; fds received are the caller's to close.

Does not: wait with a timeout (the caller selects on :attr:`sock` first).
"""

from __future__ import annotations

from . import wire

_NATIVE_OPS = {"prepare": "P", "ping": "?", "upgrade": "U"}


class Control:
    def __init__(self, sock, native: bool):
        self.sock = sock
        self.native = native  # True while ptinit serves the socket

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()

    def send(self, msg: dict, fds=()) -> None:
        op = msg.get("op")
        if not self.native:
            wire.send(self.sock, msg, fds)
        elif op == "signal":
            self.sock.send(b"S %d %d" % (int(msg["pid"]), int(msg["sig"])))
        elif op in _NATIVE_OPS:
            self.sock.send(_NATIVE_OPS[op].encode())
            if op == "upgrade":
                self.native = False  # from now on the Python supervisor answers
        else:
            raise ValueError(f"the native front does not serve {op!r}; upgrade first")

    def recv(self) -> tuple[dict, list]:
        first = self.sock.recvmsg(wire.CHUNK + 1, 64)
        data = first[0]
        if not data:
            raise EOFError("peer closed the control socket")
        if data[:1] in (b"F", b"C"):
            return wire.recv(self.sock, first)
        fds = []
        for level, kind, payload in first[1]:
            if level == 1 and kind == 1:
                fds += [int.from_bytes(payload[j:j + 4], "little", signed=True)
                        for j in range(0, len(payload) - len(payload) % 4, 4)]
        tag, _, rest = data.decode("ascii", "replace").partition(" ")
        if tag == "Z":
            return {"op": "zygote", "pid": int(rest), "kind": "native"}, fds
        if tag == "R":
            return {"op": "ready", "store_fd": int(rest)}, fds
        if tag == "K":
            return {"op": "pong"}, fds
        return {"op": "error", "message": rest or data.decode("ascii", "replace")}, fds
