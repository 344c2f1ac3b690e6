"""Tool secrets: where outbound credentials come from, and where each may be sent.

A manifest names a secret (``endpoint.auth.key``); it never holds one. The
value comes only from the store meant for tools, never from the gateway's own
settings, so no manifest can read ``JWT_SECRET``, ``DATABASE_URL`` or an LLM key:

- an environment variable ``REACH_SECRET_<NAME>`` (``internal.order.read`` →
  ``REACH_SECRET_INTERNAL_ORDER_READ``), or
- a file ``<name>`` in ``TOOL_SECRETS_DIR`` (a mounted Kubernetes Secret).

Each secret is bound to the hosts it may be sent to by ``TOOL_SECRET_HOSTS``
(JSON: ``{"internal.order.read": ["internal-order-svc", "shop:9000"]}``; an
entry without a port matches any port). A manifest that would send a bound
secret to another host is refused at registration; in strict mode so is one
naming a secret bound nowhere. At call time a secret is released only to a
bound host. Every refusal reads the same whether or not a value exists, so
the registry says nothing about which secrets the gateway holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from reach_common.errors import ReachError

ENV_PREFIX = "REACH_SECRET_"
_MAX_SECRET_BYTES = 16_384


def env_name(name: str) -> str:
    """``internal.order.read`` → ``REACH_SECRET_INTERNAL_ORDER_READ``."""
    return ENV_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", name).upper()


class SecretNotBound(ReachError):
    """Registration: the manifest would send a secret where no binding allows it."""

    status_code = 403
    reason = "secret_not_bound"


class SecretUnavailable(ReachError):
    """Call time: the operator has not provided (or not bound) the secret for this host."""

    status_code = 503
    reason = "secret_unavailable"


def destination(url: str) -> tuple[str, int]:
    """The host (lower case) and port a URL sends its request to."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (parts.hostname or "").lower(), port


def _how_to(name: str, host: str) -> str:
    return (
        f"an operator provides it as {env_name(name)} (or the file {name!r} in "
        f'TOOL_SECRETS_DIR) and binds it with TOOL_SECRET_HOSTS={{"{name}": ["{host}"]}}'
    )


class ToolSecrets:
    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        directory: Path | None,
        bindings: Mapping[str, Sequence[str]],
    ) -> None:
        self._environ = environ
        self._directory = directory
        self._bindings = {
            name: frozenset(entry.strip().lower() for entry in hosts if entry.strip())
            for name, hosts in bindings.items()
        }

    def _bound(self, name: str, host: str, port: int) -> bool:
        allowed = self._bindings.get(name, frozenset())
        return host in allowed or f"{host}:{port}" in allowed

    def check_binding(self, name: str, url: str, *, strict: bool) -> None:
        """Registration: may a manifest send secret ``name`` to ``url``'s host?

        A secret bound elsewhere is refused in both modes; one bound nowhere only in
        strict mode (permissive mode registers it, and calls fail until an operator
        binds it).
        """
        host, port = destination(url)
        if self._bound(name, host, port):
            return
        if name in self._bindings or strict:
            raise SecretNotBound(
                f"The manifest would send secret {name!r} to {host}:{port}, and no binding "
                f"allows that; {_how_to(name, host)}.",
                secret=name,
                host=host,
            )

    def value(self, name: str, url: str) -> str:
        """Call time: the secret's value, released only to a bound host."""
        host, port = destination(url)
        value = self._read(name) if self._bound(name, host, port) else None
        if not value:
            raise SecretUnavailable(
                f"Tool secret {name!r} is not available for {host}: {_how_to(name, host)}.",
                secret=name,
            )
        return value

    def _read(self, name: str) -> str | None:
        value = self._environ.get(env_name(name))
        if value:
            return value
        if self._directory is None or "/" in name or name.startswith("."):
            return None
        path = self._directory / name
        try:
            with path.open("rb") as handle:
                return handle.read(_MAX_SECRET_BYTES).decode("utf-8").strip() or None
        except (OSError, UnicodeDecodeError):
            return None
