"""The real gateway (shipped manifests, real shop) on a loopback port, as the agent tests
run it; ``reach`` talks to it over HTTP."""

from tests.agent.conftest import (  # noqa: F401 - fixtures, re-exported for these tests
    embedder,
    gateway,
    gateway_overrides,
    shop_server,
)
