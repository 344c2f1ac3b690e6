"""Print every service's environment variables as Markdown tables (for the README).

.venv/bin/python scripts/settings_table.py
"""

from __future__ import annotations

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from agent.settings import Settings as AgentSettings
from gateway.settings import Settings as GatewaySettings
from reach_common.settings import CommonSettings
from retriever.settings import Settings as RetrieverSettings
from shop.settings import Settings as ShopSettings


def env_names(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return " / ".join(f"`{c}`" for c in choices)
    return f"`{(alias if isinstance(alias, str) else name).upper()}`"


def default_of(field: FieldInfo) -> str:
    factory = field.default_factory
    value = factory() if factory is not None else field.default  # type: ignore[call-arg]
    if value is None or value == "":
        return "unset"
    if hasattr(value, "get_secret_value"):
        return "(secret)"
    return f"`{value}`"


def table(title: str, settings: type[BaseSettings], skip: set[str]) -> None:
    print(f"\n#### {title}\n")
    print("| variable | default | meaning |")
    print("| --- | --- | --- |")
    for name, field in settings.model_fields.items():
        if name in skip:
            continue
        description = (field.description or "").replace("|", "\\|").replace("\n", " ")
        print(f"| {env_names(name, field)} | {default_of(field)} | {description} |")


HEADER = """# Configuration

Every setting is an environment variable with a default that runs locally.
This page is generated from the settings classes by `scripts/settings_table.py`;
a test keeps it in step with the code."""


def main() -> None:
    print(HEADER)
    common = set(CommonSettings.model_fields) - {"port", "service_name"}
    table("Every service", CommonSettings, {"port", "service_name"})
    for title, cls in (
        ("gateway", GatewaySettings),
        ("agent", AgentSettings),
        ("retriever", RetrieverSettings),
        ("shop", ShopSettings),
    ):
        table(title, cls, common | {"service_name"})


if __name__ == "__main__":
    main()
