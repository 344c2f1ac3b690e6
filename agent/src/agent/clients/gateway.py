"""A thin typed client for the three gateway endpoints the agent uses.

- ``GET /tools/list``: the tools this caller may use (each caller's last listing
  kept and revalidated by its ``ETag``);
- ``POST /tools/{id}/invoke``: run one tool with the caller's identity;
- ``POST /run``: natural language in, routed tool result out (offline mode).

Every call goes through the service's shared ``httpx.AsyncClient``, which is
OpenTelemetry-instrumented, so the W3C ``traceparent`` of the current span is
sent and the gateway's spans join the agent's trace. The caller's own
``Authorization`` / ``X-API-Key`` headers are forwarded as received and never
logged; the agent has no credential of its own to lend. The claimed
``user_context`` (and its ``X-User-*`` header form) goes along only when the
chat layer put one in the :class:`Caller`, which it does in permissive mode only.

Every gateway error body has ``reason`` and ``message`` at its top level (the
tool-call envelope also nests them, with details, under ``error``);
:func:`gateway_error` reads them, the one parser for all of them. A failure the
client meets itself (no connection, a timeout, an unreadable reply) is one of
the errors below, reported the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import structlog
from pydantic import ValidationError

from agent.clients.schemas import Caller, GatewayError, GatewayTool, ToolOutcome
from reach_common.errors import ReachError, RemoteError, ServiceUnavailable

log = structlog.get_logger(__name__)

RUN_QUERY_MAX_CHARS = 4000  # POST /run refuses longer queries
RUN_MEMORIES = 5  # and more memories, or longer ones
RUN_MEMORY_MAX_CHARS = 300
LISTINGS_KEPT = 1024  # callers whose last tool listing is kept for revalidation
RANKED_QUERY_CHARS = 2000  # the longest request the gateway ranks tools for


class GatewayUnavailable(ServiceUnavailable):
    reason = "gateway_unavailable"


class GatewayTimeout(GatewayUnavailable):
    status_code = 504
    reason = "gateway_timeout"


class BadGatewayReply(ReachError):
    status_code = 502
    reason = "bad_gateway_reply"


class GatewayRefused(RemoteError):
    """An error body the gateway answered with (its status, ``reason``, ``message``)."""

    reason = "gateway_error"  # when the body is not a Reach error body


@dataclass(frozen=True)
class Listing:
    etag: str
    tools: tuple[GatewayTool, ...]


class GatewayClient:
    def __init__(self, http: httpx.AsyncClient, base_url: str, *, timeout_s: float) -> None:
        self._http = http
        self._base = base_url.rstrip("/")
        self._timeout = timeout_s
        # The last listing of each caller (by a digest of its identity), newest last.
        self._listings: OrderedDict[str, Listing] = OrderedDict()

    @staticmethod
    def _headers(caller: Caller) -> dict[str, str]:
        headers: dict[str, str] = {}
        if caller.authorization:
            headers["Authorization"] = caller.authorization
        if caller.api_key:
            headers["X-API-Key"] = caller.api_key
        return headers

    def _get_headers(self, caller: Caller) -> dict[str, str]:
        """Headers of a GET: the credential, and the claimed identity as ``X-User-Id`` /
        ``X-User-Roles`` (read by the gateway in permissive mode only)."""
        headers = self._headers(caller)
        user_id = caller.user_context.get("user_id")
        # Header values must be ASCII; a non-ASCII identity is left to the credential.
        if isinstance(user_id, str) and user_id.isascii():
            headers["X-User-Id"] = user_id
        roles = caller.user_context.get("roles")
        if isinstance(roles, list) and roles:
            joined = ",".join(str(role) for role in roles)
            if joined.isascii():
                headers["X-User-Roles"] = joined
        return headers

    async def ranked_tools(self, caller: Caller, query: str, limit: int) -> list[GatewayTool]:
        """At most ``limit`` of the tools ``caller`` may use, ranked for ``query`` by the
        gateway's router, best first (``GET /tools/list?q=``): a shortlist for one turn,
        never cached. Raises :class:`GatewayUnavailable` if it cannot be had."""
        # A long message is ranked by its start and its end (a pasted text, then the ask).
        if len(query) > RANKED_QUERY_CHARS:
            half = (RANKED_QUERY_CHARS - 3) // 2  # and " … " between
            query = f"{query[:half]} \u2026 {query[-half:]}"
        # A URL carries no NUL and only UTF-8: a lone surrogate (valid in JSON) becomes "?".
        text = query.replace("\x00", " ")
        text = text.encode("utf-8", "replace").decode("utf-8")
        params = {"q": text, "limit": str(limit)}
        return await self._listing(caller, params)

    async def list_tools(self, caller: Caller) -> list[GatewayTool]:
        """The tools ``caller`` may use. Raises :class:`GatewayUnavailable` if that cannot be known.

        A GET has no body, so the user context travels as the gateway's
        ``X-User-Id`` / ``X-User-Roles`` headers (read in permissive mode only),
        next to the forwarded credential.

        Each caller's last listing is kept with its ``ETag`` (the registry revision and
        the caller's view) and revalidated on every call: an unchanged listing comes
        back as a bodiless 304, and nothing is parsed again. The gateway still checks
        the credential each time, so a revoked key is refused at once, and a change to
        the registry shows on the next turn.
        """
        return await self._listing(caller)

    async def _listing(
        self, caller: Caller, params: dict[str, str] | None = None
    ) -> list[GatewayTool]:
        """``GET /tools/list`` as ``caller``: revalidated from the cache when not ranked."""
        headers = self._get_headers(caller)
        key = _listing_key(headers)
        cached = self._listings.get(key) if params is None else None
        if cached is not None:
            headers["If-None-Match"] = cached.etag
        try:
            response = await self._http.get(
                f"{self._base}/tools/list", headers=headers, params=params, timeout=self._timeout
            )
        except httpx.HTTPError as exc:
            raise GatewayUnavailable(
                f"The gateway could not be reached to list tools ({type(exc).__name__})."
            ) from exc
        if response.status_code == 304 and cached is not None:
            self._listings.move_to_end(key)
            return list(cached.tools)
        if params is None:
            self._listings.pop(key, None)
        if response.status_code != 200:
            error = gateway_error(response)
            raise GatewayUnavailable(
                f"The gateway refused to list tools: {error.reason}: {error.message}",
                gateway_status=response.status_code,
            )
        tools = _tools(_json(response))
        etag = response.headers.get("etag")
        if etag and params is None:
            self._listings[key] = Listing(etag, tuple(tools))
            if len(self._listings) > LISTINGS_KEPT:
                self._listings.popitem(last=False)
        return tools

    async def invoke(
        self,
        tool_id: str,
        arguments: dict[str, Any],
        caller: Caller,
        *,
        idempotency_key: str | None = None,
    ) -> ToolOutcome:
        """Run one tool. Never raises for a failed call: the outcome says what went wrong."""
        headers = self._headers(caller)
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        return await self._post(
            f"/tools/{quote(tool_id, safe='')}/invoke",
            {"arguments": arguments, "user_context": caller.user_context},
            headers,
            tool_id,
        )

    async def run(
        self,
        session_id: str,
        user_query: str,
        caller: Caller,
        memories: Sequence[str] = (),
    ) -> ToolOutcome:
        """Let the gateway route ``user_query`` to a tool and run it (offline mode).

        The query is cut to the gateway's limit: routing needs the gist, not a whole
        pasted document. ``memories`` (what the user told the agent before) can supply
        an argument the query refers to but does not name ("my usual product").
        """
        body: dict[str, Any] = {
            "session_id": session_id,
            "user_query": user_query[:RUN_QUERY_MAX_CHARS],
            "user_context": caller.user_context,
        }
        if memories:
            body["memories"] = [text[:RUN_MEMORY_MAX_CHARS] for text in memories[:RUN_MEMORIES]]
        return await self._post("/run", body, self._headers(caller), None)

    async def approval(self, approval_id: str, caller: Caller) -> dict[str, Any] | None:
        """``GET /approvals/{id}`` as ``caller``: the request's state and, once it ran, its
        result; None when it cannot be read now (the next turn asks again)."""
        try:
            response = await self._http.get(
                f"{self._base}/approvals/{quote(approval_id, safe='')}",
                headers=self._get_headers(caller),
                timeout=self._timeout,
            )
        except httpx.HTTPError:
            return None
        body = _json(response)
        if response.status_code == 404:
            return {"state": "not_found", "approval_id": approval_id}
        return body if response.status_code == 200 and isinstance(body, dict) else None

    async def _post(
        self, path: str, body: dict[str, Any], headers: dict[str, str], tool_id: str | None
    ) -> ToolOutcome:
        try:
            response = await self._http.post(
                self._base + path, json=body, headers=headers, timeout=self._timeout
            )
        except httpx.TimeoutException:
            return _failure(GatewayTimeout("The gateway did not answer in time."), tool_id)
        except httpx.HTTPError as exc:
            return _failure(
                GatewayUnavailable(f"The gateway could not be reached ({type(exc).__name__})."),
                tool_id,
            )
        payload = _json(response)
        if not isinstance(payload, dict):
            payload = {}
        pending = response.status_code == 202 and payload.get("reason") == "approval_pending"
        ok = pending or (response.status_code < 400 and payload.get("success", True) is not False)
        data: dict[str, Any] = {**payload, "status_code": response.status_code, "success": ok}
        data.setdefault("tool_id", tool_id)
        if pending:
            data["output"] = None
        elif response.status_code == 202:
            data.setdefault("task_id", payload.get("task_id"))
            data.setdefault("output", payload)
        data["error"] = None if ok else GatewayError.of(gateway_error(response))
        try:
            return ToolOutcome.model_validate(data)
        except ValidationError:
            return _failure(
                BadGatewayReply("The gateway answered in an unexpected shape."), tool_id
            )


def _tools(body: Any) -> list[GatewayTool]:
    """The tools of a ``GET /tools/list`` body; an unreadable entry is left out."""
    items = body.get("tools", []) if isinstance(body, dict) else body
    tools: list[GatewayTool] = []
    for item in items if isinstance(items, list) else []:
        try:
            tools.append(GatewayTool.model_validate(item))
        except ValidationError:
            log.warning("gateway_tool_unreadable", tool=str(item)[:200])
    return tools


def _listing_key(headers: dict[str, str]) -> str:
    """Whose listing: a digest of every header the gateway decides the caller by (the
    credential, and the claimed identity in permissive mode). Never kept in clear."""
    identity = json.dumps(sorted(headers.items()))
    return hashlib.sha256(identity.encode()).hexdigest()


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def gateway_error(response: httpx.Response) -> GatewayRefused:
    """The error a gateway answer reports, from the ``reason`` and ``message`` at the top
    level of its body: the one shape of every gateway error."""
    return GatewayRefused.from_body(_json(response), response.status_code)


def _failure(exc: ReachError, tool_id: str | None) -> ToolOutcome:
    return ToolOutcome(
        success=False, status_code=exc.status_code, tool_id=tool_id, error=GatewayError.of(exc)
    )
