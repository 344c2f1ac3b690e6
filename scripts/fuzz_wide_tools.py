"""Tools with long enums and thousands of parameters, and what a /run ranking them costs.

Writes five manifests to a temporary folder (a plan among ``--options`` names, a number
of seats among twice as many integers, one an integer past a float's range, a list of
tags from the names, a record with ``--parameters`` parameters, each with an example in
its description, and a contract of 60 parameters with descriptions of 15,000
characters), starts a gateway in process on them (as ``fuzz_requests.py`` does),
and sends each request below ``--repeat`` times (dry run). Prints, per request, the
first and the median time and the answer's status. A tool's size must cost a request
about nothing (``routing/enums.py``, ``routing/bounds.py``): before, 80,000 integer
options took 91 s for "book some seats for the show" (``--no-huge``: with the huge
integer, both seat requests were a 500 instead), 10,000 parameters 1.8-4.6 s, and the
60 long descriptions about 1 s.

    python scripts/fuzz_wide_tools.py --options 40000 --parameters 10000
"""

from __future__ import annotations

import json
import random
import statistics
import string
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from fuzz_requests import timed_run


def manifests(count: int, parameters: int, *, huge: bool) -> tuple[list[dict[str, Any]], list[str]]:
    rng = random.Random(3)  # noqa: S311 - option names, not a secret

    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))

    names = list(dict.fromkeys(f"{word()}_{word()}" for _ in range(count)))
    everyday = ["the", "supplier", "contract", "CT-20931", "term", "date", "e.g.", "clause"]
    wordy = " ".join(everyday[i % len(everyday)] for i in range(3_000))[:15_000]

    def tool(tool_id: str, description: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "tool_id": tool_id,
            "name": tool_id.replace("_", " "),
            "description": description,
            "input_schema": {"type": "object", "properties": {name: spec}, "required": [name]},
            "endpoint": {"type": "http", "method": "POST", "url": "http://127.0.0.1:9/x"},
            "permission": "public",
        }

    return [
        tool("change_plan", "Change a customer's mobile plan to another plan", "plan",
             {"type": "string", "enum": names, "description": "The new plan"}),
        tool("book_seats", "Book a number of seats for a show", "seats",
             {"type": "integer", "enum": [*([10**400] if huge else []), *range(2 * count)],
              "description": "How many seats"}),
        tool("tag_ticket", "Add tags to a support ticket", "tags",
             {"type": "array", "items": {"type": "string", "enum": names},
              "description": "Tags to add"}),
        {**tool("update_record", "Update a customer record with new values", "field_0", {}),
         "input_schema": {"type": "object", "required": ["field_0"], "properties": {
             f"field_{i}": {"type": "string", "description": f"e.g. AB-{i:05d}"}
             for i in range(parameters)}}},
        {**tool("amend_contract", "Amend the terms of a supplier contract", "term_0", {}),
         "input_schema": {"type": "object", "required": ["term_0"], "properties": {
             f"term_{i}": {"type": "string", "description": wordy}
             for i in range(60)}}},
    ], names  # fmt: skip


def main(
    options: Annotated[int, typer.Option(help="Names in the long enums.")] = 40_000,
    repeat: Annotated[int, typer.Option(help="Times each request is sent.")] = 5,
    parameters: Annotated[int, typer.Option(help="Parameters of the wide record.")] = 10_000,
    huge: Annotated[
        bool, typer.Option(help="An integer past a float's range among the seats.")
    ] = True,
) -> None:
    tools, names = manifests(options, parameters, huge=huge)
    requests = [
        "change my plan to " + names[5].replace("_", " "),
        "switch my plan please, something cheaper with more data",
        "book 777 seats for the show tonight",
        "book some seats for the show",
        "tag the ticket with " + ", ".join(n.replace("_", " ") for n in names[10:26]),
        "add tags to the ticket",
        "update the customer record, the account is AB-00003",
        "update the customer record please",
        "amend the supplier contract CT-20931, the term ends next March",
        "amend the supplier contract please",
    ]
    with tempfile.TemporaryDirectory() as folder:
        for tool in tools:
            text = json.dumps(tool)
            (Path(folder) / f"{tool['tool_id']}.json").write_text(text)
            print(f"{tool['tool_id']}: {len(text):,} bytes")
        sent = [text for text in requests for _ in range(repeat)]
        results = timed_run(sent, Path(folder))
    for n, text in enumerate(requests):
        runs = results[n * repeat : (n + 1) * repeat]
        times = [ms for ms, _, _ in runs]
        statuses = sorted({status for _, status, _ in runs})
        print(
            f"  first {times[0]:8.1f} ms  median {statistics.median(times):8.1f} ms  "
            f"status {statuses}  {text[:50]!r}"
        )
    raise typer.Exit(1 if any(status >= 500 for _, status, _ in results) else 0)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    typer.run(main)
