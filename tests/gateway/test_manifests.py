"""The manifest contract: the pydantic model, manifests/schema.json generated from it, the
shipped manifests and their compilation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from gateway.__main__ import cli
from gateway.catalog.spec import HttpTarget, ManifestDefaults, QueueTarget
from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest import compile_manifest, manifest_schema
from tests.gateway.conftest import MANIFESTS, SAMPLE_TOOLS, http_tool, original, shipped

SHIPPED = [
    "inventory_query",
    "order_query",
    "sales_query",
    "order_create",
    "report_monthly",
    "rag_retrieve",
    "rag_ingest",
    "rag_status",
    "rag_list_sources",
    "rag_delete_source",
]
DEFAULTS = ManifestDefaults(python_packages=(SAMPLE_TOOLS,))


def every_manifest_file() -> list[Path]:
    return sorted(p for p in MANIFESTS.rglob("*.json") if p.name != "schema.json")


def test_schema_file_is_generated_from_the_model_and_valid() -> None:
    printed = CliRunner().invoke(cli, ["manifest-schema"])
    assert printed.exit_code == 0, printed.output
    assert (MANIFESTS / "schema.json").read_text("utf-8") == printed.stdout, (
        "run: .venv/bin/python -m gateway manifest-schema > manifests/schema.json"
    )
    schema = json.loads(printed.stdout)
    assert schema == manifest_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert list(schema["patternProperties"]) == ["^x-"]


@pytest.mark.parametrize("path", every_manifest_file(), ids=lambda p: p.name)
def test_every_manifest_file_matches_the_schema(path: Path) -> None:
    schema = json.loads((MANIFESTS / "schema.json").read_text("utf-8"))
    manifest = json.loads(path.read_text("utf-8"))
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(manifest)]
    assert errors == []


def test_the_shipped_set_is_complete() -> None:
    names = sorted(p.stem for p in MANIFESTS.glob("*.json") if p.name != "schema.json")
    assert names == sorted(SHIPPED)


@pytest.mark.parametrize("tool_id", SHIPPED)
def test_shipped_manifests_compile_strictly_and_say_when_to_use(tool_id: str) -> None:
    manifest = shipped(tool_id)
    spec = compile_manifest(manifest, DEFAULTS, require_permission=True)
    assert spec.tool_id == tool_id
    assert "Use it" in spec.description
    assert "Not for" in spec.description or "not for" in spec.description
    assert spec.rate_limit is not None
    assert spec.aliases


def test_shipped_semantics() -> None:
    create = compile_manifest(shipped("order_create"), DEFAULTS)
    report = compile_manifest(shipped("report_monthly"), DEFAULTS)
    inventory = compile_manifest(shipped("inventory_query"), DEFAULTS)
    assert (create.idempotent, create.permission, create.retry.max_retries) == (False, "user", 0)
    assert report.endpoint.type == "queue"
    assert (inventory.permission, inventory.idempotent) == ("public", True)
    assert inventory.endpoint.type == "http"
    assert inventory.endpoint.path_params == ("sku",)


def test_original_examples_compile_with_endpoint_scope_lifted() -> None:
    order = compile_manifest(original("order_query"), DEFAULTS)
    inventory = compile_manifest(original("inventory_query"), DEFAULTS)
    assert order.scope == ("ops_admin", "order_manager")
    assert order.permission == "admin"  # roles without a permission mean admin-only
    assert order.endpoint.auth.type == "api_key"  # type: ignore[union-attr]
    assert order.endpoint.auth.key == "internal.order.read"  # type: ignore[union-attr]
    assert (order.timeout_ms, order.retry.max_retries, order.retry.backoff_ms) == (5000, 2, 500)
    assert inventory.permission == "public"
    assert inventory.idempotent  # GET


def test_strict_compilation_refuses_a_manifest_without_permission() -> None:
    with pytest.raises(InvalidManifest) as caught:
        compile_manifest(original("inventory_query"), DEFAULTS, require_permission=True)
    assert caught.value.reason == "permission_required"
    assert "permission" in caught.value.message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"tool_id": "Bad Id"}, "tool_id"),
        ({"endpoint": {"type": "http", "method": "GET", "url": "ftp://x/y"}}, "endpoint"),
        ({"endpoint": {"type": "http", "method": "GET", "url": "http://x/{missing}"}}, "missing"),
        (
            {"input_schema": {"type": "object", "properties": {"a": {"type": "nope"}}}},
            "input_schema",
        ),
        ({"permission": "admin"}, "scope"),
        ({"rate_limit": "lots"}, "rate_limit"),
        ({"endpoint": {"type": "python", "function": "os:system"}}, "outside the allowed"),
        ({"auth_token": "hunter2"}, "auth_token"),
        # Postgres keeps no NUL in text: the registry answered 500 for this.
        ({"description": "Shows a thing.\u0000"}, "description: holds a NUL"),
        ({"aliases": ["ok", "no\u0000pe"]}, "aliases/1: holds a NUL"),
        # half a surrogate pair (UTF-8 cannot encode it) and numbers json reads as infinite
        (
            {"input_schema": {"type": "object", "properties": {"q": {"enum": ["a\ud800"]}}}},
            "input_schema/properties/q/enum/0: holds a NUL",
        ),
        (
            {"input_schema": {"type": "object", "properties": {"n": {"maximum": float("inf")}}}},
            "input_schema/properties/n/maximum: holds",
        ),
        (
            {"input_schema": {"type": "object", "properties": {"a\u0000": {"type": "string"}}}},
            "input_schema/properties: holds a NUL",
        ),
        (
            {
                "endpoint": {
                    "type": "http",
                    "method": "GET",
                    "url": "http://x/",
                    "auth": {"type": "api_key"},
                }
            },
            "key",
        ),
        (
            {"input_schema": {"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}}},
            "input_schema/properties/a/pattern",
        ),
        (
            {
                "endpoint": {
                    "type": "queue",
                    "stream": "reach:gateway:registry",
                    "target": {"type": "http", "method": "GET", "url": "http://x/"},
                }
            },
            "endpoint/stream",
        ),
    ],
)
def test_invalid_manifests_are_refused_with_the_problem_named(
    change: dict[str, Any], expected: str
) -> None:
    manifest = http_tool("sample_tool", "http://127.0.0.1:1/x")
    manifest.update(change)
    with pytest.raises(InvalidManifest) as caught:
        compile_manifest(manifest, DEFAULTS)
    assert caught.value.reason == "invalid_manifest"
    assert expected in caught.value.message


def test_scope_declared_twice_must_agree() -> None:
    manifest = original("order_query")
    manifest["scope"] = ["someone_else"]
    with pytest.raises(InvalidManifest, match="disagree"):
        compile_manifest(manifest, DEFAULTS)


def http_with(**endpoint: Any) -> dict[str, Any]:
    return http_tool(
        "sample_tool",
        "http://127.0.0.1:1/x",
        endpoint={"type": "http", "method": "GET", "url": "http://127.0.0.1:1/x", **endpoint},
    )


def refused(manifest: Any) -> InvalidManifest:
    with pytest.raises(InvalidManifest) as caught:
        compile_manifest(manifest, DEFAULTS)
    assert caught.value.reason == "invalid_manifest"
    return caught.value


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        (
            http_with(auth={"type": "api_key", "key": "../../etc/passwd"}),
            "endpoint/auth/key: String should match pattern",
        ),
        (http_with(auth={"type": "bearer"}), "endpoint/auth/key: Field required"),
        (
            http_tool(
                "sample_tool",
                "http://x/",
                endpoint={
                    "type": "queue",
                    "target": {
                        "type": "http",
                        "method": "GET",
                        "url": "http://x/",
                        "auth": {"type": "oauth2", "client_id": "c", "key": "k"},
                    },
                },
            ),
            "endpoint/target/auth/token_endpoint: Field required",
        ),
        (http_with(auth={"type": "kerberos"}), "endpoint/auth/type: must be one of 'none', "),
        (http_tool("sample_tool", "http://x/", endpoint={"url": "http://x/"}), "endpoint/type: "),
        (http_tool("sample_tool", "http://x/", endpoint={"type": "ftp"}), "endpoint/type: must"),
        (http_with(retries=3), "endpoint/retries: Extra inputs are not permitted"),
        (http_tool("sample_tool", "http://x/", permission=None), "permission: null is not"),
        (http_tool("sample_tool", "http://x/", timeout_ms="3000"), "timeout_ms: Input should be"),
        (http_tool("sample_tool", "http://x/", scope=["a", "a"]), "scope: 'a' is listed twice"),
        (http_tool("sample_tool", "http://x/", aliases=["ok", ""]), "aliases/1: String should"),
        (http_tool("sample_tool", "http://x/", input_schema={}), "input_schema: must be"),
        (["not", "an", "object"], "(manifest): Input should be"),
        # Found after the model validated: named the same way.
        (http_with(url="http://x/{sku}"), "endpoint/url: uses path parameters"),
        (
            http_tool("sample_tool", "http://x/", endpoint={"type": "python", "function": "os:x"}),
            "endpoint/function: module 'os' is outside",
        ),
        (http_tool("sample_tool", "http://x/", permission="admin"), "permission: `admin` needs"),
    ],
)
def test_a_refusal_names_each_problem_by_its_path(manifest: Any, problem: str) -> None:
    error = refused(manifest)
    assert problem in error.message
    assert any(p.startswith(problem.split(":")[0] + ": ") for p in error.details["problems"])


def test_a_refusal_lists_at_most_ten_clipped_problems() -> None:
    manifest = http_tool("sample_tool", "http://x/", aliases=[1] * 40, tags=["t" * 10_000])
    manifest.update({"k" * 10_000: 1, "endpoint": {"type": "z" * 10_000}})
    error = refused(manifest)
    assert len(error.details["problems"]) == 10
    assert "more problem(s)" in error.message
    assert len(error.message) < 4000
    assert "k" * 101 not in error.message
    assert "z" * 101 not in error.message


def test_extensions_are_kept_and_unknown_fields_refused() -> None:
    manifest = http_tool("sample_tool", "http://x/", **{"x-owner": {"team": "ops"}})
    spec = compile_manifest(manifest, DEFAULTS)
    assert spec.manifest is manifest  # GET /tools/{id} answers exactly what was registered
    assert spec.manifest["x-owner"] == {"team": "ops"}
    assert "owner: Extra inputs" in refused({**manifest, "owner": "ops"}).message


def test_defaults_come_from_the_model_and_the_deployment() -> None:
    deployment = ManifestDefaults(
        timeout_ms=1234,
        max_response_bytes=4096,
        breaker_failure_threshold=7,
        breaker_reset_timeout_ms=900,
        task_stream_prefix="p:",
        python_packages=(SAMPLE_TOOLS,),
    )
    bare = compile_manifest(http_tool("sample_tool", "http://x/"), deployment)
    assert (bare.timeout_ms, bare.max_response_bytes) == (1234, 4096)
    assert (bare.breaker.failure_threshold, bare.breaker.reset_timeout_ms) == (7, 900)
    assert (bare.retry.max_retries, bare.retry.backoff_ms, bare.retry.max_backoff_ms) == (
        0,
        200,
        5000,
    )
    assert (bare.namespace, bare.requires_approval, bare.aliases, bare.rate_limit) == (
        "default",
        False,
        (),
        None,
    )
    assert isinstance(bare.endpoint, HttpTarget)
    assert (bare.endpoint.auth.type, bare.endpoint.auth.key) == ("none", None)
    keyed = compile_manifest(http_with(auth={"type": "api_key", "key": "k"}), deployment)
    assert keyed.endpoint.auth.header == "X-API-Key"  # type: ignore[union-attr]
    queued = compile_manifest(
        http_tool(
            "sample_tool",
            "http://x/",
            endpoint={
                "type": "queue",
                "target": {"type": "python", "function": f"{SAMPLE_TOOLS}:add"},
            },
            max_response_bytes=10**8,
            timeout_ms=3000.0,  # a whole float is an integer, as in JSON Schema
            circuit_breaker={"failure_threshold": 2},
        ),
        deployment,
    )
    assert isinstance(queued.endpoint, QueueTarget)
    assert (queued.endpoint.name, queued.endpoint.stream) == ("default", "p:default")
    assert queued.max_response_bytes == 4096  # a manifest may lower the cap, never raise it
    assert queued.timeout_ms == 3000
    assert queued.breaker.failure_threshold == 2
    assert not queued.idempotent  # only GET/HEAD/PUT/DELETE http tools are by default
