"""``POST /run``: natural language in, one tool call out."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from gateway.invoke.schemas import InvokeEnvelope
from reach_common.auth.caller import UserContext


class RunUserContext(UserContext):
    domain: str | None = Field(
        None,
        max_length=64,
        description="Only route to tools in this namespace (e.g. `inventory`).",
        examples=["inventory"],
    )


class RunRequest(BaseModel):
    session_id: str | None = Field(
        None,
        max_length=200,
        description="Groups turns: a follow-up like 'this SKU' can use the previous call's "
        "arguments.",
        examples=["sess_test_001"],
    )
    user_query: str = Field(min_length=1, max_length=4000, examples=["SKU2024001 还有多少库存"])
    user_context: RunUserContext | None = None
    memories: list[Annotated[str, Field(max_length=300)]] = Field(
        default_factory=list,
        max_length=5,
        description=(
            "Facts the caller's agent remembers about the user, e.g. 'My usual SKU is "
            "SKU2024003'. A required argument the query refers to ('my usual product') "
            "but does not name is read from them. They never choose the tool."
        ),
        examples=[["My usual SKU is SKU2024003"]],
    )
    dry_run: bool = Field(
        False, description="Return the route (tool, arguments, candidates) and execute nothing."
    )
    mode: Literal["sync", "async"] = Field(
        "sync",
        description="`async`: 202 with a `task_id` at once; the result at GET /tasks/{task_id}.",
    )
    callback_url: str | None = Field(
        None,
        max_length=2000,
        description=(
            "POST the signed result here when the call (or its approval request) finishes; "
            "implies `async` (docs/approvals.md)."
        ),
    )


class RouteCandidate(BaseModel):
    tool_id: str
    score: float = Field(description="Fused coarse score within this query's candidates.")
    dense: float
    lexical: float
    confidence: float = Field(description="Absolute match score the offline threshold uses.")


class RouteClosest(BaseModel):
    tool_id: str
    missing: list[str] = Field(description="Its required parameters the request did not give.")


class RouteInfo(BaseModel):
    confidence: float
    route_hint: str = Field(
        description="semantic_match | llm_rerank | route_cache | context", examples=["context"]
    )
    why: str = Field(description="Why this tool: threshold, re-rank, cache or context.")
    candidates: list[RouteCandidate]
    closest: RouteClosest | None = Field(
        None,
        description="Only on a `no_matching_tool` of a weak route the request gives too "
        "little to run (`ROUTE_UNFILLED_THRESHOLD`): the closest tool and what it lacks.",
    )


class RunEnvelope(InvokeEnvelope):
    """The invoke envelope plus how the tool was chosen."""

    tool_id: str | None  # type: ignore[assignment]  # none when nothing matched
    route: RouteInfo | None = None
    dry_run: bool = False
