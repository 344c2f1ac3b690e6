"""A thin typed client for the one retriever endpoint the gateway itself calls:
``POST /handles``, which keeps a tool output that is over its budget for its caller.

The output goes as the gateway already encoded it (no second encoding of megabytes).
The caller is named the way the retriever trusts: with the gateway's service key (the
tool secret OUTPUT_STORE_SECRET, a retriever key holding a RETRIEVER_DELEGATE_ROLES role)
and ``X-Reach-On-Behalf-Of``; without that key, as a claimed ``X-User-Id``, which only a
permissive retriever believes. Every failure is one :class:`OutputNotStored` whose
``reason`` and ``message`` the caller is shown; nothing is raised past it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import httpx

ON_BEHALF_HEADER = "X-Reach-On-Behalf-Of"
#: The retriever as the shipped manifests name it: TOOL_SECRET_HOSTS binds its key to it.
RETRIEVER_MANIFEST_URL = "http://retriever:8082/handles"


@dataclass(frozen=True)
class StoredOutput:
    handle: str
    expires_at: str
    chunks: int


class OutputNotStored(Exception):
    """The retriever did not keep the output: why, as a reason and a sentence."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class RetrieverClient:
    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        *,
        credential: Callable[[], str | None],
        timeout_s: float,
        ttl_s: int,
    ) -> None:
        self._http = http
        self._url = base_url.rstrip("/") + "/handles"
        self._credential = credential
        self._timeout = timeout_s
        self._ttl_s = ttl_s

    def _headers(self, owner: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = self._credential()
        if key:
            headers["Authorization"] = f"Bearer {key}"
            headers[ON_BEHALF_HEADER] = quote(owner, safe="")
        elif owner.isascii():
            headers["X-User-Id"] = owner
        else:
            raise OutputNotStored(
                "output_store_not_configured",
                "No retriever key is configured (OUTPUT_STORE_SECRET) and this caller's id "
                "cannot be sent as a header.",
            )
        return headers

    async def store_output(self, owner: str, tool_id: str, encoded: bytes) -> StoredOutput:
        """Keep ``encoded`` (the output as compact UTF-8 JSON) for ``owner``."""
        head = json.dumps({"tool_id": tool_id, "ttl_s": self._ttl_s})[:-1].encode()
        body = head + b',"output":' + encoded + b"}"
        try:
            response = await self._http.post(
                self._url, content=body, headers=self._headers(owner), timeout=self._timeout
            )
        except httpx.HTTPError as exc:
            raise OutputNotStored(
                "retriever_unavailable",
                f"The retriever could not be reached to keep the output ({type(exc).__name__}).",
            ) from exc
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code == 201 and isinstance(payload, dict) and "handle" in payload:
            return StoredOutput(
                handle=str(payload["handle"]),
                expires_at=str(payload.get("expires_at", "")),
                chunks=int(payload.get("chunks", 0)),
            )
        reason, message = "retriever_error", f"HTTP {response.status_code}"
        if isinstance(payload, dict):
            reason = str(payload.get("reason") or reason)[:64]
            message = str(payload.get("message") or message)[:300]
        raise OutputNotStored(reason, f"The retriever refused to keep the output: {message}")
