"""Finding 10: strict mode's egress guard let tools reach loopback, RFC 1918, ``0.0.0.0``
and the metadata address spelled as NAT64, IPv4-compatible or 6to4; it resolved a name
for the check and again for the connection (DNS rebinding); and it checked the OAuth2
token endpoint only as text at registration.

Now a strict-mode tool reaches only public addresses unless EGRESS_ALLOWLIST names the
host, the address or a CIDR; every IPv6 form that carries an IPv4 address is judged by
that address; the connection goes to the address that was checked; and the token
endpoint is resolved, checked and connected to the same way at call time.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any, cast

import httpx
import pytest
from opentelemetry import trace

from gateway.catalog.egress import EgressDenied, EgressPolicy, IPAddress
from gateway.catalog.spec import HttpTarget, ManifestDefaults
from gateway.executor.credentials import OutboundCredentials
from gateway.executor.http import CallStats, HttpExecutor
from gateway.executor.resolver import HostResolver
from gateway.executor.transport import LeanHttpClient
from gateway.registry.manifest import compile_manifest
from tests.conftest import app_client
from tests.gateway import conftest as gateway_fixtures
from tests.gateway.conftest import GatewayFactory, http_tool
from tests.gateway.upstream import Received, Reply, Upstream

# The gateway tests' fixtures: apps on the test backends and a loopback upstream.
embedder = gateway_fixtures.embedder
gateway_env = gateway_fixtures.gateway_env
make_gateway = gateway_fixtures.make_gateway
upstream = gateway_fixtures.upstream

PUBLIC = ipaddress.ip_address("93.184.216.34")
LOOPBACK = ipaddress.ip_address("127.0.0.1")


async def invoke(client: httpx.AsyncClient, tool_id: str) -> httpx.Response:
    return await client.post(f"/tools/{tool_id}/invoke", json={"arguments": {}})


def assert_refused(answer: httpx.Response, host: str, why: str) -> None:
    assert answer.status_code == 403
    body = answer.json()
    assert body["success"] is False
    assert body["reason"] == body["error"]["reason"] == "egress_denied"
    assert body["error"]["host"] == host
    assert body["error"]["message"].startswith(f"Calls to {host!r} are refused: ")
    assert why in body["error"]["message"]
    assert "EGRESS_ALLOWLIST" in body["error"]["message"]


async def test_strict_mode_refuses_loopback_in_every_spelling_and_sends_nothing(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    port = upstream.port
    targets = {
        "plain": (f"http://127.0.0.1:{port}/x", "127.0.0.1", "it is a loopback address"),
        "decimal": (f"http://2130706433:{port}/x", "2130706433", "it is a loopback address"),
        "mapped": (
            f"http://[::ffff:127.0.0.1]:{port}/x",
            "::ffff:127.0.0.1",
            "it carries 127.0.0.1 (IPv4-mapped), and it is a loopback address",
        ),
        "by_name": (
            f"http://localhost:{port}/x",
            "localhost",
            "it resolves to ",  # 127.0.0.1 (or ::1, where localhost has both)
        ),
        "unspecified": (f"http://0.0.0.0:{port}/x", "0.0.0.0", "it is an unspecified"),
    }
    app = make_gateway(auth_mode="strict")
    async with app_client(app) as client:
        for name, (url, _, _) in targets.items():
            await app.state.runtime.registry_service.register(http_tool(name, url))
        answers = {name: await invoke(client, name) for name in targets}
    for name, (_, host, why) in targets.items():
        assert_refused(answers[name], host, why)
    assert "loopback address" in answers["by_name"].json()["error"]["message"]
    assert upstream.received == []  # refused before any connection


async def test_the_allowlist_lets_a_named_private_service_through(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    app = make_gateway(auth_mode="strict", egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(http_tool("local", upstream.url + "/x"))
        answer = await invoke(client, "local")
    assert answer.status_code == 200
    assert answer.json()["success"] is True
    assert answer.json()["output"] == {"ok": True}
    assert [r.path for r in upstream.received] == ["/x"]


class _NoCredentials:
    """Tools without outbound auth: no secrets, no token endpoint."""

    def guard_token_endpoints(self, resolver: HostResolver, tracer: trace.Tracer) -> None:
        self.resolver = resolver

    async def headers(self, *args: Any) -> dict[str, str]:
        return {}

    async def forget_token(self, auth: Any) -> None:
        return None


async def test_a_dns_answer_that_changes_after_the_check_cannot_redirect_the_call(
    upstream: Upstream,
) -> None:
    """DNS rebinding: the name first resolves to a public address, then to 127.0.0.1.
    The call goes to the public address that was checked, and a later call that gets
    127.0.0.1 is refused before any connection."""
    answers = [[PUBLIC], [LOOPBACK]]
    asked: list[str] = []

    async def lookup(host: str) -> list[IPAddress]:
        asked.append(host)
        return list(answers[len(asked) - 1])

    dialled: list[tuple[str, int]] = []

    async def dial(host: str, port: int, **kw: Any) -> Any:
        # Records where the transport connects; the test's loopback server stands in
        # for the public one (no test traffic leaves this machine).
        dialled.append((host, port))
        return await asyncio.open_connection("127.0.0.1", upstream.port, limit=kw["limit"])

    resolver = HostResolver(EgressPolicy(enforce=True, allowlist=[]), ttl_s=0, lookup=lookup)
    executor = HttpExecutor(
        client=LeanHttpClient(open_connection=dial),
        credentials=cast(OutboundCredentials, _NoCredentials()),
        resolver=resolver,
        resolve_url=lambda url: url,
        tracer=trace.get_tracer(__name__),
    )
    spec = compile_manifest(
        http_tool("rebinding", f"http://rebind.example:{upstream.port}/data"), ManifestDefaults()
    )
    target = spec.endpoint
    assert isinstance(target, HttpTarget)
    deadline = asyncio.get_running_loop().time() + 30

    first = await executor.call(
        spec, target, {}, deadline=deadline, idempotency_key=None, stats=CallStats()
    )
    assert (first.status_code, first.output) == (200, {"ok": True})
    assert asked == ["rebind.example"]  # one lookup: the transport resolved nothing
    assert dialled == [(str(PUBLIC), upstream.port)]  # the checked address
    assert upstream.received[0].headers["host"] == f"rebind.example:{upstream.port}"

    with pytest.raises(EgressDenied) as caught:
        await executor.call(
            spec, target, {}, deadline=deadline, idempotency_key=None, stats=CallStats()
        )
    assert (caught.value.status_code, caught.value.reason) == (403, "egress_denied")
    assert "it resolves to 127.0.0.1, and it is a loopback address" in caught.value.message
    assert asked == ["rebind.example", "rebind.example"]
    assert dialled == [(str(PUBLIC), upstream.port)]  # nothing new dialled
    assert len(upstream.received) == 1


def _oauth_tool(url: str, token_endpoint: str) -> dict[str, Any]:
    manifest = http_tool("billing", url)
    manifest["endpoint"]["auth"] = {
        "type": "oauth2",
        "token_endpoint": token_endpoint,
        "client_id": "reach-gateway",
        "key": "BILLING_CLIENT_SECRET",
    }
    return manifest


async def test_a_loopback_token_endpoint_is_refused_at_call_time(
    make_gateway: GatewayFactory, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACH_SECRET_BILLING_CLIENT_SECRET", "client-secret-789")
    # The tool's own host is allowlisted; the token endpoint's (also loopback) is not.
    token_endpoint = f"http://127.0.0.2:{upstream.port}/oauth/token"
    app = make_gateway(
        auth_mode="strict",
        egress_allowlist=["127.0.0.1"],
        tool_secret_hosts={"BILLING_CLIENT_SECRET": ["127.0.0.2"]},
    )
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(
            _oauth_tool(upstream.url + "/bill", token_endpoint)
        )
        answer = await invoke(client, "billing")
    assert_refused(answer, "127.0.0.2", "it is a loopback address")
    assert upstream.received == []  # neither the token request nor the call was sent


async def test_the_token_request_goes_to_the_checked_address_with_its_host_name(
    make_gateway: GatewayFactory, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACH_SECRET_BILLING_CLIENT_SECRET", "client-secret-789")

    def answer(request: Received) -> Reply:
        if request.path == "/oauth/token":
            return Reply(200, {"access_token": "tok-abc", "expires_in": 600})
        return Reply(200, {"billed": True})

    upstream.default = answer
    app = make_gateway(
        auth_mode="strict",
        egress_allowlist=["127.0.0.1", "localhost"],
        tool_secret_hosts={"BILLING_CLIENT_SECRET": ["localhost"]},
    )
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(
            _oauth_tool(upstream.url + "/bill", f"http://localhost:{upstream.port}/oauth/token")
        )
        called = await invoke(client, "billing")
    assert called.status_code == 200
    assert called.json()["success"] is True
    assert called.json()["output"] == {"billed": True}
    token, bill = upstream.received
    assert (token.path, bill.path) == ("/oauth/token", "/bill")
    # Sent to an address the resolver checked, still addressed to the endpoint's name.
    assert token.headers["host"] == f"localhost:{upstream.port}"
    assert token.headers["connection"] == "close"
    assert bill.headers["authorization"] == "Bearer tok-abc"


async def test_an_https_token_request_keeps_the_name_for_tls() -> None:
    """The pinned request for an https endpoint: the URL carries the checked address,
    ``Host`` and the TLS server name (SNI, certificate check) the endpoint's name."""
    async with httpx.AsyncClient() as http:
        holder = cast(OutboundCredentials, type("Holder", (), {"_http": http})())
        build = OutboundCredentials._token_request
        v4 = build(holder, "https://idp.example:8443/oauth/token?x=1", PUBLIC, {"a": "b"}, 5.0)
        v6 = build(
            holder, "https://idp.example/token", ipaddress.ip_address("2606:2800::1"), {}, 5.0
        )
    assert str(v4.url) == "https://93.184.216.34:8443/oauth/token?x=1"
    assert v4.headers["host"] == "idp.example:8443"
    assert v4.extensions["sni_hostname"] == "idp.example"
    assert str(v6.url) == "https://[2606:2800::1]/token"
    assert v6.headers["host"] == "idp.example"
    assert v6.extensions["sni_hostname"] == "idp.example"
