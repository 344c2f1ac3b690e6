"""How routing can fail. Each failure carries the decision so far (``decision``:
the tool it got to, its arguments, the candidates with their scores), so
``POST /run`` can answer with the route even when nothing runs.

- ``NoMatchingTool`` (404, ``no_matching_tool``): no tool fits the request, or
  none is visible to the caller;
- ``RoutedArgumentsInvalid`` (422, ``invalid_arguments``, an
  ``executor.errors.InvalidArguments``): a tool fits, but the arguments read
  from the request are missing or do not fit its schema.

``RouterBusy`` (503, ``router_busy``, with ``Retry-After``) is no decision: too many
long requests are waiting to be read (``service.OFF_LOOP_WAITING``), or too many of this
caller's (``service.OFF_LOOP_PER_CALLER``); try again shortly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.executor.errors import InvalidArguments
from reach_common.errors import NotFound, ReachError, ServiceUnavailable

if TYPE_CHECKING:
    from gateway.routing.service import RouteDecision


class RouteFailed(ReachError):
    """Base of the router's failures; ``decision`` is what the router got to."""

    def __init__(self, message: str, *, decision: RouteDecision, **details: Any) -> None:
        super().__init__(message, **details)
        self.decision = decision


class NoMatchingTool(RouteFailed, NotFound):
    reason = "no_matching_tool"


class RoutedArgumentsInvalid(RouteFailed, InvalidArguments):
    pass


class RouterBusy(ServiceUnavailable):
    reason = "router_busy"

    def __init__(
        self, waiting: int, longer_than: int, retry_after_s: int = 1, *, yours: bool = False
    ) -> None:
        whose = "of yours " if yours else ""
        super().__init__(
            f"{waiting} long requests {whose}(over {longer_than} characters) are already "
            f"waiting to be read; try again in {retry_after_s} s, or send a shorter request.",
            headers={"Retry-After": str(retry_after_s)},
            retry_after_s=retry_after_s,
        )
