"""Message framing between the host and the in-sandbox supervisor.

What it is: ``marshal``-encoded messages (dicts of str/int/float/bool/None/bytes/lists) over a
``SOCK_SEQPACKET`` Unix socket pair, with file descriptors (stdio pipes, a pre-forked command's
request socket) passed as ``SCM_RIGHTS`` on the first packet of a message.

Why marshal and raw ``sendmsg``: the supervisor's start-up is on every cold start's critical
path, and ``json`` (which imports ``re``) and ``socket.py`` (which imports ``enum``) cost more
to import than the whole rest of the supervisor. Both ends are CPython processes we start; no
code inside the sandbox can reach this socket.

Guarantees: message boundaries are preserved; a message larger than one packet is split into
chunks and reassembled; a closed peer raises ``EOFError``; fds that arrive are returned to the
caller, who owns them.

Does not: authenticate the peer, or accept anything but the trusted supervisor/host pair (a
marshal stream is not safe against a malicious writer; none can reach this socket).

Stdlib-only and import-light: bound read-only into the sandbox for the supervisor.
"""

import marshal
import os

CHUNK = 60_000  # below the default SEQPACKET send buffer, so one chunk is one packet
MAX_MESSAGE = 64 * 1024 * 1024
MAX_FDS = 8
_SOL_SOCKET, _SCM_RIGHTS = 1, 1
_INT = 4


def send(sock, obj: dict, fds=()) -> None:
    """Send one message, attaching ``fds`` to its first packet."""
    data = marshal.dumps(obj, 4)
    if len(data) > MAX_MESSAGE:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [b""]
    for i, piece in enumerate(pieces):
        flag = b"F" if i == len(pieces) - 1 else b"C"
        anc = []
        if i == 0 and fds:
            anc = [(_SOL_SOCKET, _SCM_RIGHTS, b"".join(int(fd).to_bytes(_INT, "little", signed=True)
                                                        for fd in fds))]
        sock.sendmsg([flag + piece], anc)


def recv(sock, first=None) -> tuple:
    """Receive one message and the fds sent with it; ``EOFError`` when the peer closed.

    ``first``: a ``recvmsg`` result already read from ``sock`` (the message's first packet).
    """
    parts, fds, total = [], [], 0
    while True:
        data, anc, _flags, _addr = first or sock.recvmsg(CHUNK + 1, 64)
        first = None
        for level, kind, payload in anc:
            if level == _SOL_SOCKET and kind == _SCM_RIGHTS:
                usable = len(payload) - len(payload) % _INT
                fds += [int.from_bytes(payload[j:j + _INT], "little", signed=True)
                        for j in range(0, usable, _INT)]
        if not data:
            for fd in fds:
                _close(fd)
            raise EOFError("peer closed the control socket")
        parts.append(data[1:])
        total += len(data) - 1
        if total > MAX_MESSAGE:
            raise ValueError("message too large")
        if data[:1] == b"F":
            return marshal.loads(b"".join(parts)), fds


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
