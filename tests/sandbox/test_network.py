"""Network policy: none by default; allowlist through the host proxy, which refuses the host's
private, loopback and link-local ranges. Only addresses on this machine are used."""

import socket
import threading

import pytest

from posttrain.core.errors import SandboxError
from posttrain.sandbox import Limits, NetworkPolicy
from posttrain.sandbox.isolated import IsolatedSandbox
from posttrain.sandbox.netproxy import EgressProxy, host_allowed, public_address

LIM = Limits(memory_bytes=128 << 20, store_bytes=32 << 20)
# A proxy-aware HTTP GET inside the sandbox (urllib honours http_proxy), printing the body
# of any answer, 403 refusals included.
GET = """import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        print(urllib.request.urlopen(url, timeout=5).read().decode())
    except urllib.error.HTTPError as e:
        print(e.read().decode())
"""


def test_address_policy_refuses_private_ranges():
    for ip in ("127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
               "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "0.0.0.0", "224.0.0.1", "100.64.0.1"):
        assert not public_address(ip), ip
    assert public_address("93.184.216.34") and public_address("2606:2800:220:1::1")
    assert host_allowed("api.example.org", ["*.example.org"]) and not host_allowed("example.org.evil", ["example.org"])


def _http_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.recv(65536)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_default_network_is_none_even_for_loopback():
    with IsolatedSandbox(limits=LIM) as sb:
        r = sb.exec("python3 -c 'import socket; socket.socket()'")
        assert r.status == "nonzero_exit" and "Address family not supported" in r.stderr


def test_allowlist_refuses_host_addresses_and_unlisted_names():
    srv = _http_server()
    port = srv.getsockname()[1]
    net = NetworkPolicy(mode="allowlist", allow_hosts=("localhost", "127.0.0.1"))
    try:
        with IsolatedSandbox(limits=LIM, network=net) as sb:
            sb.write_file("get.py", GET)
            r = sb.exec(["python3", "get.py", f"http://localhost:{port}/", f"http://127.0.0.1:{port}/",
                         "http://not-listed.test/"])
            assert "hello" not in r.stdout
            assert r.stdout.count("non-public address") == 2 and "not in the allowlist" in r.stdout
            assert len(sb._proxy.refused) == 3 and sb._proxy.relayed == 0
    finally:
        srv.close()


def test_allowlist_relays_when_the_address_policy_allows(tmp_path):
    """The relay path end to end, with a test-only policy that admits this machine's loopback."""
    srv = _http_server()
    port = srv.getsockname()[1]
    proxy = EgressProxy(["localhost"], address_ok=lambda ip: ip == "127.0.0.1")
    try:
        with IsolatedSandbox(limits=LIM, network=NetworkPolicy("allowlist", ("localhost",)),
                             proxy=proxy) as sb:
            sb.write_file("get.py", GET)
            r = sb.exec(["python3", "get.py", f"http://localhost:{port}/"])
            assert r.stdout == "hello\n" and proxy.relayed == 1
    finally:
        proxy.close()
        srv.close()


def test_proxy_check_raises_typed_error():
    proxy = EgressProxy(["*.example.org"], resolve=lambda h, p, type: [(0, 0, 0, "", ("10.0.0.5", p))])
    try:
        with pytest.raises(SandboxError, match="non-public"):
            proxy.check("a.example.org", 443)
        with pytest.raises(SandboxError, match="allowlist"):
            proxy.check("example.com", 443)
    finally:
        proxy.close()
