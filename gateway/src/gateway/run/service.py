"""``POST /run``: route a query, then call the tool through the shared invoke pipeline.

Routing only chooses. Authorisation, argument validation, rate limits,
execution and audit are the same code ``POST /tools/{id}/invoke`` runs, so a
routed call can do nothing an explicit call could not.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from gateway.auth.service import AuthService, rate_key
from gateway.invoke.service import CallOptions, InvokeOutcome, InvokeService, failure_envelope
from gateway.ratelimit.service import RateLimiter
from gateway.routing.context import SessionContext
from gateway.routing.errors import RouteFailed, RouterBusy
from gateway.routing.service import RouteDecision, Router
from gateway.run.schemas import RunRequest
from reach_common.auth.caller import Caller
from reach_common.errors import ReachError, current_trace_id


class RunService:
    def __init__(
        self,
        *,
        router: Router,
        invoke: InvokeService,
        auth: AuthService,
        context: SessionContext,
        limiter: RateLimiter,
    ) -> None:
        self.router = router
        self.invoke = invoke
        self.auth = auth
        self.context = context
        self.limiter = limiter

    async def admit(self, caller: Caller, client_ip: str | None) -> None:
        """Count one routing request against ``ROUTE_RATE_LIMIT`` before the router works
        (it embeds the request), or raise ``RateLimited`` (429, ``Retry-After``)."""
        await self.limiter.hit(self.limiter.routing(rate_key(caller, client_ip)))

    async def run(
        self,
        request: RunRequest,
        *,
        headers: Mapping[str, str],
        client_ip: str | None,
        within: frozenset[str] | None = None,
    ) -> InvokeOutcome:
        """Route ``request`` (``within``: only among these tool ids) and run the tool."""
        started = time.perf_counter()
        user_context = request.user_context
        try:
            caller = await self.auth.resolve(headers, user_context)
            await self.admit(caller, client_ip)
        except ReachError as exc:
            body = failure_envelope(None, {}, exc, _ms(started))
            return InvokeOutcome(exc.status_code, body, dict(exc.headers))
        namespaces = {user_context.domain} if user_context and user_context.domain else None
        # Session context belongs to a caller: in strict mode to a verified one (anonymous
        # callers get none, or every anonymous client would share one ``session_id``).
        who = caller.user_id or (None if self.auth.strict else "anonymous")
        recent = await self.context.recent(who, request.session_id) if who else []
        try:
            decision = await self.router.route(
                request.user_query,
                caller,
                namespaces=namespaces,
                recent=recent,
                remembered=request.memories,
                within=within,
                owner=rate_key(caller, client_ip),
            )
        except RouteFailed as exc:
            tried = exc.decision
            body = failure_envelope(
                tried.tool_id, tried.arguments, exc, _ms(started), route=tried.as_route()
            )
            return InvokeOutcome(exc.status_code, body, dict(exc.headers), caller)
        except RouterBusy as exc:  # no decision: too many long requests waiting
            body = failure_envelope(None, {}, exc, _ms(started))
            return InvokeOutcome(exc.status_code, body, dict(exc.headers), caller)
        route = decision.as_route()
        assert decision.tool_id is not None
        if request.dry_run:
            return InvokeOutcome(200, self._dry_run_body(decision, route, started), caller=caller)

        outcome = await self.invoke.invoke(
            decision.tool_id,
            decision.arguments,
            headers=headers,
            caller=caller,
            client_ip=client_ip,
            options=CallOptions(mode=request.mode, callback_url=request.callback_url),
        )
        if who and outcome.body.get("success"):
            await self.context.remember(
                who,
                request.session_id,
                decision.tool_id,
                decision.arguments,
                outcome.body.get("output"),
            )
        outcome.body["route"] = route
        outcome.body["latency_ms"] = _ms(started)
        return outcome

    @staticmethod
    def _dry_run_body(
        decision: RouteDecision, route: dict[str, Any], started: float
    ) -> dict[str, Any]:
        return {
            "success": True,
            "dry_run": True,
            "tool_id": decision.tool_id,
            "arguments": decision.arguments,
            "output": None,
            "latency_ms": _ms(started),
            "trace_id": current_trace_id(),
            "route": route,
        }


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
