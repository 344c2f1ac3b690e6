"""The security tests use the gateway's fixtures (app factory, shared embedder, upstream)."""

from tests.gateway.conftest import embedder, gateway_env, make_gateway, upstream

__all__ = ["embedder", "gateway_env", "make_gateway", "upstream"]
