"""Import an OpenAPI document into a gateway and report what happened.

Prints the operations found, the manifests a dry run proposes, how many a real
run registers, the answer of each imported read tool (GET) called once through
``POST /tools/{id}/invoke`` with the examples the document gives, a ``POST /run``
request and the tool it was routed to, and the refusal of a malformed copy of the
document (its ``reason`` and JSON pointer).

    python scripts/openapi_import_report.py                      # the shop's own document
    python scripts/openapi_import_report.py openapi.yaml --base-url https://api.example.com
    python scripts/openapi_import_report.py URL --gateway http://127.0.0.1:8080

Without ``--gateway`` it starts its own stack (embedded Postgres and Redis, the
shop and a gateway, as processes on loopback ports) and removes it afterwards.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from reach_common.embedded import process_stack_env
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
HEADERS = {"X-User-Id": "openapi-report", "X-User-Roles": "admin"}
RUN_QUERY = "What is the stock of product SKU2024003?"


@contextmanager
def own_stack() -> Iterator[tuple[str, str]]:
    """(gateway URL, shop URL) of a throwaway stack."""
    with (
        process_stack_env("reach-openapi-report-") as (data_dir, env),
        running_service("shop", free_port(), env, data_dir, cwd=ROOT) as shop,
    ):
        gateway_env = {**env, "SHOP_URL": shop.url, "TOOL_AUTO_DISCOVERY": "false"}
        log_dir = data_dir / "gateway"
        log_dir.mkdir()
        with running_service(
            "gateway", free_port(), gateway_env, log_dir, cwd=ROOT, ready_timeout=90
        ) as gateway:
            yield gateway.url, shop.url


def source_body(source: str) -> dict[str, Any]:
    if source.startswith(("http://", "https://")):
        return {"url": source}
    return {"document": Path(source).read_text(encoding="utf-8")}


def example_arguments(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """One call's arguments from the schema's examples/defaults; None if one is missing."""
    schema = manifest["input_schema"]
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = schema["properties"].get(name, {})
        if prop.get("examples"):
            arguments[name] = prop["examples"][0]
        elif "example" in prop:
            arguments[name] = prop["example"]
        elif "default" in prop:
            arguments[name] = prop["default"]
        else:
            return None
    if "delay_ms" in schema["properties"]:  # the shop's report is slow on purpose
        arguments["delay_ms"] = 0
    return arguments


def malformed(document_source: dict[str, Any], client: httpx.Client) -> dict[str, Any]:
    """The document with its first operation's first response made invalid."""
    if "url" in document_source:
        document = client.get(document_source["url"]).json()
    else:
        document = yaml.safe_load(document_source["document"])
    broken = copy.deepcopy(document)
    path, item = next(iter(broken["paths"].items()))
    operation = next(iter(item.values()))
    operation["responses"] = {"200": {"content": {}}}  # a response needs a description
    return {"document": broken, "base_url": "http://127.0.0.1:1", "_where": path}


def report(gateway: str, source: dict[str, Any], extra: dict[str, Any]) -> None:
    with httpx.Client(base_url=gateway, headers=HEADERS, timeout=60) as client:
        request = {**source, **extra}
        dry = client.post("/tools/import/openapi", json=request).json()
        if "reason" in dry:
            print(f"import refused: {dry['reason']}: {dry['message']}")
            return
        print(f"document: {dry['source']} ({dry['title']}, OpenAPI {dry['openapi_version']})")
        print(f"operations found: {dry['operations_found']}")
        print(f"manifests proposed (dry run): {dry['proposed']}; skipped: {len(dry['skipped'])}")
        for item in dry["skipped"]:
            print(f"  skipped {item['method']} {item['path']}: {item['reason']}")
        real = client.post("/tools/import/openapi", json={**request, "dry_run": False}).json()
        print(f"registered: {real['registered']} (registry revision {real['revision']})")
        for tool in real["tools"]:
            if tool["method"] != "GET":
                continue
            arguments = example_arguments(tool["manifest"])
            if arguments is None:
                print(f"invoke {tool['tool_id']}: not called (no example for an argument)")
                continue
            call = {"arguments": arguments, "user_context": {"user_id": "openapi-report"}}
            answer = client.post(f"/tools/{tool['tool_id']}/invoke", json=call)
            success = answer.json().get("success")
            print(f"invoke {tool['tool_id']} {json.dumps(arguments)}: "
                  f"HTTP {answer.status_code}, success={success}")  # fmt: skip
        routed = client.post(
            "/run",
            json={"session_id": "openapi-report", "user_query": RUN_QUERY,
                  "user_context": {"user_id": "openapi-report"}},
        )  # fmt: skip
        body = routed.json()
        print(f"/run {RUN_QUERY!r}: HTTP {routed.status_code}, routed to {body.get('tool_id')}")
        bad = malformed(source, client)
        bad.pop("_where")
        refused = client.post("/tools/import/openapi", json=bad)
        detail = refused.json()
        print(f"malformed document: HTTP {refused.status_code} {detail.get('reason')} "
              f"at {detail.get('path')}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", default="shop", help="A URL, a file, or 'shop'.")
    parser.add_argument("--gateway", help="A running gateway (default: start one).")
    parser.add_argument("--base-url", help="Where the operations are called.")
    parser.add_argument("--namespace", default="imported")
    parser.add_argument("--prefix", default="", help="Put before every tool id.")
    args = parser.parse_args()
    extra = {"namespace": args.namespace, "id_prefix": args.prefix}
    if args.base_url:
        extra["base_url"] = args.base_url
    if args.gateway:
        if args.source == "shop":
            parser.error("with --gateway, name the document (e.g. http://shop:9000/openapi.json)")
        report(args.gateway, source_body(args.source), extra)
        return
    with own_stack() as (gateway, shop):
        source = f"{shop}/openapi.json" if args.source == "shop" else args.source
        report(gateway, source_body(source), extra)


if __name__ == "__main__":
    main()
