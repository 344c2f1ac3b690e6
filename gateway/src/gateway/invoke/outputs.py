"""What a tool's output must be before a caller gets it: valid, and within its budget.

0. **Sendable.** First of all, an output no JSON answer can carry (NaN or an infinite number,
   a lone UTF-16 surrogate, nesting that exhausts the stack) is 502
   ``tool_error``: the tool ran, but its output cannot be passed on. (The HTTP and MCP
   executors already read such JSON as text; this catches what any executor returns.)
1. **Schema.** A manifest's ``output_schema`` is compiled once per revision
   (``ToolSpec.output_validator``). A successful output that breaks it is 502
   ``invalid_tool_output`` naming the first problem's JSON path, or, with
   ``output_schema_mode: warn``, passed on with the mismatch recorded on the span and
   the audit row.
2. **Budget.** The output is measured as compact UTF-8 JSON against the tool's budget
   (``max_output_bytes`` / ``max_output_tokens``). Within it, the output passes
   unchanged (the cost is one ``json.dumps``; no encode when 4 bytes a character still
   fit). Over it, the caller gets a typed envelope, never JSON cut in the middle:
   ``truncated: true``, ``total_bytes``, a ``preview`` that is valid JSON and keeps the
   envelope within the budget, and a ``handle`` to the whole output, kept in the
   retriever for this caller (``rag_retrieve`` with ``handle`` searches it). When it
   cannot be kept (retriever down, anonymous caller), ``handle`` is null and ``note``
   says why.
3. **Untrusted text.** What the caller receives is scanned for text aimed at the model
   (``gateway.catalog.untrusted.flags_for_output``); flags go on the span
   (``tool.untrusted_flags``) and the audit row. A signal, not a refusal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import islice
from typing import Any

from jsonschema.exceptions import ValidationError, best_match
from opentelemetry import trace

from gateway.catalog.spec import ToolSpec
from gateway.catalog.untrusted import flags_for_output
from gateway.executor.errors import InvalidToolOutput, ToolFailed
from gateway.executor.retriever_client import OutputNotStored, RetrieverClient
from reach_common.auth.caller import Caller
from reach_common.storable import LONE_SURROGATE

TRUNCATED_REASON = "output_truncated"
SCHEMA_REASON = "invalid_tool_output"
RETRIEVE_TOOL = "rag_retrieve"
_ERRORS_READ = 50
_CUT = "…"
# (list items kept, string characters kept, depth shown): tried in order until it fits.
_LADDER = (
    (100, 400, 6),
    (50, 300, 5),
    (20, 200, 4),
    (10, 120, 3),
    (5, 80, 3),
    (3, 60, 2),
    (2, 40, 2),
    (1, 30, 1),
)


@dataclass(frozen=True)
class CheckedOutput:
    """The output to answer with, and the audit reason of what was done to it (None:
    passed unchanged)."""

    output: Any
    audit_reason: str | None = None
    flags: tuple[str, ...] = ()  # untrusted-text flags of ``output``


# One encoder for every call: json.dumps with options builds a new encoder each time.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
_STRICT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)


def encode(output: Any) -> str:
    """``output`` as compact JSON text, as it is measured against the budget."""
    return _ENCODER.encode(output)


def over_budget(text: str, budget: int) -> bytes | None:
    """The UTF-8 bytes of ``text`` if they exceed ``budget``; None (without encoding
    when the characters alone settle it) if they fit."""
    if len(text) * 4 <= budget:
        return None
    if len(text) > budget:
        return text.encode()
    encoded = text.encode()
    return encoded if len(encoded) > budget else None


def _shrink(value: Any, items: int, chars: int, depth: int) -> Any:
    """``value`` with lists cut to ``items`` entries, strings to ``chars`` characters,
    and containers below ``depth`` summarised; every cut is marked."""
    if isinstance(value, str):
        if len(value) <= chars:
            return value
        return f"{value[:chars]}{_CUT} [{len(value) - chars} more characters]"
    if isinstance(value, list):
        if depth <= 0:
            return f"[array of {len(value)} items]"
        shown = [_shrink(v, items, chars, depth - 1) for v in value[:items]]
        if len(value) > items:
            shown.append(f"{_CUT} {len(value) - items} more items")
        return shown
    if isinstance(value, dict):
        if depth <= 0:
            return f"{{object with {len(value)} keys}}"
        keys = max(items, 8)
        kept = {str(k): _shrink(v, items, chars, depth - 1) for k, v in islice(value.items(), keys)}
        if len(value) > keys:
            kept[_CUT] = f"{len(value) - keys} more keys"
        return kept
    return value


def preview(output: Any, limit: int) -> Any:
    """A valid-JSON picture of ``output`` whose compact encoding fits in ``limit`` bytes:
    the first items of lists, long strings cut with a marker, deep parts summarised."""
    for items, chars, depth in _LADDER:
        shown = _shrink(output, items, chars, depth)
        if len(encode(shown).encode()) <= limit:
            return shown
    summary = _shrink(output, 0, 0, 0)
    return summary if len(encode(summary).encode()) <= limit else "(output too large to preview)"


def sendable_text(spec: ToolSpec, output: Any) -> str:
    """``encode(output)``, or 502 ``tool_error`` when no JSON answer can carry it: the
    encode refuses NaN and infinities (and nesting deep enough to exhaust the stack); a
    regex finds lone surrogates in non-ASCII text. (The executors' decoders already read
    JSON nested deeper than ``MAX_OUTPUT_DEPTH`` as text.)"""
    try:
        text = _STRICT.encode(output)
    except (ValueError, RecursionError):
        text = None
    if text is not None and (text.isascii() or LONE_SURROGATE.search(text) is None):
        return text
    raise ToolFailed(
        f"Tool {spec.tool_id!r} answered, but its output cannot be sent as JSON: it holds "
        "NaN or an infinite number, a lone UTF-16 surrogate, or nests too deeply.",
        counts_as_failure=False,
    )


def _valid(spec: ToolSpec, output: Any) -> bool:
    """``output_validator.is_valid``; an output too deep for the (recursive) validator is
    502 ``tool_error`` rather than a crash."""
    assert spec.output_validator is not None
    try:
        return bool(spec.output_validator.is_valid(output))
    except RecursionError:
        raise ToolFailed(
            f"Tool {spec.tool_id!r} answered output nested too deeply to check against its "
            "output_schema.",
            counts_as_failure=False,
        ) from None


def first_problem(spec: ToolSpec, output: Any) -> tuple[str, str]:
    """The JSON path and message of the most relevant problem (jsonschema's best match)."""
    assert spec.output_validator is not None
    errors = list(islice(spec.output_validator.iter_errors(output), _ERRORS_READ))
    error: ValidationError | None = best_match(errors)
    if error is None:  # pragma: no cover - is_valid said otherwise
        return "$", "does not match output_schema"
    message = error.message if len(error.message) <= 300 else error.message[:300] + _CUT
    return error.json_path, message


def flag_untrusted(output: Any) -> tuple[str, ...]:
    """The untrusted-text flags of what the caller receives, recorded on the current span."""
    flags = tuple(flags_for_output(output))
    if flags:
        span = trace.get_current_span()
        span.set_attribute("tool.untrusted_flags", flags)
        span.add_event("gateway.untrusted_output", {"flags": flags})
    return flags


class OutputGuard:
    """Checks every successful output of the invoke path (``/tools/{id}/invoke``, ``/run``)."""

    def __init__(self, store: RetrieverClient | None, tracer: trace.Tracer) -> None:
        self._store = store
        self._tracer = tracer

    async def check(self, spec: ToolSpec, output: Any, caller: Caller) -> CheckedOutput:
        text = sendable_text(spec, output)
        reason = None
        if spec.output_validator is not None and not _valid(spec, output):
            reason = self._schema_mismatch(spec, output)
        encoded = over_budget(text, spec.max_output_bytes)
        if encoded is None:
            return CheckedOutput(output, reason, flag_untrusted(output))
        envelope = await self._truncate(spec, output, encoded, caller)
        return CheckedOutput(envelope, reason or TRUNCATED_REASON, flag_untrusted(envelope))

    def _schema_mismatch(self, spec: ToolSpec, output: Any) -> str:
        path, problem = first_problem(spec, output)
        span = trace.get_current_span()
        span.add_event(
            "gateway.output_schema_mismatch",
            {"path": path, "problem": problem, "mode": spec.output_schema_mode},
        )
        if spec.output_schema_mode == "enforce":
            raise InvalidToolOutput(
                f"Tool {spec.tool_id!r} answered, but its output does not match its "
                f"output_schema at {path}: {problem}.",
                path=path,
                problem=problem,
            )
        span.set_attribute("tool.output_schema_mismatch", path)
        return SCHEMA_REASON

    async def _truncate(
        self, spec: ToolSpec, output: Any, encoded: bytes, caller: Caller
    ) -> dict[str, Any]:
        budget = spec.max_output_bytes
        with self._tracer.start_as_current_span(
            "gateway.output_budget",
            attributes={"tool.output_bytes": len(encoded), "tool.output_budget_bytes": budget},
        ) as span:
            handle, expires_at, note = await self._keep(spec, encoded, caller)
            span.set_attribute("tool.output_stored", handle is not None)
            envelope: dict[str, Any] = {
                "truncated": True,
                "total_bytes": len(encoded),
                "budget_bytes": budget,
                "handle": handle,
                "expires_at": expires_at,
                "note": note,
                "preview": None,
            }
            if handle is not None:
                envelope["retrieve_with"] = {
                    "tool_id": RETRIEVE_TOOL,
                    "arguments": {"handle": handle, "query": "<what you are looking for>"},
                }
            room = budget - len(encode(envelope).encode()) - 16
            envelope["preview"] = preview(output, max(room, 2))
        return envelope

    async def _keep(
        self, spec: ToolSpec, encoded: bytes, caller: Caller
    ) -> tuple[str | None, str | None, str]:
        """Store the whole output for ``caller``: (handle, expires_at, note)."""
        size = f"The output is {len(encoded)} bytes, over this tool's budget of "
        size += f"{spec.max_output_bytes} bytes; `preview` shows its beginning as valid JSON."
        if self._store is None:
            return None, None, size + " The full output was not kept (no retriever configured)."
        if caller.user_id is None:
            return (
                None,
                None,
                size + (" The full output was not kept: it is kept only for an identified caller."),
            )
        try:
            stored = await self._store.store_output(caller.user_id, spec.tool_id, encoded)
        except OutputNotStored as exc:
            trace.get_current_span().set_attribute("tool.output_store_error", exc.reason)
            return None, None, f"{size} The full output was not kept ({exc.reason}): {exc.message}"
        return (
            stored.handle,
            stored.expires_at,
            f"{size} The full output is kept until expires_at: call {RETRIEVE_TOOL} with this "
            "handle and a query to read the parts you need.",
        )
