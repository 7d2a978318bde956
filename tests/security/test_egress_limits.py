"""The egress proxy's host-side limits: which addresses it connects to, and how many threads
a flood of connections can cost the harness. Loopback and Unix-socket traffic only."""

import socket
import threading
import time

import pytest

from posttrain.sandbox.netproxy import EgressProxy, public_address

pytestmark = pytest.mark.security

REFUSED = [
    "192.0.0.8", "2002:7f00::1",  # the two the review found
    "0.0.0.0", "10.1.2.3", "100.64.0.1", "127.0.0.1", "169.254.169.254", "172.16.0.1",
    "192.0.0.9", "192.0.0.170", "192.0.2.1", "192.31.196.1", "192.52.193.1", "192.88.99.1",
    "192.168.1.1", "192.175.48.1", "198.18.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.1",
    "240.0.0.1", "255.255.255.255",
    "::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
    "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::808:808",
    "2002:a00:1::1", "2002:c0a8:101::1", "2002:808:808::1",  # 6to4: refused whatever it embeds
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo of 127.0.0.1
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo of 8.8.8.8 (refused outright too)
    "2001:db8::1", "2001:2::1", "2001:10::1", "2001:20::1", "2620:4f:8000::1", "3fff::1",
    "5f00::1", "100::1", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "fec0::1",
    "ff02::1", "4000::1", "::ffff:0.0.0.0",
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "2a00:1450:4001::200e",
          "::ffff:8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize("ip", REFUSED)
def test_special_purpose_addresses_are_refused(ip):
    assert not public_address(ip), ip


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_are_allowed(ip):
    assert public_address(ip), ip


def _echo_once():
    """A loopback TCP server that echoes one message of one connection."""
    srv = socket.create_server(("127.0.0.1", 0))

    def once():
        c, _ = srv.accept()
        with c:
            c.sendall(c.recv(100))

    threading.Thread(target=once, daemon=True).start()
    return srv


def test_a_thousand_connections_keep_the_thread_count_bounded():
    proxy = EgressProxy(["localhost"], address_ok=lambda ip: ip == "127.0.0.1",
                        resolve=lambda host, port, type: [(0, 0, 0, "", ("127.0.0.1", port))],
                        workers=8, backlog=32, head_timeout_s=30)
    base = threading.active_count()
    clients, peak = [], 0
    try:
        for _ in range(1000):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(proxy.path)  # and send nothing: each would hold a thread per connection
            clients.append(c)
            peak = max(peak, threading.active_count() - base)
        deadline = time.monotonic() + 20
        while proxy.busy_refusals < 1000 - 8 - 32 and time.monotonic() < deadline:
            time.sleep(0.02)
            peak = max(peak, threading.active_count() - base)
        assert peak <= 8, f"{peak} threads for 1,000 connections"
        assert proxy.busy_refusals == 1000 - 8 - 32
        clients[-1].settimeout(5)
        assert clients[-1].recv(200).startswith(b"HTTP/1.1 503 ")  # a clear status, at once
        for c in clients:
            c.close()
        srv = _echo_once()  # the workers are free again: a real request is relayed
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(10)
            c.connect(proxy.path)
            c.sendall(f"CONNECT localhost:{srv.getsockname()[1]} HTTP/1.1\r\n\r\n".encode())
            assert c.recv(100).startswith(b"HTTP/1.1 200 ")
            c.sendall(b"ping")
            assert c.recv(100) == b"ping"
        srv.close()
    finally:
        for c in clients:
            c.close()
        proxy.close()
