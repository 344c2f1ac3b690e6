"""Reach as an OAuth 2.1 resource server for MCP clients, and /mcp's transport checks.

Reach issues no tokens. ``/.well-known/oauth-protected-resource`` (RFC 9728)
names the authorization servers whose tokens it accepts; a request to ``/mcp``
without a usable credential is a 401 whose ``WWW-Authenticate`` points there,
so a client that speaks the MCP authorization flow can find where to get a
token. The token is then verified like any JWT (``JWT_ISSUER``,
``JWT_AUDIENCE``: the audience is this gateway).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

METADATA_PATH = "/.well-known/oauth-protected-resource"


def transport_security(
    allowed_hosts: Sequence[str], mcp_hosts: Sequence[str], origins: Sequence[str]
) -> TransportSecuritySettings:
    """DNS-rebinding protection for /mcp: the Host and (from browsers) Origin a request
    may carry. Without MCP_ALLOWED_HOSTS, every exact name in ALLOWED_HOSTS, any port
    (patterns like ``*.example.com`` are the service-wide check's; list such hosts in
    MCP_ALLOWED_HOSTS)."""
    hosts = list(mcp_hosts)
    if not hosts:
        for host in allowed_hosts:
            if "*" in host:
                continue
            name = f"[{host}]" if ":" in host and not host.startswith("[") else host
            hosts += [name, f"{name}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=list(origins)
    )


def resource_of(configured: str | None, base_url: str) -> str:
    """The protected resource's identifier: MCP_RESOURCE_URL, else this request's base URL."""
    return (configured or base_url).rstrip("/")


def resource_metadata(resource: str, authorization_servers: Sequence[str]) -> dict[str, Any]:
    """RFC 9728 protected resource metadata."""
    metadata: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
        "resource_name": "Reach gateway",
        "resource_documentation": f"{resource}/docs",
    }
    return metadata


def challenge(resource: str, error: str | None = None) -> str:
    """The ``WWW-Authenticate`` value of a 401 from /mcp."""
    value = f'Bearer resource_metadata="{resource}{METADATA_PATH}"'
    if error:
        value += f', error="{error}"'
    return value
