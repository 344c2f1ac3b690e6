"""Egress guard: in strict mode, tools may not reach link-local or cloud-metadata addresses.

A manifest is untrusted input. Pointing a tool at ``169.254.169.254`` would
hand the caller the host's cloud credentials, so strict mode refuses such
manifests at registration (literal addresses and well-known metadata names)
and refuses again at call time after DNS resolution (names that resolve
there, and numeric tricks such as ``2852039166``). ``EGRESS_ALLOWLIST`` names
the exceptions an operator means.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from gateway.auth.errors import EgressDenied

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

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


def _forbidden_reason(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return "it is a cloud metadata address"
    if ip.is_link_local:
        return "it is a link-local address"
    return None


class EgressPolicy:
    """What strict mode lets tools reach; permissive mode checks nothing."""

    def __init__(self, *, enforce: bool, allowlist: Sequence[str]) -> None:
        self.enforce = enforce
        self._hosts = {a.strip().lower() for a in allowlist if a.strip()}
        self._networks = []
        for entry in self._hosts:
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue

    def _allowed(self, host: str, ip: IPAddress | None) -> bool:
        if host.lower() in self._hosts:
            return True
        return ip is not None and any(ip in net for net in self._networks)

    def check_host(self, host: str) -> None:
        """Refuse a host that is, by its text alone, link-local or metadata."""
        if not self.enforce:
            return
        ip = literal_ip(host)
        if ip is not None:
            why = _forbidden_reason(ip)
        elif host.lower().rstrip(".") in METADATA_HOSTS:
            why = "it is a cloud metadata host name"
        else:
            why = None
        if why and not self._allowed(host, ip):
            raise EgressDenied(host, why)

    def check_url(self, url: str) -> None:
        self.check_host(urlsplit(url).hostname or "")

    def check_resolved(self, host: str, addresses: Iterable[IPAddress]) -> None:
        """Refuse a host whose resolved addresses include a forbidden one (dial-time check)."""
        if not self.enforce:
            return
        for ip in addresses:
            why = _forbidden_reason(ip)
            if why and not self._allowed(host, ip):
                raise EgressDenied(host, f"it resolves to {ip}, and {why}")
