"""Which addresses the egress proxy may connect to: globally routable unicast only.

What it is: :func:`public_address`, the check ``netproxy.EgressProxy`` applies to every
address a host name resolves to before it connects.

Why not ``ipaddress``'s ``is_global`` alone: the interpreter's tables lag the IANA
special-purpose registries and differ between patch releases (3.11.7 calls ``192.0.0.8``,
``2002:7f00::1`` (6to4 of 127.0.0.0), ``64:ff9b::7f00:1`` (NAT64 of 127.0.0.1),
``fec0::1`` and ``5f00::1`` global). So the check is ``is_global`` AND not in an explicit
table of every special-purpose block (:data:`SPECIAL_V4`, :data:`SPECIAL_V6`, from the IANA
registries; blocks marked "globally reachable" there — AS112, AMT, PCP anycast — are refused
too: nothing an allowlist names lives there) AND, for IPv6, inside global unicast
``2000::/3``. An IPv4 address embedded in IPv6 is judged as IPv4: IPv4-mapped
(``::ffff:a.b.c.d``) and NAT64 (``64:ff9b::a.b.c.d``) are allowed only when the embedded
address is public; 6to4 (``2002::/16``), Teredo (``2001::/32``) and IPv4-compatible
(``::a.b.c.d``) are refused outright, whatever they embed (they reach IPv4 only through a
relay, and a relay's view of "private" is not ours).

Guarantees: :func:`public_address` is False for every address in the tables, every
non-unicast or unassigned IPv6 address and every embedding above of a non-public IPv4
address; it never raises for a syntactically valid address (a zone id ``%eth0`` is ignored),
and raises ``ValueError`` for anything else.

Does not: know about the host's own routes (an address routed to a local interface by the
host's configuration but public in the registry is allowed).
"""

from __future__ import annotations

import ipaddress

SPECIAL_V4 = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24",
    "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))
SPECIAL_V6 = tuple(ipaddress.ip_network(n) for n in (
    "::/8", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16",
    "2620:4f:8000::/48", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10",
    "ff00::/8"))
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def public_address(ip: str) -> bool:
    """True only for a globally routable unicast address (see the module docstring)."""
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv4Address):
        return _public_v4(addr)
    if addr in _MAPPED or addr in _NAT64:
        return _public_v4(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    if addr not in _GLOBAL_UNICAST or any(addr in net for net in SPECIAL_V6):
        return False
    return addr.is_global and not (addr.is_multicast or addr.is_private or addr.is_reserved)


def _public_v4(addr: ipaddress.IPv4Address) -> bool:
    if any(addr in net for net in SPECIAL_V4):
        return False
    return addr.is_global and not (addr.is_multicast or addr.is_private or addr.is_reserved
                                   or addr.is_loopback or addr.is_link_local)
