"""``reach tools import`` (and ``history``) against a real gateway and the real shop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import yaml
from typer.testing import CliRunner

from reach_cli.main import app
from tests.agent.tap import GatewayTap

runner = CliRunner()
BOSS = ["--user", "boss", "--roles", "admin"]
USER = ["--user", "u1", "--roles", "staff"]
INVENTORY = "cli_get_inventory_api_inventory_sku_get"


def reach(gateway: GatewayTap, *args: str, who: list[str] = BOSS) -> tuple[int, Any]:
    result = runner.invoke(app, ["--url", gateway.url, *who, "--json", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.stdout


def test_a_url_is_a_dry_run_by_default(gateway: GatewayTap, shop_server: str) -> None:
    code, body = reach(gateway, "tools", "import", f"{shop_server}/openapi.json")
    assert code == 0, body
    assert body["dry_run"] is True
    assert body["operations_found"] >= 7
    assert body["proposed"] == body["operations_found"]
    assert body["registered"] == 0
    table = runner.invoke(
        app, ["--url", gateway.url, *BOSS, "tools", "import", f"{shop_server}/openapi.json"]
    )
    assert table.exit_code == 0
    assert "registered (dry run: nothing registered)" in table.stdout


def test_a_yaml_file_is_applied_and_its_tools_answer(
    gateway: GatewayTap, shop_server: str, tmp_path: Path
) -> None:
    document = httpx.get(f"{shop_server}/openapi.json").json()
    path = tmp_path / "shop.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    args = ["tools", "import", str(path), "--apply", "--prefix", "cli_", "--namespace", "shop"]
    code, body = reach(gateway, *args, "--base-url", shop_server, "--operation",
                       "get_inventory_api_inventory__sku__get")  # fmt: skip
    assert code == 0, body
    assert (body["registered"], body["dry_run"]) == (1, False)
    assert [t["tool_id"] for t in body["tools"]] == [INVENTORY]
    code, called = reach(gateway, "invoke", INVENTORY, "sku=SKU2024001")
    assert code == 0, called
    assert called["output"]["available"] == 156
    code, history = reach(gateway, "tools", "history", INVENTORY)
    assert code == 0, history
    assert history["versions"][0]["action"] == "imported"
    assert history["versions"][0]["actor"] == "boss"


def test_refusals_exit_non_zero(gateway: GatewayTap, shop_server: str, tmp_path: Path) -> None:
    code, body = reach(gateway, "tools", "import", f"{shop_server}/openapi.json", who=USER)
    assert code == 1
    assert body["reason"] == "insufficient_permission"
    broken = tmp_path / "broken.yaml"
    broken.write_text("openapi: 3.1.0\ninfo: {title: x, version: '1'}\npaths: 3\n", "utf-8")
    code, body = reach(gateway, "tools", "import", str(broken))
    assert code == 1
    assert body["reason"] == "invalid_openapi"
    assert body["message"].startswith("The OpenAPI document is invalid at /paths")
    missing = runner.invoke(app, ["--url", gateway.url, "tools", "import", str(tmp_path / "no")])
    assert missing.exit_code == 2
