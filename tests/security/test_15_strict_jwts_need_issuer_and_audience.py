"""Finding 15: JWT ``iss``/``aud`` were checked only when configured, and the shipped k8s
config configured neither, so a token minted for any other service with the same key
was accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.settings import Settings as AgentSettings
from gateway.settings import Settings as GatewaySettings
from retriever.settings import Settings as RetrieverSettings
from tests.conftest import REPO_ROOT

SECRET = "a-long-enough-hs256-secret-for-tests-0123456789"


@pytest.mark.parametrize("settings_class", [GatewaySettings, AgentSettings, RetrieverSettings])
def test_strict_mode_refuses_to_start_without_issuer_and_audience(
    settings_class: type[GatewaySettings],
) -> None:
    with pytest.raises(ValidationError, match="JWT_ISSUER and JWT_AUDIENCE"):
        settings_class(auth_mode="strict", jwt_secret=SECRET)
    with pytest.raises(ValidationError, match="JWT_AUDIENCE"):
        settings_class(auth_mode="strict", jwt_secret=SECRET, jwt_issuer="https://idp")
    ok = settings_class(
        auth_mode="strict", jwt_secret=SECRET, jwt_issuer="https://idp", jwt_audience="reach"
    )
    assert ok.jwt_audience == "reach"
    # API keys alone need neither; permissive mode is for development.
    assert settings_class(auth_mode="strict").jwt_enabled is False
    assert settings_class(jwt_secret=SECRET).auth_mode == "permissive"


def test_the_shipped_strict_deployment_names_issuer_and_audience() -> None:
    overlays = list((REPO_ROOT / "deploy" / "k8s").rglob("*.yaml"))
    text = "\n".join(Path(p).read_text("utf-8") for p in overlays)
    assert "AUTH_MODE" in text
    for needed in ("JWT_ISSUER", "JWT_AUDIENCE"):
        assert needed in text, f"deploy/k8s sets no {needed}"
