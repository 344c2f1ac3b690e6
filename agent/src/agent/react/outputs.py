"""Tool results that came back truncated: read the part the user's question needs.

When a tool's output is over its budget, the gateway answers an envelope (``truncated:
true``, ``total_bytes``, a valid-JSON ``preview`` and a ``handle`` to the whole output,
kept in the retriever for this caller). The agent does not let the model mistake the
preview for the whole: it calls ``rag_retrieve`` with the handle and the user's question
at once, and the model reads the preview, the passages found, and a note saying what
they are (with the handle, to search again). Offline mode does the same and answers
with the records that best match the question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from agent.clients.schemas import ToolOutcome
from agent.react.tools import ToolResult, render

RETRIEVE_TOOL = "rag_retrieve"
QUERY_MAX_CHARS = 2000  # rag_retrieve's input_schema
PASSAGES = 5
_WORD = re.compile(r"[\w.-]{2,}")

Retrieve = Callable[[dict[str, Any]], Awaitable[ToolOutcome]]


def truncated_handle(result: Any) -> str | None:
    """The handle of a truncated tool result, or None for any other result."""
    if isinstance(result, dict) and result.get("truncated") is True:
        handle = result.get("handle")
        return handle if isinstance(handle, str) and handle else None
    return None


def retrieve_arguments(handle: str, question: str) -> dict[str, Any]:
    return {"query": question[:QUERY_MAX_CHARS] or "summary", "handle": handle, "top_k": PASSAGES}


def passages(outcome: ToolOutcome) -> list[str]:
    """The chunk texts ``rag_retrieve`` answered, best first."""
    output = outcome.output if outcome.success else None
    chunks = output.get("chunks") if isinstance(output, dict) else None
    return [
        c["text"] for c in chunks or [] if isinstance(c, dict) and isinstance(c.get("text"), str)
    ]


def preview_note(envelope: dict[str, Any], found: int | None) -> str:
    """What the model (or user) is told the result is."""
    note = (
        f"This tool's output was {envelope.get('total_bytes')} bytes, over its budget of "
        f"{envelope.get('budget_bytes')} bytes. `preview` is only the beginning of it, NOT the "
        "whole output."
    )
    handle = envelope.get("handle")
    if handle and found is not None:
        note += (
            f" The whole output is kept as handle {handle}; `retrieved` holds the {found} "
            f"passage(s) of it that best match the user's question. Call {RETRIEVE_TOOL} with "
            "this handle and another query to read other parts."
        )
    elif handle:
        note += f" Call {RETRIEVE_TOOL} with handle {handle} and a query to read other parts."
    return note


async def follow_handles(
    results: Sequence[ToolResult], question: str, retrieve: Retrieve, limit: int
) -> list[ToolResult]:
    """Each truncated result with a handle, completed with the passages of the whole
    output that match ``question``; other results unchanged."""
    completed: list[ToolResult] = []
    for result in results:
        handle = truncated_handle(result.result)
        if handle is None or result.message.is_error:
            completed.append(result)
            continue
        outcome = await retrieve(retrieve_arguments(handle, question))
        found = passages(outcome)
        envelope = dict(result.result)
        shown = {
            "note": preview_note(envelope, len(found) if outcome.success else None),
            **envelope,
            "retrieved": found,
        }
        if not outcome.success and outcome.error is not None:
            shown["retrieved_error"] = {"reason": outcome.error.reason}
        message = replace(result.message, content=render(shown, limit))
        completed.append(replace(result, message=message, result=shown))
    return completed


def best_records(texts: Sequence[str], question: str, count: int = 3) -> list[str]:
    """The lines (one record each) of ``texts`` that share the rarest words with
    ``question``: what offline mode answers with."""
    lines = [line for text in texts for line in text.splitlines() if line.strip()]
    words = {w.strip(".-") for w in _WORD.findall(question.lower())} - {""}
    if not lines or not words:
        return lines[:count]
    lowered = [line.lower() for line in lines]
    present = {w: sum(1 for line in lowered if w in line) for w in words}
    weight = {w: 1 / n for w, n in present.items() if n}
    scores = [sum(v for w, v in weight.items() if w in line) for line in lowered]
    best = sorted(range(len(lines)), key=lambda i: (-scores[i], i))[:count]
    return [lines[i] for i in best if scores[i] > 0]


def offline_reply(envelope: dict[str, Any], outcome: ToolOutcome | None, question: str) -> str:
    """The sentence offline mode adds to a truncated result: what was found for the user."""
    size = (
        f"Its output was too large to show whole ({envelope.get('total_bytes')} bytes, over the "
        f"budget of {envelope.get('budget_bytes')})"
    )
    if outcome is None:
        return f"{size}, and it could not be kept: {envelope.get('note', '')} " + (
            "Preview: " + json.dumps(envelope.get("preview"), ensure_ascii=False)[:600]
        )
    if not outcome.success:
        reason = outcome.error.reason if outcome.error else "tool_error"
        return f"{size}; it was kept as {envelope.get('handle')}, but reading it failed ({reason})."
    records = best_records(passages(outcome), question)
    kept = f"it was kept as {envelope.get('handle')}"
    if not records:
        return f"{size}; {kept}, and nothing in it matches the question."
    shown = "; ".join(r if len(r) <= 400 else r[:400] + "…" for r in records)
    return f"{size}, so {kept} and searched for your question: {shown}"
