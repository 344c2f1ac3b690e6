"""A tool named like a reader ("street_issue_report") whose description opens with a verb
of writing ("Creates a new job…") writes: a question about an earlier report is no job for
it. Before, its name's "report" made it a reader, exempt from the rule that a question
never reaches a writer. Catalogue: tests/data/municipal, written blind to the router."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("municipal")
MANIFESTS = Path(__file__).resolve().parents[2] / "data" / "municipal" / "manifests"


def test_a_description_that_opens_by_writing_outweighs_a_readers_name() -> None:
    manifest = json.loads((MANIFESTS / "street_issue_report.json").read_text())
    assert intent.writes(manifest, reads_only=False)
    reader = {**manifest, "description": "Shows the progress of a reported job."}
    assert not intent.writes(reader, reads_only=False)


async def test_a_question_about_an_earlier_report_files_no_new_one(
    gateway: httpx.AsyncClient,
) -> None:
    query = "I reported a pothole on Mill Lane two weeks ago, ref SR-55102 - has anyone fixed it?"
    response = await dry_run(gateway, query, "municipal")
    assert response.json().get("tool_id") != "street_issue_report", response.text


async def test_a_new_report_still_reaches_it(gateway: httpx.AsyncClient) -> None:
    query = "there's a massive pothole outside 22 Mill Lane, nearly lost a tyre"
    body = (await dry_run(gateway, query, "municipal")).json()
    assert body.get("tool_id") == "street_issue_report", body
    assert body["arguments"] == {"issue_type": "pothole", "location": "22 Mill Lane"}
