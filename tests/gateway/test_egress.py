"""The egress policy and the resolver: every spelling of a non-public address, the
allowlist, permissive mode, and the checked addresses the resolver hands on."""

from __future__ import annotations

import ipaddress

import pytest
from opentelemetry import trace

from gateway.catalog.egress import EgressDenied, EgressPolicy, IPAddress, literal_ip
from gateway.executor.resolver import HostResolver

TRACER = trace.get_tracer(__name__)

# (host as a URL would carry it, what the refusal must say)
REFUSED = [
    ("127.0.0.1", "it is a loopback address"),
    ("127.8.9.10", "it is a loopback address"),
    ("::1", "it is a loopback address"),
    ("10.0.0.5", "it is a private (RFC 1918) address"),
    ("172.16.3.4", "it is a private (RFC 1918) address"),
    ("192.168.1.1", "it is a private (RFC 1918) address"),
    ("0.0.0.0", "it is an unspecified ('this network') address"),
    ("::", "it is an unspecified address"),
    ("169.254.1.1", "it is a link-local address"),
    ("fe80::1", "it is a link-local address"),
    ("100.64.0.1", "it is a carrier-grade NAT (RFC 6598) address"),
    ("fc00::1", "it is a unique-local address"),
    ("fd12:3456::1", "it is a unique-local address"),
    ("224.0.0.251", "it is a multicast address"),
    ("ff02::1", "it is a multicast address"),
    ("240.0.0.1", "it is a reserved address"),
    ("255.255.255.255", "it is a reserved address"),
    ("192.0.2.10", "it is a documentation address"),
    ("2001:db8::1", "it is a documentation address"),
    # cloud metadata, as written and in every encoding a resolver or stack accepts
    ("169.254.169.254", "it is a cloud metadata address"),
    ("100.100.100.200", "it is a cloud metadata address"),
    ("192.0.0.192", "it is a cloud metadata address"),
    ("fd00:ec2::254", "it is a cloud metadata address"),
    ("2852039166", "it is a cloud metadata address"),
    ("0xa9.0xfe.0xa9.0xfe", "it is a cloud metadata address"),
    ("169.254.43518", "it is a cloud metadata address"),
    ("2130706433", "it is a loopback address"),
    ("0x7f.1", "it is a loopback address"),
    ("::ffff:169.254.169.254", "carries 169.254.169.254 (IPv4-mapped)"),
    ("::ffff:127.0.0.1", "carries 127.0.0.1 (IPv4-mapped), and it is a loopback address"),
    ("::a9fe:a9fe", "carries 169.254.169.254 (IPv4-compatible)"),
    ("::7f00:1", "carries 127.0.0.1 (IPv4-compatible)"),
    ("64:ff9b::a9fe:a9fe", "carries 169.254.169.254 (NAT64)"),
    ("64:ff9b::a00:5", "carries 10.0.0.5 (NAT64), and it is a private (RFC 1918) address"),
    ("64:ff9b:1::a9fe:a9fe", "carries 169.254.169.254 (local-use NAT64)"),
    ("64:ff9b:1::808:808", "it is a local-use NAT64 (RFC 8215) address"),
    ("2002:a9fe:a9fe::1", "carries 169.254.169.254 (6to4)"),
    ("2002:7f00:1::", "carries 127.0.0.1 (6to4)"),
    ("2001:0:a9fe:a9fe::1", "carries 169.254.169.254 (Teredo)"),  # the server half
    # the client half is stored bit-inverted: 5601:5601 is 169.254.169.254
    ("2001:0:4136:e378:8000:63bf:5601:5601", "carries 169.254.169.254 (Teredo)"),
]
PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:0:808:808::f7f7:f7f7",  # Teredo: server 8.8.8.8, client (inverted) 8.8.8.8
]


def address(host: str) -> IPAddress:
    ip = literal_ip(host)
    assert ip is not None, host
    return ip


def strict(*allowed: str) -> EgressPolicy:
    return EgressPolicy(enforce=True, allowlist=list(allowed))


@pytest.mark.parametrize(("host", "why"), REFUSED)
def test_strict_mode_refuses_every_spelling_of_a_non_public_address(host: str, why: str) -> None:
    with pytest.raises(EgressDenied) as caught:
        strict().check_resolved(host, [address(host)])
    assert (caught.value.status_code, caught.value.reason) == (403, "egress_denied")
    assert why in caught.value.message
    assert "EGRESS_ALLOWLIST" in caught.value.message
    assert caught.value.details == {"host": host}


@pytest.mark.parametrize(("host", "why"), REFUSED)
def test_the_allowlist_names_the_host_the_address_or_a_cidr(host: str, why: str) -> None:
    ip = address(host)
    single = f"{ip}/{ip.max_prefixlen}"
    for allowlist in ([host], [str(ip)], [single], ["zzz.example", f"{host.upper()}"]):
        strict(*allowlist).check_resolved(host, [ip])  # no EgressDenied
    with pytest.raises(EgressDenied):
        strict("other.example", "203.0.113.0/24").check_resolved(host, [ip])


@pytest.mark.parametrize(("host", "why"), REFUSED)
def test_permissive_mode_checks_nothing(host: str, why: str) -> None:
    permissive = EgressPolicy(enforce=False, allowlist=[])
    permissive.check_resolved(host, [address(host)])
    permissive.check_host(host)


@pytest.mark.parametrize("host", PUBLIC)
def test_public_addresses_pass_in_strict_mode(host: str) -> None:
    strict().check_resolved(host, [address(host)])


def test_an_embedded_address_matches_an_allowlisted_cidr() -> None:
    policy = strict("10.0.0.0/8")
    for host in ("10.1.2.3", "::ffff:10.1.2.3", "64:ff9b::a01:203", "2002:a01:203::1"):
        policy.check_resolved(host, [address(host)])
    with pytest.raises(EgressDenied):
        policy.check_resolved("11.0.0.1", [address("127.0.0.1")])


def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    public, private = ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("172.18.0.5")
    strict().check_resolved("api.example.com", [public])
    with pytest.raises(EgressDenied) as caught:
        strict().check_resolved("api.example.com", [public, private])
    assert caught.value.message == (
        "Calls to 'api.example.com' are refused: it resolves to 172.18.0.5, and it is a "
        "private (RFC 1918) address. Add it to EGRESS_ALLOWLIST if it is meant."
    )
    # Allowlisting the name (compose and k8s: "shop") lets any of its addresses through.
    strict("shop").check_resolved("shop", [private])
    strict("SHOP.").check_resolved("shop", [private])
    with pytest.raises(EgressDenied) as metadata:
        strict().check_resolved("metadata.google.internal", [public])
    assert "it is a cloud metadata host name" in metadata.value.message


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest",
        "http://2852039166/latest",
        "http://[::ffff:169.254.169.254]/x",
        "http://[64:ff9b::a9fe:a9fe]/x",
        "http://[::a9fe:a9fe]/x",
        "http://[2002:a9fe:a9fe::]/x",
        "http://[2001:0:4136:e378:8000:63bf:5601:5601]/x",
        "http://[fe80::1]/x",
        "http://metadata.google.internal/computeMetadata/v1/",
    ],
)
def test_registration_refuses_metadata_and_link_local_by_text(url: str) -> None:
    with pytest.raises(EgressDenied) as caught:
        strict().check_url(url)
    assert (caught.value.status_code, caught.value.reason) == (403, "egress_denied")
    EgressPolicy(enforce=False, allowlist=[]).check_url(url)


def test_registration_leaves_loopback_and_private_literals_to_the_call() -> None:
    """Which private services a deployment means is its EGRESS_ALLOWLIST's business; the
    call-time check refuses them (see the executor tests), registration does not."""
    for url in ("http://127.0.0.1:9000/x", "http://10.1.2.3/x", "http://shop:9000/x"):
        strict().check_url(url)


async def test_the_resolver_returns_the_addresses_it_checked_and_caches_them() -> None:
    asked: list[str] = []

    async def lookup(host: str) -> list[IPAddress]:
        asked.append(host)
        return [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("2606:2800::1")]

    resolver = HostResolver(strict(), ttl_s=60, lookup=lookup)
    first = await resolver.resolve("api.example.com", TRACER)
    second = await resolver.resolve("api.example.com", TRACER)
    assert (
        first
        == second
        == [
            ipaddress.ip_address("93.184.216.34"),
            ipaddress.ip_address("2606:2800::1"),
        ]
    )
    assert asked == ["api.example.com"]  # cached within the TTL


async def test_the_resolver_checks_every_answer_and_literal_addresses() -> None:
    answers = {"inside.example": ["93.184.216.34", "127.0.0.1"]}

    async def lookup(host: str) -> list[IPAddress]:
        return [ipaddress.ip_address(a) for a in answers[host]]

    resolver = HostResolver(strict(), ttl_s=60, lookup=lookup)
    with pytest.raises(EgressDenied) as named:
        await resolver.resolve("inside.example", TRACER)
    assert "it resolves to 127.0.0.1, and it is a loopback address" in named.value.message
    with pytest.raises(EgressDenied) as literal:
        await resolver.resolve("0x7f.1", TRACER)
    assert literal.value.message.startswith("Calls to '0x7f.1' are refused: it is a loopback")
    allowed = HostResolver(strict("127.0.0.1"), lookup=lookup)
    assert await allowed.resolve("0x7f.1", TRACER) == [ipaddress.ip_address("127.0.0.1")]
    with pytest.raises(EgressDenied):
        await allowed.resolve("::1", TRACER)  # allowlisting 127.0.0.1 is not ::1
