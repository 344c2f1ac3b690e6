"""The waterfall of one trace: a row per span, bars to scale, details on click.

Each bar is an SVG ``rect`` whose ``x`` and ``width`` are percentages of the
trace's duration, so the page draws to scale with no script and no inline style
(the page's Content-Security-Policy allows neither). A row is a ``<details>``:
clicking it shows the span's status, attributes and events.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

from gateway.traces.schemas import SpanNode, TraceRead
from gateway.ui.html import Safe, esc, join, tag

PHASES = {
    "gateway.route": "route",
    "gateway.auth": "auth",
    "gateway.validate": "validate",
    "gateway.rate_limit": "rate-limit",
    "gateway.execute": "execute",
    "gateway.dns": "dns",
    "gateway.connect": "connect",
    "gateway.response": "response",
}
SERVICES = ("agent", "gateway", "retriever", "shop")
_MIN_WIDTH = 0.15  # percent: a 0 ms span stays visible


def walk(nodes: list[SpanNode], depth: int = 0) -> Iterator[tuple[SpanNode, int]]:
    for node in nodes:
        yield node, depth
        yield from walk(node.children, depth + 1)


def colour(span: SpanNode) -> str:
    """The bar's CSS class: the gateway phase it times, else its service."""
    phase = PHASES.get(span.name)
    if phase is not None:
        return f"phase-{phase}"
    return f"svc-{span.service}" if span.service in SERVICES else "svc-other"


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _details(span: SpanNode) -> Safe:
    rows = [
        tag("tr", join([tag("th", "status"), tag("td", span.status)])),
        tag("tr", join([tag("th", "kind"), tag("td", span.kind)])),
        tag("tr", join([tag("th", "span id"), tag("td", span.span_id)])),
        tag("tr", join([tag("th", "start"), tag("td", span.start.isoformat())])),
    ]
    if span.status_message:
        rows.append(tag("tr", join([tag("th", "message"), tag("td", span.status_message)])))
    for key in sorted(span.attributes):
        value = _value(span.attributes[key])
        rows.append(tag("tr", join([tag("th", key), tag("td", value)]), class_="attr"))
    for event in span.events:
        text = f"{event.get('at', '')} {_value(event.get('attributes', {}))}"
        rows.append(tag("tr", join([tag("th", f"event {event.get('name', '')}"), tag("td", text)])))
    return tag("table", join(rows), class_="attrs")


def _bar(span: SpanNode, start: datetime, total_ms: float) -> Safe:
    offset_ms = (span.start - start).total_seconds() * 1000
    x = min(max(offset_ms / total_ms * 100, 0.0), 100.0)
    width = min(max(span.duration_ms / total_ms * 100, _MIN_WIDTH), 100.0 - x)
    rect = Safe(
        f'<rect class="bar {esc(colour(span))}" x="{x:.4f}%" y="3" '
        f'width="{max(width, 0.0):.4f}%" height="14" rx="2"></rect>'
    )
    return Safe(f'<svg class="track" role="img" aria-hidden="true">{rect}</svg>')


def span_row(span: SpanNode, depth: int, start: datetime, total_ms: float) -> Safe:
    failed = span.status == "error"
    label = join(
        [
            tag("span", span.service, class_=f"svc svc-{span.service}"),
            tag("span", span.name, class_="name"),
            tag("span", "error", class_="flag") if failed else Safe(""),
        ]
    )
    summary = join(
        [
            tag("span", label, class_=f"label depth-{min(depth, 12)}"),
            tag("span", f"{span.duration_ms:.2f} ms", class_="ms"),
            _bar(span, start, total_ms),
        ]
    )
    return tag(
        "details",
        join([tag("summary", summary), _details(span)]),
        class_="span error" if failed else "span",
        data_span_id=span.span_id,
        data_parent_id=span.parent_span_id,
        data_service=span.service,
        data_depth=depth,
        data_duration_ms=f"{span.duration_ms:.3f}",
        data_offset_ms=f"{(span.start - start).total_seconds() * 1000:.3f}",
        open=failed,
    )


def waterfall(trace: TraceRead) -> Safe:
    nodes = list(walk(trace.spans))
    start = min(node.start for node, _ in nodes)
    total_ms = max(trace.duration_ms, 0.001)
    ticks = join(
        tag("span", f"{total_ms * i / 4:.1f} ms", class_=f"tick tick-{i}") for i in range(5)
    )
    axis = tag(
        "div",
        join(
            [
                tag("span", "span", class_="label"),
                tag("span", ""),
                tag("span", ticks, class_="axis"),
            ]
        ),
        class_="axis-row",
    )
    rows = join(span_row(node, depth, start, total_ms) for node, depth in nodes)
    return tag("div", join([axis, rows]), class_="waterfall", data_total_ms=f"{total_ms:.3f}")
