"""Settings of the router, mixed into the gateway's ``Settings``."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings


class RoutingSettings(BaseSettings):
    route_top_k: int = Field(5, ge=1, le=50, description="Candidates kept by the coarse stage.")
    route_threshold: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Offline mode: the top candidate's confidence must reach this, else "
        "no_matching_tool (see `make bench-routing` for the trade-off).",
    )
    route_unfilled_threshold: float = Field(
        0.36,
        ge=0.0,
        le=1.0,
        description="Offline mode: a route whose tool would lack a required argument the "
        "request does not give must reach this confidence, else no_matching_tool naming the "
        "closest tool and what it needs (a weak guess that cannot run is more often a "
        "request no tool serves). At or below `ROUTE_THRESHOLD` it changes nothing.",
    )
    route_alpha: float = Field(
        0.8, ge=0.0, le=1.0, description="Weight of dense vs lexical scores in the fusion."
    )
    route_cache_threshold: float = Field(
        0.92, ge=0.5, le=1.0, description="Cosine at which a cached query counts as the same."
    )
    route_cache_min_confidence: float = Field(
        0.45,
        ge=0.0,
        le=1.0,
        description="Only routes at least this confident are cached (same scale as "
        "`ROUTE_THRESHOLD`: 0.3 routes at all, clear matches score about 0.5-0.7), so a "
        "weak guess is never reused.",
    )
    route_cache_ttl_s: int = Field(3600, ge=1, description="How long a cached route lives.")
    session_context_calls: int = Field(5, ge=0, description="Past calls kept per session.")
    session_context_ttl_s: int = Field(3600, ge=1, description="Session context lifetime.")
