"""The viewer's pages, built from the same models as the JSON API."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from gateway.traces.schemas import SpanNode, TraceList, TraceRead, TraceSummary
from gateway.ui.html import Safe, join, render, tag
from gateway.ui.waterfall import PHASES, SERVICES, walk, waterfall
from reach_common.auth.caller import Caller

FILTERS = ("service", "tool", "caller", "status", "min_duration_ms", "limit")


def page(title: str, body: Safe, viewer: Caller | None) -> Safe:
    who: Safe = Safe("")
    if viewer is not None and viewer.user_id is not None:
        roles = f" ({', '.join(sorted(viewer.roles))})" if viewer.roles else ""
        logout = Safe(
            '<form method="post" action="/ui/logout" class="logout">'
            '<button type="submit">Sign out</button></form>'
        )
        who = join([tag("span", f"{viewer.user_id}{roles}", class_="who"), logout])
    return render("layout.html", title=title, viewer=who, body=body)


def error_box(message: str | None) -> Safe:
    return tag("p", message, class_="error-box", role="alert") if message else Safe("")


def login_page(*, strict: bool, error: str | None = None) -> Safe:
    claim = Safe("")
    if not strict:
        claim = Safe(
            '<fieldset class="claim"><legend>or, in permissive mode, claim an identity</legend>'
            '<label>user id <input name="user_id" maxlength="200"></label>'
            '<label>roles <input name="roles" placeholder="ops, admin" maxlength="500"></label>'
            "</fieldset>"
        )
    body = render("login.html", error=error_box(error), claim=claim)
    return page("Sign in", body, None)


def _status_options(current: str) -> Safe:
    options = [("", "any"), ("ok", "ok"), ("error", "error")]
    return join(
        tag("option", label, value=value, selected=value == current) for value, label in options
    )


def _trace_row(t: TraceSummary) -> Safe:
    link = tag("a", t.trace_id[:12], href=f"/ui/traces/{t.trace_id}", class_="trace-link")
    status = tag("span", t.status, class_=f"status status-{t.status}")
    cells = [
        tag("td", join([link, tag("div", t.started_at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3])])),
        tag(
            "td",
            join(
                [tag("span", t.root_service, class_=f"svc svc-{t.root_service}"), " ", t.root_name]
            ),
        ),
        tag("td", f"{t.duration_ms:.2f} ms", class_="num"),
        tag("td", ", ".join(t.services)),
        tag("td", ", ".join(t.tools), class_="tools"),
        tag("td", ", ".join(t.callers)),
        tag("td", t.span_count, class_="num"),
        tag("td", status),
    ]
    return tag(
        "tr", join(cells), class_="error" if t.status == "error" else None, data_trace_id=t.trace_id
    )


def list_page(
    viewer: Caller, values: Mapping[str, str], result: TraceList | None, error: str | None
) -> Safe:
    """The list page; ``values`` are the filters as typed (shown back in the form)."""
    rows: Safe = Safe("")
    pages: list[Safe] = []
    if result is not None:
        rows = join(_trace_row(t) for t in result.traces)
        if not result.traces:
            rows = Safe('<tr><td colspan="8" class="empty">No traces match.</td></tr>')
        kept = {k: v for k, v in values.items() if k in FILTERS and v}
        if "cursor" in values:
            pages.append(tag("a", "newest", href="/ui/traces?" + urlencode(kept)))
        if result.next_cursor:
            query = urlencode({**kept, "cursor": result.next_cursor})
            pages.append(tag("a", "older →", href=f"/ui/traces?{query}", rel="next"))
    body = render(
        "traces.html",
        **{name: values.get(name, "") for name in FILTERS if name not in ("status", "limit")},
        limit=values.get("limit", "20"),
        status_options=_status_options(values.get("status", "")),
        error=error_box(error),
        rows=rows,
        pages=join(pages, " "),
    )
    return page("Recent traces", body, viewer)


def _candidates(raw: object) -> Safe:
    items = raw if isinstance(raw, list) else []
    rows = []
    for item in items:
        tool, _, rest = str(item).rpartition(":")
        tool, _, score = tool.rpartition(":")
        cells = [tag("td", tool), tag("td", score, class_="num"), tag("td", rest, class_="num")]
        rows.append(tag("tr", join(cells)))
    if not rows:
        return tag("p", "No candidates (cache or session hit).", class_="hint")
    head = Safe("<thead><tr><th>candidate</th><th>score</th><th>confidence</th></tr></thead>")
    return tag("table", join([head, tag("tbody", join(rows))]), class_="candidates")


def _number(value: object) -> object:
    return f"{value:.3f}" if isinstance(value, float) else value


def route_panel(spans: list[SpanNode]) -> Safe:
    """The routing decisions of the trace: the chosen tool, why, and every candidate."""
    panels = []
    for span in spans:
        a = span.attributes
        facts = [
            ("hint", a.get("route.hint", "")),
            ("tool", a.get("route.tool_id", "") or "none"),
            ("confidence", _number(a.get("route.confidence", ""))),
            ("why", a.get("route.why", "")),
        ]
        if "route.failure" in a:
            facts.append(("failure", a["route.failure"]))
        facts_html = join(tag("div", join([tag("dt", k), tag("dd", v)])) for k, v in facts)
        panels.append(
            tag(
                "section",
                join(
                    [
                        tag("h2", "Route decision"),
                        tag("dl", facts_html),
                        _candidates(a.get("route.candidates")),
                    ]
                ),
                class_="route",
                data_span_id=span.span_id,
            )
        )
    return join(panels)


def trace_page(viewer: Caller, trace: TraceRead) -> Safe:
    spans = [node for node, _ in walk(trace.spans)]
    phases = trace.phases.model_dump(by_alias=True)
    chips = join(
        tag("li", join([tag("span", name), tag("b", f"{ms:.2f} ms")]), class_=f"phase-{name}")
        for name, ms in phases.items()
        if ms is not None
    )
    legend = join(
        [tag("span", s, class_=f"key svc-{s}") for s in SERVICES]
        + [tag("span", p, class_=f"key phase-{p}") for p in PHASES.values()]
    )
    body = render(
        "trace.html",
        trace_id=trace.trace_id,
        duration=f"{trace.duration_ms:.2f} ms",
        services=", ".join(trace.services),
        span_count=trace.span_count,
        started=min(s.start for s in spans).isoformat(),
        phases=chips,
        route=route_panel([s for s in spans if s.name == "gateway.route"]),
        legend=legend,
        waterfall=waterfall(trace),
    )
    return page(f"Trace {trace.trace_id[:12]}", body, viewer)
