"""Egress guard: in strict mode, tools reach public addresses only.

A manifest is untrusted input. Pointing a tool at ``169.254.169.254`` would
hand the caller the host's cloud credentials; pointing it at ``127.0.0.1`` or
``10.0.0.5`` would turn the gateway into a proxy into its own network. So in
strict mode a tool may reach only global (public) unicast addresses, unless
``EGRESS_ALLOWLIST`` names the host, the address, or a CIDR containing it.

Refused: unspecified, loopback, private (RFC 1918), carrier-grade NAT,
link-local, unique-local, site-local, multicast, documentation, benchmarking
and other reserved ranges, and the cloud metadata addresses. An IPv6 address
that carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4,
Teredo) is judged by the IPv4 address it carries, so no spelling of a refused
address passes; numeric IPv4 spellings (``2852039166``,
``0xa9.0xfe.0xa9.0xfe``, ``169.254.43518``) are read as a resolver reads them.

Two checks:

- at registration, by text (:meth:`EgressPolicy.check_host`): literal
  addresses that are link-local or metadata in any spelling, and well-known
  metadata host names, which no deployment means without saying so;
- at call time (:meth:`EgressPolicy.check_resolved`), on every address the
  host resolves to: the whole policy. The caller then connects to one of the
  addresses checked, never to a second DNS answer (``executor/resolver.py``).

Permissive mode checks nothing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from reach_common.errors import ReachError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class EgressDenied(ReachError):
    status_code = 403
    reason = "egress_denied"

    def __init__(self, host: str, why: str) -> None:
        super().__init__(
            f"Calls to {host!r} are refused: {why}. Add it to EGRESS_ALLOWLIST if it is meant.",
            host=host,
        )


METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS IMDS over IPv6
    )
)
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

# Stated here rather than read from ``is_global``, whose answers differ between
# Python releases (3.11 calls 192.0.0.192 and 64:ff9b:1::/48 global).
_REFUSED_V4: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), why)
    for net, why in (
        ("0.0.0.0/8", "an unspecified ('this network') address"),
        ("10.0.0.0/8", "a private (RFC 1918) address"),
        ("100.64.0.0/10", "a carrier-grade NAT (RFC 6598) address"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", "a private (RFC 1918) address"),
        ("192.0.0.0/24", "a reserved (IETF protocol assignments) address"),
        ("192.0.2.0/24", "a documentation address"),
        ("192.88.99.0/24", "a reserved (6to4 relay anycast) address"),
        ("192.168.0.0/16", "a private (RFC 1918) address"),
        ("198.18.0.0/15", "a benchmarking address"),
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
    )
)
_REFUSED_V6: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), why)
    for net, why in (
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("64:ff9b:1::/48", "a local-use NAT64 (RFC 8215) address"),
        ("100::/64", "a reserved (discard-only) address"),
        ("2001:db8::/32", "a documentation address"),
        ("3fff::/20", "a documentation address"),
        ("fc00::/7", "a unique-local address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
    )
)
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


def literal_ip(host: str) -> IPAddress | None:
    """``host`` as an IP address if it is one, in any notation a resolver accepts."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:  # inet_aton reads 2852039166, 0xa9.0xfe.0xa9.0xfe and 169.254.43518
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    """The IPv4 address(es) an IPv6 address carries, and the name of the form, if any."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", [ip.ipv4_mapped]
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _NAT64:
        return "NAT64", [low32]
    if ip in _NAT64_LOCAL:
        # RFC 6052: within a /48 prefix the IPv4 address sits in bytes 6-7 and 9-10;
        # an operator may also use a /96 inside it (the last four bytes).
        packed = ip.packed
        return "local-use NAT64", [ipaddress.IPv4Address(packed[6:8] + packed[9:11]), low32]
    if ip.sixtofour is not None:
        return "6to4", [ip.sixtofour]
    if ip.teredo is not None:
        server, client = ip.teredo
        return "Teredo", [server, client]
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are themselves
        return "IPv4-compatible", [low32]
    return None


def _without_scope(ip: IPAddress) -> IPAddress:
    # fe80::1%eth0 compares unequal to fe80::1: judge the address, not the interface.
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        return ipaddress.IPv6Address(ip.packed)
    return ip


def refusal(ip: IPAddress) -> str | None:
    """Why strict mode refuses ``ip`` (``"it is a loopback address"``), or None if it is public."""
    ip = _without_scope(ip)
    if ip in METADATA_ADDRESSES:
        return "it is a cloud metadata address"
    if isinstance(ip, ipaddress.IPv4Address):
        for v4net, why in _REFUSED_V4:
            if ip in v4net:
                return f"it is {why}"
        return None if ip.is_global else "it is not a public address"
    embedded = embedded_ipv4(ip)
    if embedded is not None:
        form, carried = embedded
        reasons = [(v4, inner) for v4 in carried if (inner := refusal(v4)) is not None]
        # A metadata address first: it is the likeliest intent, whatever else matches.
        reasons.sort(key=lambda r: "metadata" not in r[1])
        if reasons and (ip not in _NAT64_LOCAL or "metadata" in reasons[0][1]):
            v4, inner = reasons[0]
            return f"it carries {v4} ({form}), and {inner}"
        if ip in _NAT64_LOCAL:
            return "it is a local-use NAT64 (RFC 8215) address"
        return None  # judged by the public IPv4 address it carries
    for v6net, why in _REFUSED_V6:
        if ip in v6net:
            return f"it is {why}"
    if ip.is_reserved:
        return "it is a reserved address"
    return None if ip.is_global else "it is not a public address"


def _never_meant(ip: IPAddress) -> str | None:
    """The registration-time subset: metadata and link-local, however spelled."""
    ip = _without_scope(ip)
    carried: list[IPAddress] = [ip]
    if isinstance(ip, ipaddress.IPv6Address) and (embedded := embedded_ipv4(ip)) is not None:
        carried.extend(embedded[1])
    for candidate in carried:
        suffix = "" if candidate == ip else f" (it carries {candidate})"
        if candidate in METADATA_ADDRESSES:
            return "it is a cloud metadata address" + suffix
        if candidate.is_link_local:
            return "it is a link-local address" + suffix
    return None


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


class EgressPolicy:
    """What strict mode lets tools reach; permissive mode checks nothing."""

    def __init__(self, *, enforce: bool, allowlist: Sequence[str]) -> None:
        self.enforce = enforce
        self._hosts = {_normal_host(a) for a in allowlist if a.strip()}
        self._networks: list[IPNetwork] = []
        for entry in self._hosts:
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue

    def _allowed(self, host: str, ip: IPAddress | None) -> bool:
        if _normal_host(host) in self._hosts:
            return True
        if ip is None:
            return False
        ip = _without_scope(ip)
        candidates: list[IPAddress] = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and (embedded := embedded_ipv4(ip)) is not None:
            candidates.extend(embedded[1])
        return any(c in net for c in candidates for net in self._networks)

    def check_host(self, host: str) -> None:
        """Registration: refuse a host that is, by its text alone, link-local or metadata."""
        if not self.enforce:
            return
        ip = literal_ip(host)
        if ip is not None:
            why = _never_meant(ip)
        elif _normal_host(host) in METADATA_HOSTS:
            why = "it is a cloud metadata host name"
        else:
            why = None
        if why and not self._allowed(host, ip):
            raise EgressDenied(host, why)

    def check_url(self, url: str) -> None:
        self.check_host(urlsplit(url).hostname or "")

    def check_resolved(self, host: str, addresses: Iterable[IPAddress]) -> None:
        """Call time: refuse ``host`` unless every address it resolved to may be reached."""
        if not self.enforce:
            return
        if _normal_host(host) in METADATA_HOSTS and not self._allowed(host, None):
            raise EgressDenied(host, "it is a cloud metadata host name")
        for ip in addresses:
            why = refusal(ip)
            if why and not self._allowed(host, ip):
                if literal_ip(host) == ip:  # the host is this address, in some spelling
                    raise EgressDenied(host, why)
                raise EgressDenied(host, f"it resolves to {ip}, and {why}")
