"""A short follow-up keeps the tool just used among the candidates: "and for Pied Piper?"
after an account lookup reads like a question about a sales *pipeline*, and the coarse
stage did not keep the account lookup at all, so nothing could continue it."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.gateway.routing.conftest import dry_run, manifest

CATALOGUE = [
    manifest(
        "account_lookup",
        "GET",
        "Finds a customer account: owner, account manager, plan and open tickets.",
        {
            "account_id": {"type": "string", "description": "Account id, like ACC-10234."},
            "company_name": {"type": "string", "description": "Company name, partial match."},
        },
        [],
    ),
    manifest(
        "deal_pipeline_list",
        "GET",
        "Lists the deals in the sales pipeline by stage, with their amounts and owners.",
        {"stage": {"type": "string", "enum": ["lead", "proposal", "won", "lost"]}},
        [],
    ),
    manifest(
        "meeting_list",
        "GET",
        "Lists the meetings on a sales rep's calendar for a day.",
        {"day": {"type": "string", "format": "date"}},
        [],
    ),
    manifest(
        "pipeline_forecast",
        "GET",
        "Forecasts this quarter's pipeline: weighted deal amounts per stage and rep.",
        {"quarter": {"type": "string", "pattern": "^\\d{4}-Q[1-4]$"}},
        [],
    ),
    manifest(
        "ci_pipeline_status",
        "GET",
        "Shows the build pipeline runs of a repository and whether they passed.",
        {"repo": {"type": "string"}},
        [],
    ),
    manifest(
        "lead_import",
        "POST",
        "Imports leads from a trade fair list into the pipeline.",
        {"list_name": {"type": "string"}},
    ),
    manifest(
        "refund_issue",
        "POST",
        "Issues a refund against an invoice.",
        {"invoice_id": {"type": "string", "pattern": "^INV-\\d{6}$"}},
    ),
]


async def run(gateway: httpx.AsyncClient, query: str, session: str) -> httpx.Response:
    """A dry run in ``session``: nothing is left there (see ``looked_up``)."""
    return await dry_run(gateway, query, "rep", session)


async def looked_up(gateway: httpx.AsyncClient, app: FastAPI, session: str) -> None:
    """ "who's the account manager on Hooli?", routed and recorded in the session as
    running it would have (a dry run leaves nothing there)."""
    first = await run(gateway, "who's the account manager on Hooli?", session)
    routed = first.json()
    assert routed["tool_id"] == "account_lookup", first.text
    context = app.state.runtime.run.context
    await context.remember("rep", session, routed["tool_id"], routed["arguments"], "ok")


async def test_a_short_follow_up_with_a_new_name_continues_the_last_tool(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    await looked_up(gateway, app, "s-follow")
    again = await run(gateway, "and for Pied Piper?", "s-follow")
    assert again.status_code == 200, again.text
    assert again.json()["tool_id"] == "account_lookup"
    assert again.json()["arguments"] == {"company_name": "Pied Piper"}


async def test_a_follow_up_that_gives_nothing_new_is_still_refused(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    await looked_up(gateway, app, "s-thanks")
    done = await run(gateway, "thanks, that's all", "s-thanks")
    assert done.status_code == 404, done.text
    assert done.json()["reason"] == "no_matching_tool"
