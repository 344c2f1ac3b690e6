"""One HTTP client for every command: where the gateway is, who is calling, and how a
refusal becomes an exit code.

Settings come from options or the environment: ``REACH_URL`` (the gateway, default
``http://127.0.0.1:8080``), ``REACH_API_KEY`` (sent as ``Authorization: Bearer``), and in
permissive mode ``REACH_USER`` / ``REACH_ROLES`` (sent as ``X-User-Id`` / ``X-User-Roles``).
A failed request ends the command with exit code 1 and the server's ``reason`` and
``message`` on stderr (2 when the server could not be reached).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:8080"
TIMEOUT_S = 60.0


class CommandFailed(Exception):
    """The server refused (``exit_code`` 1) or could not be reached (2)."""

    def __init__(self, reason: str, message: str, *, exit_code: int = 1) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.exit_code = exit_code


@dataclass(frozen=True)
class Target:
    url: str = DEFAULT_URL
    api_key: str | None = None
    user: str | None = None
    roles: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if self.user:
            headers["X-User-Id"] = self.user
        if self.roles:
            headers["X-User-Roles"] = self.roles
        return headers

    def user_context(self) -> dict[str, Any] | None:
        """The claimed identity as a body's ``user_context`` (POST /run and invoke read it
        there); None without ``--user``."""
        if not self.user:
            return None
        roles = [r.strip() for r in (self.roles or "").split(",") if r.strip()]
        return {"user_id": self.user, "roles": roles}

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        """``(status, body)`` of a successful answer (2xx); raises :class:`CommandFailed`."""
        try:
            response = httpx.request(
                method,
                self.url.rstrip("/") + path,
                json=json,
                params={k: v for k, v in (params or {}).items() if v is not None},
                headers=self.headers(),
                timeout=TIMEOUT_S,
            )
        except httpx.HTTPError as exc:
            raise CommandFailed(
                "unreachable", f"{self.url} did not answer ({type(exc).__name__})", exit_code=2
            ) from exc
        try:
            body = response.json()
        except ValueError:
            body = response.text
        refused = isinstance(body, dict) and body.get("success") is False
        # A 202 (queued, or waiting for approval) is an answer, not a failure.
        if response.status_code >= 400 or (refused and response.status_code != 202):
            reason = body.get("reason") if isinstance(body, dict) else None
            message = body.get("message") if isinstance(body, dict) else None
            raise CommandFailed(
                str(reason or f"http_{response.status_code}"), str(message or body)[:2000]
            )
        return response.status_code, body
