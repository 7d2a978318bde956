"""The host-side egress proxy for sandboxes in ``allowlist`` network mode.

What it is: :class:`EgressProxy` serves HTTP ``CONNECT host:port`` (HTTPS and any TCP) and
plain ``http://`` requests on a Unix socket that is bound into the sandbox; inside, a small
forwarder (``forwarder.py``) exposes it as ``127.0.0.1:3128`` and commands get
``HTTP(S)_PROXY`` set. The sandbox itself still has no interface but loopback.

Guarantees: a request is relayed only when its host name matches ``allow_hosts`` (exact, or
``*.example.org`` for subdomains) AND every address it resolves to is public
(``netaddr.public_address``: every special-purpose IPv4 and IPv6 block, and 6to4, Teredo,
NAT64 and IPv4-mapped embeddings of non-public IPv4, are refused), so the host's own
services and cloud metadata endpoints are unreachable; the proxy connects to the address it
checked (no second DNS lookup to rebind); each refusal is answered ``403`` with the reason
and counted in ``refused``.

The host's cost is bounded whatever the sandbox does: at most ``workers`` threads serve
connections (started as needed, then reused), at most ``backlog`` accepted connections wait
for one, and any connection beyond that is answered ``503`` at once ("too many
connections") and closed; a client that sends no request head within ``head_timeout_s``, or
a relay idle for ``idle_timeout_s``, is dropped, so no connection holds a worker forever.
1,000 simultaneous connections keep the harness at 1 + ``workers`` proxy threads.

Does not: inspect TLS, limit bandwidth, or proxy UDP/DNS (name resolution happens here).
"""

from __future__ import annotations

import os
import queue
import selectors
import socket
import tempfile
import threading
from typing import Callable, Iterable

from posttrain.core.errors import SandboxError

from .netaddr import public_address

__all__ = ["EgressProxy", "host_allowed", "public_address"]


def host_allowed(host: str, allow: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    for pattern in allow:
        p = pattern.lower().rstrip(".")
        if host == p or (p.startswith("*.") and host.endswith(p[1:])):
            return True
    return False


class EgressProxy:
    def __init__(self, allow_hosts: Iterable[str], *,
                 address_ok: Callable[[str], bool] = public_address,
                 resolve: Callable = socket.getaddrinfo, connect_timeout: float = 10.0,
                 workers: int = 16, backlog: int = 64, head_timeout_s: float = 10.0,
                 idle_timeout_s: float = 300.0):
        self.allow_hosts = tuple(allow_hosts)
        self.address_ok = address_ok
        self.resolve = resolve
        self.connect_timeout = connect_timeout
        self.workers, self.backlog = workers, backlog
        self.head_timeout_s, self.idle_timeout_s = head_timeout_s, idle_timeout_s
        self.refused: list[str] = []
        self.relayed = 0
        self.busy_refusals = 0  # connections answered 503 because every slot was taken
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # workers waiting on the queue
        self._queued = 0  # connections accepted, not yet taken by a worker
        self._dir = tempfile.mkdtemp(prefix="posttrain-proxy-")
        os.chmod(self._dir, 0o711)
        self.path = os.path.join(self._dir, "proxy.sock")
        self._srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._srv.bind(self.path)
        os.chmod(self.path, 0o777)  # the sandbox's unprivileged uid must connect
        self._srv.listen(64)
        self._closed = False
        threading.Thread(target=self._accept, name="posttrain-egress-proxy", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._srv.close()
        with self._lock:
            for _ in self._threads:
                self._queue.put(None)  # each worker takes one and leaves
        try:
            os.unlink(self.path)
            os.rmdir(self._dir)
        except OSError:
            pass

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._srv.accept()
            except OSError:
                return
            self._dispatch(conn)

    def _dispatch(self, conn: socket.socket) -> None:
        """Queue ``conn`` for a worker (starting one if none is idle and the cap allows), or
        answer ``503`` when ``backlog`` connections already wait."""
        with self._lock:
            full = self._queued >= self.backlog
            if not full:
                self._queued += 1
                if self._idle == 0 and len(self._threads) < self.workers:
                    t = threading.Thread(target=self._work, daemon=True,
                                         name=f"posttrain-egress-{len(self._threads)}")
                    self._threads.append(t)
                    self._idle += 1  # counted now, so the next connection does not start another
                    t.start()
        if full:
            self.busy_refusals += 1
            _answer(conn, b"503 Service Unavailable",
                    f"too many connections: {self.workers} served, {self.backlog} waiting")
            conn.close()
            return
        self._queue.put(conn)

    def _work(self) -> None:
        while True:
            conn = self._queue.get()
            with self._lock:
                self._idle -= 1
                if conn is not None:
                    self._queued -= 1
            if conn is None:
                return
            try:
                self._serve(conn)
            except Exception:  # noqa: BLE001 - one connection's failure never ends a worker
                conn.close()
            with self._lock:
                self._idle += 1

    def check(self, host: str, port: int) -> tuple[str, int]:
        """The (address, port) to connect to, or ``SandboxError`` saying why not."""
        if not host_allowed(host, self.allow_hosts):
            raise SandboxError(f"host {host!r} is not in the allowlist")
        try:
            infos = self.resolve(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise SandboxError(f"cannot resolve {host!r}: {exc}") from exc
        addrs = [info[4][0] for info in infos]
        bad = [a for a in addrs if not self.address_ok(a)]
        if not addrs or bad:
            raise SandboxError(f"{host!r} resolves to a non-public address {bad or addrs}")
        return addrs[0], port

    def _serve(self, conn: socket.socket) -> None:
        upstream = None
        try:
            conn.settimeout(self.head_timeout_s)  # a silent client must not hold a worker
            head = _read_head(conn)
            conn.settimeout(None)
            method, target, rest = _parse_request(head)
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                addr = self.check(host.strip("[]"), int(port))
                upstream = socket.create_connection(addr, self.connect_timeout)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                host, port, path = _split_url(target)
                addr = self.check(host, port)
                upstream = socket.create_connection(addr, self.connect_timeout)
                upstream.sendall(f"{method} {path} ".encode() + rest)
            self.relayed += 1
            _relay(conn, upstream, self.idle_timeout_s)
        except (SandboxError, ValueError, OSError) as exc:
            self.refused.append(str(exc))
            _answer(conn, b"403 Forbidden", str(exc))
        finally:
            conn.close()
            if upstream is not None:
                upstream.close()


def _read_head(conn: socket.socket, limit: int = 65536) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise ValueError("connection closed before the request head")
        data += chunk
        if len(data) > limit:
            raise ValueError("request head too large")
    return data


def _parse_request(head: bytes) -> tuple[str, str, bytes]:
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise ValueError(f"malformed request line {line[:80]!r}")
    return parts[0].upper(), parts[1], parts[2].encode() + b"\r\n" + rest


def _split_url(url: str) -> tuple[str, int, str]:
    if not url.lower().startswith("http://"):
        raise ValueError("only CONNECT and http:// URLs are proxied")
    hostport, _, path = url[7:].partition("/")
    host, _, port = hostport.partition(":")
    return host, int(port or 80), "/" + path


def _answer(conn: socket.socket, status: bytes, why: str) -> None:
    """A short plain-text HTTP answer; never blocks the caller for long (it may be the
    accept loop)."""
    try:
        conn.settimeout(1.0)
        conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\n"
                     b"Connection: close\r\n\r\n" + why.encode() + b"\n")
    except OSError:
        pass


def _relay(a: socket.socket, b: socket.socket, idle_timeout_s: float) -> None:
    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ, b)
    sel.register(b, selectors.EVENT_READ, a)
    try:
        while True:
            ready = sel.select(idle_timeout_s)
            if not ready:
                return  # idle: give the worker back
            for key, _ in ready:
                data = key.fileobj.recv(65536)
                if not data:
                    return
                key.data.sendall(data)
    finally:
        sel.close()
