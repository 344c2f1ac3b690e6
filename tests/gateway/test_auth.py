"""Auth: the one decision function, API keys, JWTs, strict vs permissive, egress checks."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gateway.auth.service import can_use, visible_tools
from gateway.catalog.egress import EgressDenied
from gateway.catalog.spec import ManifestDefaults
from gateway.registry.cache import RegisteredTool
from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest import compile_manifest
from reach_common.auth.caller import Caller
from reach_common.auth.keys import create_key
from tests.conftest import REPO_ROOT, Backends, app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, original, python_tool, shipped

DEFAULTS = ManifestDefaults()
JWT_SECRET = "test-signing-secret-of-enough-length-32b"


def spec(permission: str, scope: list[str]) -> Any:
    manifest = http_tool(f"t_{permission}_{len(scope)}", "http://127.0.0.1:1/x")
    manifest.update(permission=permission, scope=scope)
    return compile_manifest(manifest, DEFAULTS)


def test_decision_matrix() -> None:
    anonymous = Caller(user_id=None, roles=frozenset({"ops_admin"}))
    user = Caller(user_id="u1", via="api_key")
    admin = Caller(user_id="u2", roles=frozenset({"ops_admin"}), via="jwt")
    public, needs_user, needs_role = (
        spec("public", []),
        spec("user", []),
        spec("admin", ["ops_admin"]),
    )

    assert can_use(anonymous, public).allowed
    denied = can_use(anonymous, needs_user)
    assert (denied.allowed, denied.reason) == (False, "unauthenticated")
    # Roles without an identity count for nothing.
    assert can_use(anonymous, needs_role).reason == "unauthenticated"
    assert can_use(user, needs_user).allowed
    refused = can_use(user, needs_role)
    assert (refused.allowed, refused.reason) == (False, "insufficient_permission")
    assert refused.required_roles == ("ops_admin",)
    assert "ops_admin" in refused.message
    granted = can_use(admin, needs_role)
    assert (granted.allowed, granted.rule) == (True, "admin:role:ops_admin")


def test_listing_and_deciding_never_disagree() -> None:
    """Every caller × every tool: visible_tools shows exactly what can_use allows."""
    roles = ["ops_admin", "order_manager", "kb_admin", "admin"]
    tools = [
        RegisteredTool(spec(p, list(s)), 1, 1, "api", None, None, None)  # type: ignore[arg-type]
        for p, s in [("public", ()), ("user", ()), *(("admin", (r,)) for r in roles)]
    ] + [
        RegisteredTool(compile_manifest(shipped(t), DEFAULTS), 1, 1, "file", None, None, None)  # type: ignore[arg-type]
        for t in ("inventory_query", "order_query", "order_create", "rag_delete_source")
    ]
    callers = [Caller(user_id=None)] + [
        Caller(user_id=uid, roles=frozenset(combo), via="api_key")
        for uid in ("u1",)
        for n in range(len(roles) + 1)
        for combo in itertools.combinations(roles, n)
    ]
    for caller in callers:
        shown = {t.tool_id for t in visible_tools(caller, tools)}
        allowed = {t.tool_id for t in tools if can_use(caller, t.spec).allowed}
        assert shown == allowed


def _gateway_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        check=False,
    )


def test_cli_key_alone_on_stdout_with_embedded_servers(tmp_path: Path) -> None:
    # KEY=$(python -m gateway keys create ...) must capture the key and nothing else,
    # also when the command starts the embedded servers (their lines go to stderr).
    env = {"REACH_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": "", "REDIS_URL": ""}
    created = _gateway_cli("keys", "create", "--user", "boot", "--roles", "admin", env=env)
    assert created.returncode == 0, created.stderr
    assert created.stdout.count("\n") == 1
    assert created.stdout.startswith("rk_")
    assert "embedded_postgres" in created.stderr


async def test_cli_key_works_in_strict_mode_and_is_stored_hashed(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    env = {"DATABASE_URL": clean_state.database_url, "REDIS_URL": clean_state.redis_url}
    created = _gateway_cli("keys", "create", "--user", "u1", "--roles", "ops_admin", env=env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key.startswith("rk_")
    assert "u1" in created.stderr
    app = make_gateway(auth_mode="strict")
    async with app_client(app) as client:
        await client.post("/tools/register", json=shipped("inventory_query"))  # refused: no admin
        store = app.state.runtime.registry_service
        for tool_id in ("inventory_query", "order_query"):
            await store.register(shipped(tool_id))
        with_key = await client.get("/tools/list", headers={"Authorization": f"Bearer {key}"})
        with_header = await client.get("/tools/list", headers={"X-API-Key": key})
        anonymous = await client.get("/tools/list")
        wrong_key = await client.get("/tools/list", headers={"X-API-Key": key + "x"})
        bad_scheme = await client.get("/tools/list", headers={"Authorization": f"Basic {key}"})
    assert with_key.status_code == 200
    assert [t["tool_id"] for t in with_key.json()["tools"]] == ["inventory_query", "order_query"]
    assert with_header.json() == with_key.json()
    assert [t["tool_id"] for t in anonymous.json()["tools"]] == ["inventory_query"]
    assert wrong_key.status_code == 401
    assert wrong_key.json()["reason"] == "invalid_credential"
    assert bad_scheme.status_code == 401
    import psycopg

    from reach_common.db import libpq_url

    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        stored = conn.execute("SELECT key_hash, user_id, roles FROM auth.api_key").fetchall()
    assert len(stored) == 1
    assert stored[0][1:] == ("u1", ["ops_admin"])
    assert key not in str(stored)
    # The secret is what follows "rk_<id>_" (it may itself contain "_"; a tail after its
    # last "_" can be one letter, which any stored text may contain).
    assert key.split("_", 2)[2] not in str(stored)

    revoked = _gateway_cli("keys", "revoke", key.split("_")[1], env=env)
    assert revoked.returncode == 0
    async with app_client(make_gateway(auth_mode="strict")) as client:
        after = await client.get("/tools/list", headers={"X-API-Key": key})
    assert after.status_code == 401
    assert after.json()["reason"] == "invalid_credential"


async def test_strict_mode_ignores_roles_claimed_in_the_body(
    make_gateway: GatewayFactory,
) -> None:
    """Security: a caller claiming roles ["admin"] in user_context gets nothing extra."""
    app = make_gateway(
        auth_mode="strict", jwt_secret=JWT_SECRET, jwt_issuer="https://idp", jwt_audience="reach"
    )
    admin_only = python_tool(
        "admin_echo", "echo", permission="admin", scope=["admin"], input_schema={"type": "object"}
    )
    token = jwt.encode(
        {
            "sub": "u1",
            "roles": [],
            "iss": "https://idp",
            "aud": "reach",
            "exp": int(time.time()) + 60,
        },
        JWT_SECRET,
        algorithm="HS256",
    )
    claim = {"user_id": "root", "roles": ["admin"]}
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(admin_only)
        await app.state.runtime.registry_service.register(shipped("inventory_query"))
        headers = {"Authorization": f"Bearer {token}"}
        as_user = await client.post(
            "/tools/admin_echo/invoke",
            json={"arguments": {}, "user_context": claim},
            headers=headers,
        )
        as_nobody = await client.post(
            "/tools/admin_echo/invoke", json={"arguments": {}, "user_context": claim}
        )
        listed = await client.get(
            "/tools/list", headers={**headers, "X-User-Id": "root", "X-User-Roles": "admin"}
        )
        hidden = await client.get("/tools/admin_echo", headers=headers)
        register = await client.post(
            "/tools/register", json=shipped("order_query"), headers=headers
        )
    # A tool the caller may not use answers as if it did not exist (no role names leak).
    assert as_user.status_code == 404
    body = as_user.json()
    assert body["success"] is False
    assert body["error"]["reason"] == "tool_not_found"
    assert "required_roles" not in body["error"]
    assert as_nobody.status_code == 404
    assert as_nobody.json()["reason"] == "tool_not_found"
    assert [t["tool_id"] for t in listed.json()["tools"]] == ["inventory_query"]
    assert hidden.status_code == 404
    assert register.status_code == 403
    assert register.json()["reason"] == "insufficient_permission"


async def test_permissive_mode_trusts_user_context(make_gateway: GatewayFactory) -> None:
    admin_only = python_tool("admin_echo", "echo", permission="admin", scope=["ops_admin"])
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=admin_only, headers=ADMIN)
        allowed = await client.post(
            "/tools/admin_echo/invoke",
            json={"arguments": {"x": 1}, "user_context": {"user_id": "u1", "roles": ["ops_admin"]}},
        )
        refused = await client.post(
            "/tools/admin_echo/invoke",
            json={"arguments": {}, "user_context": {"user_id": "u1", "roles": ["viewer"]}},
        )
    assert allowed.status_code == 200
    assert allowed.json()["output"] == {"echo": {"x": 1}}
    assert refused.status_code == 404
    assert refused.json()["error"]["reason"] == "tool_not_found"


def _rsa_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


async def test_jwt_rs256_issuer_audience_and_expiry(make_gateway: GatewayFactory) -> None:
    private, public = _rsa_pair()
    other_private, _ = _rsa_pair()
    app = make_gateway(
        auth_mode="strict",
        jwt_public_key=public,
        jwt_issuer="https://idp.example",
        jwt_audience="reach",
    )
    now = int(time.time())
    good = {"sub": "u7", "roles": "ops_admin finance", "iss": "https://idp.example", "aud": "reach"}

    def token(claims: dict[str, Any], key: str = private, alg: str = "RS256") -> str:
        return jwt.encode({"exp": now + 60, **claims}, key, algorithm=alg)

    cases = {
        "good": token(good),
        "wrong_issuer": token({**good, "iss": "https://evil.example"}),
        "wrong_audience": token({**good, "aud": "someone-else"}),
        "expired": token({**good, "exp": now - 10}),
        "forged": token(good, other_private),
        "hs256_not_configured": token(good, JWT_SECRET, "HS256"),
        "unsigned": jwt.encode({**good, "exp": now + 60}, None, algorithm="none"),  # type: ignore[arg-type]
    }
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(shipped("report_monthly"))
        answers = {
            name: await client.get("/tools/list", headers={"Authorization": f"Bearer {t}"})
            for name, t in cases.items()
        }
    assert answers["good"].status_code == 200
    assert [t["tool_id"] for t in answers["good"].json()["tools"]] == ["report_monthly"]
    for name in cases.keys() - {"good"}:
        assert answers[name].status_code == 401, name
        assert answers[name].json()["reason"] == "invalid_credential", name
    assert "issuer" in answers["wrong_issuer"].json()["message"]
    assert "audience" in answers["wrong_audience"].json()["message"]
    assert "expired" in answers["expired"].json()["message"]


async def test_strict_mode_refuses_manifests_without_permission(
    make_gateway: GatewayFactory,
) -> None:
    app = make_gateway(auth_mode="strict")
    async with app_client(app):
        service = app.state.runtime.registry_service
        with pytest.raises(InvalidManifest) as caught:
            await service.register(original("inventory_query"))
    assert caught.value.reason == "permission_required"
    assert caught.value.status_code == 422


EGRESS_TARGETS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://[fe80::1]/x",
    "http://2852039166/latest",
    "http://[::ffff:169.254.169.254]/x",
]


async def test_strict_mode_refuses_link_local_and_metadata_targets(
    make_gateway: GatewayFactory,
) -> None:
    """Security: a manifest pointing at a metadata/link-local address is refused in strict
    mode, accepted once EGRESS_ALLOWLIST names it, and accepted in permissive mode."""
    hosts = [url.split("//")[1].split("/")[0].strip("[]") for url in EGRESS_TARGETS]
    strict = make_gateway(auth_mode="strict")
    allowlisted = make_gateway(auth_mode="strict", egress_allowlist=hosts)
    permissive = make_gateway()
    async with app_client(strict), app_client(allowlisted), app_client(permissive):
        for n, url in enumerate(EGRESS_TARGETS):
            manifest = http_tool(f"metadata_reader_{n}", url)
            with pytest.raises(EgressDenied) as caught:
                await strict.state.runtime.registry_service.register(manifest)
            assert caught.value.reason == "egress_denied", url
            assert caught.value.status_code == 403
            assert (
                await allowlisted.state.runtime.registry_service.register(manifest)
            ).version == 1
            compile_permissive = permissive.state.runtime.registry_service.compile
            assert compile_permissive(manifest).tool_id == manifest["tool_id"]
        # Not allowlisted: an ordinary private service address stays reachable.
        fine = http_tool("private_service", "http://10.1.2.3:8080/x")
        assert strict.state.runtime.registry_service.compile(fine).tool_id == "private_service"


async def test_strict_registry_http_refusal_carries_reason(make_gateway: GatewayFactory) -> None:
    app = make_gateway(auth_mode="strict")
    async with app_client(app) as client:
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            admin_key = await create_key(session, "ops", ["tool_admin"])
        headers = {"X-API-Key": admin_key.key}
        metadata = await client.post(
            "/tools/register",
            json=http_tool("meta", "http://169.254.169.254/latest"),
            headers=headers,
        )
        no_permission = await client.post(
            "/tools/register", json=original("inventory_query"), headers=headers
        )
        fine = await client.post(
            "/tools/register", json=shipped("inventory_query"), headers=headers
        )
        anonymous = await client.post("/tools/register", json=shipped("sales_query"))
    assert metadata.status_code == 403
    assert metadata.json()["reason"] == "egress_denied"
    assert "EGRESS_ALLOWLIST" in metadata.json()["message"]
    assert no_permission.status_code == 422
    assert no_permission.json()["reason"] == "permission_required"
    assert fine.status_code == 201
    assert anonymous.status_code == 401
    assert anonymous.json()["reason"] == "unauthenticated"
