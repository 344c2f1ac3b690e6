"""Which tools a turn offers the model: all the caller's, or a shortlist that fits.

Every model request carries the definitions of the tools it offers. Ten tools
are about 1,800 tokens; a registry of a few hundred would fill the whole
request budget, and the provider would refuse the request. So the definitions
may take at most their share of the request (``TOOLS_TOKEN_SHARE``, see
:attr:`agent.react.context.Budget.tools`). A catalogue within it is offered
whole. A larger one is shortlisted for the turn, in this order, each tool
added while the definitions still fit (one that alone does not fit is skipped):

1. the tools the session's last turns called (this turn's, when it resumes,
   and the two before), newest first: a follow-up ("and for SKU2024003?")
   means the tool just used;
2. the gateway's ranking of the caller's tools for the message
   (``GET /tools/list?q=``, the router's coarse stage), best first.

The ranking is one more gateway call, made only for a catalogue that does not
fit. If it fails or ranks nothing (no tool has any evidence for the message),
the listing's own order fills the share: the turn goes on with fewer tools
rather than failing or offering none. Only tools of the turn's listing are
offered, so a ranking can never add a tool the caller may not use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from agent.clients.gateway import GatewayClient, GatewayUnavailable
from agent.clients.schemas import Caller, GatewayTool
from agent.sessions.models import ChatMessage

log = structlog.get_logger(__name__)

RANKED = 100  # tools the gateway ranks (its most); the share decides how many are offered
RECENT_TURNS = 3  # turns whose calls are offered first: this one and the two before


@dataclass(frozen=True)
class Offer:
    tools: list[GatewayTool]
    listed: int  # the caller's tools
    shortlisted: bool


def recent_tool_ids(rows: Sequence[ChatMessage], turns: int = RECENT_TURNS) -> list[str]:
    """The tools the last ``turns`` turns of ``rows`` called, newest first, once each."""
    ids: list[str] = []
    seen_turns = 0
    for row in reversed(rows):
        if row.role == "user":
            seen_turns += 1
            if seen_turns >= turns:
                break
        for call in reversed(row.tool_calls or ()):
            tool_id = call.get("tool_id")
            if isinstance(tool_id, str) and tool_id not in ids:
                ids.append(tool_id)
    return ids


async def offer(
    gateway: GatewayClient,
    caller: Caller,
    message: str,
    tools: Sequence[GatewayTool],
    recent: Sequence[str],
    allowance: int,
    scale: Callable[[int], int],
) -> Offer:
    """The tools to offer this turn: all of ``tools`` if their definitions fit in
    ``allowance`` tokens (as ``scale`` calibrates an estimate), else the shortlist."""
    if scale(sum(tool.definition_tokens for tool in tools)) <= allowance:
        return Offer(list(tools), len(tools), shortlisted=False)
    if allowance <= 0:  # the summary and the reserve take the whole request
        log.warning("tools_left_out", listed=len(tools), allowance=allowance)
        return Offer([], len(tools), shortlisted=True)
    try:
        ranked = [t.tool_id for t in await gateway.ranked_tools(caller, message, RANKED)]
    except GatewayUnavailable as exc:
        log.warning("tool_ranking_failed", error=str(exc)[:300], listed=len(tools))
        ranked = []
    # Nothing ranked (the ranking failed, or no tool has any evidence): the listing's order.
    order = ranked or [tool.tool_id for tool in tools]
    by_id = {tool.tool_id: tool for tool in tools}
    chosen: list[GatewayTool] = []
    used = 0
    for tool_id in dict.fromkeys([*recent, *order]):
        tool = by_id.get(tool_id)
        if tool is None:
            continue
        cost = scale(tool.definition_tokens)
        if used + cost <= allowance:
            chosen.append(tool)
            used += cost
    log.info("tools_shortlisted", listed=len(tools), offered=len(chosen), tokens=used)
    return Offer(chosen, len(tools), shortlisted=True)
