"""Requests of a registrar's customers (``tests/data/webhosting``, written blind to the
router), on its own catalogue: a short request for the same again with a new value ("and
do the same for driftwoodinn.net", "same thing for …") continues the
session's last tool when that tool takes the new value.
"""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("webhosting")


async def routed_and_recorded(
    gateway: httpx.AsyncClient, app: FastAPI, query: str, session: str
) -> dict[str, object]:
    """``query`` routed in ``session`` and recorded there as running it would have (a dry
    run leaves nothing in the session)."""
    body: dict[str, object] = (await dry_run(gateway, query, "owner", session)).json()
    context = app.state.runtime.run.context
    await context.remember("owner", session, str(body["tool_id"]), body["arguments"], "ok")
    return body


@pytest.mark.parametrize(
    ("first", "tool_id", "again", "arguments"),
    [
        (
            "renew driftwoodinn.com 1 yr",
            "domain_renew",
            "and do the same for driftwoodinn.net",
            {"domain": "driftwoodinn.net", "years": 1},
        ),
        (
            "get me the transfer-out code for mossgardenstudio.com",
            "domain_transfer_code_get",
            "same thing for mossgardenstudio.co.uk",
            {"domain": "mossgardenstudio.co.uk"},
        ),
    ],
)
async def test_the_same_again_for_a_new_value_continues_the_last_tool(
    gateway: httpx.AsyncClient,
    app: FastAPI,
    first: str,
    tool_id: str,
    again: str,
    arguments: dict[str, object],
) -> None:
    session = f"s-{tool_id}"
    body = await routed_and_recorded(gateway, app, first, session)
    assert body.get("tool_id") == tool_id, body
    followed = (await dry_run(gateway, again, "owner", session)).json()
    assert followed.get("tool_id") == tool_id, followed
    assert followed["arguments"] == arguments


async def test_the_same_again_with_no_session_is_read_on_its_own(
    gateway: httpx.AsyncClient,
) -> None:
    body = (await dry_run(gateway, "same thing for mossgardenstudio.co.uk", "owner")).json()
    assert body.get("tool_id") != "domain_transfer_code_get", body
