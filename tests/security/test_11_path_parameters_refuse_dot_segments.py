"""Finding 11: path parameters were percent-encoded, which keeps ``.`` and ``..`` as they
are: ``/users/{id}/orders`` with ``id=".."`` became ``/users/../orders``, which the
upstream (or a proxy before it) resolves to ``/orders``.

Now a path-parameter value that is ``.``, ``..`` or empty is refused with 422
``invalid_arguments`` naming the parameter, in both auth modes, and nothing is sent.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import app_client
from tests.gateway import conftest as gateway_fixtures
from tests.gateway.conftest import GatewayFactory, http_tool
from tests.gateway.upstream import Upstream

embedder = gateway_fixtures.embedder
gateway_env = gateway_fixtures.gateway_env
make_gateway = gateway_fixtures.make_gateway
upstream = gateway_fixtures.upstream

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "status": {"type": "string"}},
}
MODES: dict[str, dict[str, Any]] = {
    "permissive": {},
    "strict": {"auth_mode": "strict", "egress_allowlist": ["127.0.0.1"]},
}


async def invoke(client: httpx.AsyncClient, arguments: dict[str, Any]) -> httpx.Response:
    return await client.post("/tools/user_orders/invoke", json={"arguments": arguments})


@pytest.mark.parametrize("mode", sorted(MODES))
async def test_dot_segments_and_empty_values_are_refused_before_any_call(
    mode: str, make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    manifest = http_tool("user_orders", upstream.url + "/users/{id}/orders", input_schema=SCHEMA)
    app = make_gateway(**MODES[mode])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(manifest)
        refused = {value: await invoke(client, {"id": value}) for value in ("..", ".", "")}
        missing = await invoke(client, {"status": "open"})
        assert upstream.received == []  # nothing reached the upstream
        fine = [await invoke(client, {"id": v}) for v in ("42", "...", "../x", ".hidden")]
    for value, answer in refused.items():
        assert answer.status_code == 422, value
        body = answer.json()
        assert body["success"] is False
        assert body["reason"] == body["error"]["reason"] == "invalid_arguments"
        (error,) = body["error"]["errors"]
        assert error["field"] == "id"
        assert f"{value!r} cannot fill the URL path segment {{id}}" in error["problem"]
        assert "user_orders" in body["error"]["message"]
        assert "id:" in body["error"]["message"]
    assert missing.status_code == 422
    assert missing.json()["error"]["reason"] == "invalid_arguments"
    assert missing.json()["error"]["errors"] == [
        {"field": "id", "problem": "a value is required: it fills the URL path segment {id}"}
    ]
    assert [a.status_code for a in fine] == [200, 200, 200, 200]
    assert [r.path for r in upstream.received] == [
        "/users/42/orders",
        "/users/.../orders",
        "/users/..%2Fx/orders",
        "/users/.hidden/orders",
    ]
