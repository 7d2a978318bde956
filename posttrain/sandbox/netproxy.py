"""The host-side egress proxy for sandboxes in ``allowlist`` network mode.

What it is: :class:`EgressProxy` serves HTTP ``CONNECT host:port`` (HTTPS and any TCP) and
plain ``http://`` requests on a Unix socket that is bound into the sandbox; inside, a small
forwarder (``forwarder.py``) exposes it as ``127.0.0.1:3128`` and commands get
``HTTP(S)_PROXY`` set. The sandbox itself still has no interface but loopback.

Guarantees: a request is relayed only when its host name matches ``allow_hosts`` (exact, or
``*.example.org`` for subdomains) AND every address it resolves to is public: private,
loopback, link-local, multicast, reserved and unspecified ranges (IPv4 and IPv6, including
IPv4-mapped) are always refused, so the host's own services and cloud metadata endpoints are
unreachable; the proxy connects to the address it checked (no second DNS lookup to rebind);
each refusal is answered ``403`` with the reason and counted in ``refused``.

Does not: inspect TLS, limit bandwidth, or proxy UDP/DNS (name resolution happens here).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import tempfile
import threading
from typing import Callable, Iterable

from posttrain.core.errors import SandboxError


def public_address(ip: str) -> bool:
    """True only for globally routable unicast addresses."""
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_global and not (addr.is_multicast or addr.is_reserved or addr.is_loopback
                                   or addr.is_link_local or addr.is_private or addr.is_unspecified)


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
                 resolve: Callable = socket.getaddrinfo, connect_timeout: float = 10.0):
        self.allow_hosts = tuple(allow_hosts)
        self.address_ok = address_ok
        self.resolve = resolve
        self.connect_timeout = connect_timeout
        self.refused: list[str] = []
        self.relayed = 0
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
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

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
            head = _read_head(conn)
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
            _relay(conn, upstream)
        except (SandboxError, ValueError, OSError) as exc:
            self.refused.append(str(exc))
            try:
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n"
                             + str(exc).encode() + b"\n")
            except OSError:
                pass
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


def _relay(a: socket.socket, b: socket.socket) -> None:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ, b)
    sel.register(b, selectors.EVENT_READ, a)
    try:
        while True:
            for key, _ in sel.select():
                data = key.fileobj.recv(65536)
                if not data:
                    return
                key.data.sendall(data)
    finally:
        sel.close()
