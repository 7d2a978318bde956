"""Inside-sandbox forwarder: 127.0.0.1:3128 -> the host egress proxy's Unix socket.

Why: ordinary clients (curl, pip, requests) speak to an HTTP proxy over TCP; the sandbox has
no route out, only loopback and the proxy socket bound at ``/run/posttrain-proxy.sock``
(reached through an fd once that bind is hidden: ``mountview.py``).
Runs without capabilities, under the seccomp filter, as a child of the supervisor.
Guarantees: bytes are relayed unchanged in both directions; nothing else is reachable.
Stdlib-only.
"""

import os
import select
import socket

LISTEN = ("127.0.0.1", 3128)
PROXY = "/run/posttrain-proxy.sock"


def serve(proxy: str = PROXY) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(LISTEN)
    srv.listen(64)
    pairs: dict = {}
    while True:
        ready, _, _ = select.select([srv] + list(pairs), [], [])
        for s in ready:
            if s is srv:
                client, _ = srv.accept()
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    up.connect(proxy)
                except OSError:
                    client.close()
                    continue
                pairs[client], pairs[up] = up, client
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            peer = pairs.get(s)
            if not data or peer is None:
                for x in (s, peer):
                    if x is not None:
                        pairs.pop(x, None)
                        x.close()
                continue
            try:
                peer.sendall(data)
            except OSError:
                pass


if __name__ == "__main__":
    os.setsid()
    serve()
