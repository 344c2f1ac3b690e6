"""Finding 14: anonymous callers were keyed by the socket address (one bucket for everyone
behind a proxy), and permissive mode keyed by the claimed user id (a fresh claim, a fresh
bucket)."""

from __future__ import annotations

import httpx
from asgi_lifespan import LifespanManager

from reach_common.auth.keys import create_key
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool


def _client(app: object, client_host: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(client_host, 40000))  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://localhost")


async def test_claimed_identities_share_their_address_bucket(make_gateway: GatewayFactory) -> None:
    tool = python_tool("scarce", "add", input_schema={"type": "object"})
    app = make_gateway(caller_rate_limit="2/minute")
    async with LifespanManager(app) as manager, _client(manager.app, "203.0.113.7") as client:
        await client.post("/tools/register", json=tool, headers=ADMIN)
        claims = [
            await client.post(
                "/tools/scarce/invoke",
                json={"arguments": {"a": 1, "b": 1}, "user_context": {"user_id": f"fake{n}"}},
            )
            for n in range(3)
        ]
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            key = (await create_key(session, "real-user", [])).key
        verified = await client.post(
            "/tools/scarce/invoke", json={"arguments": {"a": 1, "b": 1}}, headers={"X-API-Key": key}
        )
    assert [c.status_code for c in claims] == [200, 200, 429]
    assert claims[2].json()["error"]["reason"] == "rate_limited"
    assert "per-caller" in claims[2].json()["error"]["message"]
    assert verified.status_code == 200  # a verified caller has a bucket of its own


async def test_behind_a_trusted_proxy_each_client_has_its_own_bucket(
    make_gateway: GatewayFactory,
) -> None:
    tool = python_tool("scarce", "add", input_schema={"type": "object"})
    app = make_gateway(caller_rate_limit="1/minute", trusted_proxies=["10.0.0.0/8"])
    call = {"arguments": {"a": 1, "b": 1}}
    async with LifespanManager(app) as manager:
        async with _client(manager.app, "10.1.1.1") as proxy:
            await proxy.post("/tools/register", json=tool, headers=ADMIN)
            first = await proxy.post(
                "/tools/scarce/invoke", json=call, headers={"X-Forwarded-For": "198.51.100.1"}
            )
            second = await proxy.post(
                "/tools/scarce/invoke", json=call, headers={"X-Forwarded-For": "198.51.100.2"}
            )
            again = await proxy.post(
                "/tools/scarce/invoke", json=call, headers={"X-Forwarded-For": "198.51.100.1"}
            )
        # A client that is not a trusted proxy cannot pick its bucket with the header.
        async with _client(manager.app, "192.0.2.50") as direct:
            spoof_a = await direct.post(
                "/tools/scarce/invoke", json=call, headers={"X-Forwarded-For": "198.51.100.3"}
            )
            spoof_b = await direct.post(
                "/tools/scarce/invoke", json=call, headers={"X-Forwarded-For": "198.51.100.4"}
            )
    assert (first.status_code, second.status_code, again.status_code) == (200, 200, 429)
    assert (spoof_a.status_code, spoof_b.status_code) == (200, 429)
    assert spoof_b.json()["error"]["reason"] == "rate_limited"
