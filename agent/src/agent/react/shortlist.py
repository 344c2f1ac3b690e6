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
fit. If it fails, the listing's own order fills the share: the turn goes on
with fewer tools rather than failing. Only tools of the turn's listing are
offered, so a ranking can never add a tool the caller may not use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from agent.clients.gateway import GatewayClient, GatewayUnavailable
from agent.clients.schemas import Caller, GatewayTool
from agent.sessions.models import ChatMessage
from agent.sessions.tokens import estimate_tokens

log = structlog.get_logger(__name__)

RANKED = 100  # tools the gateway ranks (its most); the share decides how many are offered
RECENT_TURNS = 3  # turns whose calls are offered first: this one and the two before

# A tool's definition cost, by the tool object: a listing revalidated with a 304 comes back
# as the same objects, so a catalogue of 10,000 is estimated once, not every turn. The tool
# is kept with its cost, so its id is never another object's while the entry lives.
_COSTS: dict[int, tuple[GatewayTool, int]] = {}
_COSTS_KEPT = 20_000


@dataclass(frozen=True)
class Offer:
    tools: list[GatewayTool]
    listed: int  # the caller's tools
    shortlisted: bool


def definition_tokens(tool: GatewayTool) -> int:
    """:func:`estimate_tokens` of ``tool``'s definition as a request carries it."""
    known = _COSTS.get(id(tool))
    if known is not None:
        return known[1]
    cost = estimate_tokens(
        json.dumps(
            {
                "name": tool.tool_id,
                "description": tool.description,
                "input_schema": tool.input_schema,
            },
            ensure_ascii=False,
        )
    )
    if len(_COSTS) >= _COSTS_KEPT:
        _COSTS.clear()
    _COSTS[id(tool)] = (tool, cost)
    return cost


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
    costs = {tool.tool_id: scale(definition_tokens(tool)) for tool in tools}
    if sum(costs.values()) <= allowance:
        return Offer(list(tools), len(tools), shortlisted=False)
    try:
        ranked = [t.tool_id for t in await gateway.ranked_tools(caller, message, RANKED)]
    except GatewayUnavailable as exc:
        log.warning("tool_ranking_failed", error=str(exc)[:300], listed=len(tools))
        ranked = [t.tool_id for t in tools]
    by_id = {tool.tool_id: tool for tool in tools}
    chosen: list[GatewayTool] = []
    used = 0
    for tool_id in dict.fromkeys([*recent, *ranked]):
        tool = by_id.get(tool_id)
        if tool is None or used + costs[tool_id] > allowance:
            continue
        chosen.append(tool)
        used += costs[tool_id]
    log.info("tools_shortlisted", listed=len(tools), offered=len(chosen), tokens=used)
    return Offer(chosen, len(tools), shortlisted=True)
