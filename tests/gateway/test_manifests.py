"""The manifest contract: manifests/schema.json, the shipped manifests and their compilation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest import ManifestDefaults, compile_manifest, manifest_schema
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


def test_schema_file_is_the_gateways_schema_and_valid() -> None:
    on_disk = json.loads((MANIFESTS / "schema.json").read_text("utf-8"))
    assert on_disk == manifest_schema()
    Draft202012Validator.check_schema(on_disk)


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
    assert inventory.endpoint.path_params == ("sku",)  # type: ignore[union-attr]


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
