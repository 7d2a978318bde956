"""Message framing between the host and the in-sandbox supervisor.

What it is: JSON messages over a ``SOCK_SEQPACKET`` Unix socket pair, with file descriptors
(stdin/stdout/stderr pipes) passed as ``SCM_RIGHTS`` on the first packet of a message.

Guarantees: message boundaries are preserved; a message larger than one packet is split into
chunks and reassembled; a closed peer raises ``EOFError``; fds that arrive are returned to the
caller, who owns them.

Does not: authenticate the peer (the socket pair is private to host and supervisor), or
bound the total message size beyond ``MAX_MESSAGE`` (a larger one is a protocol error).

This module is stdlib-only on purpose: it is bound read-only into the sandbox and imported
by the supervisor, which cannot import posttrain.
"""

from __future__ import annotations

import json
import socket

CHUNK = 60_000  # below the default SEQPACKET send buffer, so one chunk is one packet
MAX_MESSAGE = 64 * 1024 * 1024
MAX_FDS = 8


def send(sock: socket.socket, obj: dict, fds: tuple[int, ...] | list[int] = ()) -> None:
    """Send one JSON message, attaching ``fds`` to its first packet."""
    data = json.dumps(obj, separators=(",", ":")).encode()
    if len(data) > MAX_MESSAGE:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [b""]
    for i, piece in enumerate(pieces):
        flag = b"F" if i == len(pieces) - 1 else b"C"
        if i == 0 and fds:
            socket.send_fds(sock, [flag + piece], list(fds))
        else:
            sock.sendall(flag + piece)


def recv(sock: socket.socket) -> tuple[dict, list[int]]:
    """Receive one message and the fds sent with it; ``EOFError`` when the peer closed."""
    parts: list[bytes] = []
    fds: list[int] = []
    total = 0
    while True:
        data, got, _flags, _addr = socket.recv_fds(sock, CHUNK + 1, MAX_FDS)
        fds.extend(got)
        if not data:
            for fd in fds:
                _close(fd)
            raise EOFError("peer closed the control socket")
        parts.append(data[1:])
        total += len(data) - 1
        if total > MAX_MESSAGE:
            raise ValueError("message too large")
        if data[:1] == b"F":
            return json.loads(b"".join(parts)), fds


def _close(fd: int) -> None:
    import os

    try:
        os.close(fd)
    except OSError:
        pass
