"""``http`` tools: build the request from the arguments, send it, retry only when safe.

- ``{param}`` path parameters are percent-encoded with nothing kept safe, so
  ``../admin`` becomes ``..%2Fadmin`` and stays inside its segment; a value
  that would be a dot segment or nothing (``.``, ``..``, empty) is refused with
  422 ``invalid_arguments`` before anything is sent;
- the host is resolved and checked against the egress policy once
  (``resolver.py``) and the connection goes to an address that was checked;
- the other arguments go to the query string for GET/HEAD/DELETE and to a
  JSON body otherwise;
- idempotent tools are retried (tenacity: exponential backoff with jitter)
  on connection errors, 5xx and 429, honouring ``Retry-After``, and never past
  the call's deadline; other tools get one attempt, on a fresh connection, and
  an ``Idempotency-Key``;
- the response is read up to ``max_response_bytes`` and no further.

Each attempt is a client span (``traceparent`` goes upstream, the URL on the
span is the manifest's template, no argument values) with ``gateway.connect`` and
``gateway.response`` phase spans; ``gateway.dns`` comes from the resolver.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential_jitter

from gateway.catalog.spec import HttpTarget, ToolSpec
from gateway.executor.credentials import OutboundCredentials
from gateway.executor.errors import TRANSPORT_ERRORS, InvalidArguments, ToolFailed, call_error
from gateway.executor.resolver import HostResolver
from gateway.executor.transport import (
    Address,
    RawResponse,
    Timing,
    ToolHttpClient,
    UpstreamConnectError,
)
from reach_common.storable import LONE_SURROGATE
from reach_common.telemetry import record_leaf

_ERROR_BODY_LIMIT = 2000
_USER_AGENT = "reach-gateway"
ON_BEHALF_HEADER = "X-Reach-On-Behalf-Of"

acting_for: ContextVar[str | None] = ContextVar("acting_for", default=None)
"""The verified caller a call runs for, set by the invoke path around the call. Sent
(percent-encoded) in ``X-Reach-On-Behalf-Of`` only to tools whose manifest says
``forward_caller`` (the retriever's stored tool outputs are read this way)."""


@dataclass(frozen=True)
class HttpResult:
    output: Any
    status_code: int


@dataclass
class CallStats:
    """Filled in while a call runs, read by the audit even when the call fails."""

    attempts: int = 0
    upstream_status: int | None = None


class RetryableStatus(Exception):
    """A 5xx or 429 answer from an idempotent tool: worth another attempt."""

    def __init__(self, status_code: int, body: Any, retry_after_s: float | None) -> None:
        super().__init__(status_code)
        self.status_code = status_code
        self.body = body
        self.retry_after_s = retry_after_s


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


# Path values that percent-encoding leaves meaningful: `/users/{id}/orders` with
# id=".." would be `/users/../orders`, which servers and proxies resolve to `/orders`.
_NOT_A_SEGMENT = frozenset({"", ".", ".."})


def _segment(tool_id: str, name: str, arguments: dict[str, Any]) -> str:
    value = arguments.get(name)
    text = "" if value is None else _text(value)
    if text not in _NOT_A_SEGMENT:
        return quote(text, safe="")
    if value is None:
        problem = f"a value is required: it fills the URL path segment {{{name}}}"
    else:
        problem = (
            f"{text!r} cannot fill the URL path segment {{{name}}}: empty, '.' and '..' "
            "would change which resource is called"
        )
    raise InvalidArguments(
        f"Arguments for tool {tool_id!r} are invalid: {name}: {problem}. Fix it and call again.",
        errors=[{"field": name, "problem": problem}],
    )


def build_url(
    template: str,
    arguments: dict[str, Any],
    names: tuple[str, ...],
    query: bool,
    *,
    tool_id: str = "",
) -> str:
    """The URL for one call: path parameters percent-encoded, the rest as query if asked.

    Raises ``InvalidArguments`` (422) for a path value that is empty, ``.`` or ``..``.
    """
    url = template.format_map({name: _segment(tool_id, name, arguments) for name in names})
    if not query:
        return url
    pairs: list[tuple[str, str]] = []
    for name, value in arguments.items():
        if name in names or value is None:
            continue
        values = value if isinstance(value, list) else [value]
        pairs.extend((name, _text(v)) for v in values)
    return f"{url}{'&' if '?' in url else '?'}{urlencode(pairs)}" if pairs else url


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpExecutor:
    def __init__(
        self,
        *,
        client: ToolHttpClient,
        credentials: OutboundCredentials,
        resolver: HostResolver,
        resolve_url: Callable[[str], str],
        tracer: trace.Tracer,
    ) -> None:
        self._client = client
        self._credentials = credentials
        self._resolver = resolver
        self._resolve_url = resolve_url
        self._tracer = tracer
        # Token endpoints go through the same resolve-check-connect as tool calls.
        credentials.guard_token_endpoints(resolver, tracer)

    async def call(
        self,
        spec: ToolSpec,
        target: HttpTarget,
        arguments: dict[str, Any],
        *,
        deadline: float,
        idempotency_key: str | None,
        stats: CallStats,
    ) -> HttpResult:
        """Run the call; the caller enforces ``deadline`` (loop time) around it."""
        loop = asyncio.get_running_loop()
        template = self._resolve_url(target.url)
        url = build_url(
            template, arguments, target.path_params, target.sends_query, tool_id=spec.tool_id
        )
        body = None
        headers = [("Accept", "application/json"), ("User-Agent", _USER_AGENT)]
        if not target.sends_query:
            rest = {k: v for k, v in arguments.items() if k not in target.path_params}
            body = json.dumps(rest, separators=(",", ":")).encode()
            headers.append(("Content-Type", "application/json"))
        host = urlsplit(url).hostname or ""
        # The credential first: a secret the operator has not provided is the answer to
        # give (an operator's task), before any lookup of the tool's host.
        auth = await self._credentials.headers(target.auth, target.url, deadline - loop.time())
        addresses = await self._resolver.resolve(host, self._tracer)
        headers.extend(auth.items())
        if not spec.idempotent and idempotency_key:
            headers.append(("Idempotency-Key", idempotency_key))
        if target.forward_caller and (user_id := acting_for.get()) is not None:
            headers.append((ON_BEHALF_HEADER, quote(user_id, safe="")))

        async def attempt() -> HttpResult:
            stats.attempts += 1
            result = await self._attempt(spec, target, url, addresses, headers, body)
            stats.upstream_status = result.status_code
            return result

        try:
            if not spec.idempotent or spec.retry.max_retries == 0:
                return await attempt()
            # The retry machinery is built only for a call whose first attempt needs it.
            first = await _first(attempt)
            if isinstance(first, HttpResult):
                return first
            return await self._with_retries(spec, _replaying(first, attempt), deadline)
        except RetryableStatus as exc:
            stats.upstream_status = exc.status_code
            raise upstream_error(spec.tool_id, exc.status_code, exc.body) from None
        except TRANSPORT_ERRORS as exc:  # connect errors only once retries are spent
            raise call_error(exc, spec, host=host) from exc

    async def _with_retries(
        self, spec: ToolSpec, attempt: Callable[[], Awaitable[HttpResult]], deadline: float
    ) -> HttpResult:
        loop = asyncio.get_running_loop()
        policy = spec.retry
        backoff = wait_exponential_jitter(
            multiplier=policy.backoff_ms / 1000,
            max=policy.max_backoff_ms / 1000,
            jitter=policy.backoff_ms / 1000,
        )

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome else None
            if isinstance(failure, RetryableStatus) and failure.retry_after_s is not None:
                return failure.retry_after_s
            return float(backoff(state))

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number > policy.max_retries:
                return True
            # No attempt that could not finish before the deadline.
            return loop.time() + (state.upcoming_sleep or 0.0) >= deadline

        def before_sleep(state: RetryCallState) -> None:
            failure = state.outcome.exception() if state.outcome else None
            cause = (
                f"HTTP {failure.status_code}"
                if isinstance(failure, RetryableStatus)
                else type(failure).__name__
            )
            trace.get_current_span().add_event(
                "retry",
                {
                    "attempt": state.attempt_number,
                    "sleep_ms": round((state.upcoming_sleep or 0.0) * 1000, 1),
                    "cause": cause,
                },
            )

        retrying = AsyncRetrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception_type((RetryableStatus, UpstreamConnectError)),
            before_sleep=before_sleep,
            reraise=True,
        )
        result: HttpResult | None = None
        async for state in retrying:
            with state:
                result = await attempt()
        assert result is not None
        return result

    async def _attempt(
        self,
        spec: ToolSpec,
        target: HttpTarget,
        url: str,
        addresses: Sequence[Address],
        headers: list[tuple[str, str]],
        body: bytes | None,
    ) -> HttpResult:
        timing = Timing()
        with self._tracer.start_as_current_span(
            target.method,
            kind=SpanKind.CLIENT,
            # The manifest's URL template, never the filled-in URL: path and query values
            # are the caller's data and do not belong on a span.
            attributes={"http.request.method": target.method, "url.template": target.url},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            try:
                response = await self._client.request(
                    target.method,
                    url,
                    [*headers, *carrier.items()],
                    body,
                    max_bytes=spec.max_response_bytes,
                    timing=timing,
                    connect_to=addresses,  # checked by the resolver: no second DNS answer
                    reuse=spec.idempotent,  # a non-idempotent request never meets a stale socket
                )
            except TRANSPORT_ERRORS as exc:  # mapped in ``call``, once retries are decided
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                raise
            finally:
                self._phase_spans(timing)
            span.set_attribute("http.response.status_code", response.status)
            span.set_attribute("network.peer.address", response.address)
            if response.status >= 500:
                span.set_status(Status(StatusCode.ERROR))
        if response.status == 401:
            await self._credentials.forget_token(target.auth)
        return _interpret(spec, response)

    def _phase_spans(self, timing: Timing) -> None:
        if timing.connect_start is not None and timing.connect_end is not None:
            record_leaf(self._tracer, "gateway.connect", timing.connect_start, timing.connect_end)
        if timing.request_start is not None:
            end = timing.response_end if timing.response_end is not None else time.time_ns()
            record_leaf(self._tracer, "gateway.response", timing.request_start, end)


async def _first(attempt: Callable[[], Awaitable[HttpResult]]) -> HttpResult | Exception:
    """One attempt: its result, or the failure that is worth retrying."""
    try:
        return await attempt()
    except (RetryableStatus, UpstreamConnectError) as exc:
        return exc


def _replaying(
    failure: Exception, attempt: Callable[[], Awaitable[HttpResult]]
) -> Callable[[], Awaitable[HttpResult]]:
    """``attempt`` whose first call raises ``failure`` (the first attempt's, already made)."""
    failed: Exception | None = failure

    async def again() -> HttpResult:
        nonlocal failed
        if failed is not None:
            error, failed = failed, None
            raise error
        return await attempt()

    return again


def _interpret(spec: ToolSpec, response: RawResponse) -> HttpResult:
    status = response.status
    payload = _decode(response)
    if 200 <= status < 300:
        return HttpResult(payload, status)
    retryable = spec.idempotent and spec.retry.max_retries > 0
    if retryable and (status >= 500 or status == 429):
        raise RetryableStatus(
            status, payload, retry_after_seconds(response.headers.get("retry-after"))
        )
    raise upstream_error(spec.tool_id, status, payload)


def upstream_error(tool_id: str, status: int, payload: Any) -> ToolFailed:
    detail = ""
    if isinstance(payload, dict):
        detail = str(payload.get("message") or payload.get("detail") or "")
    elif isinstance(payload, str):
        detail = payload[:200]
    message = f"Tool {tool_id!r} answered HTTP {status}"
    message += f": {detail}" if detail else "."
    if isinstance(payload, str):
        payload = payload[:_ERROR_BODY_LIMIT]
    return ToolFailed(
        message,
        upstream_status=status,
        upstream=payload,
        counts_as_failure=status >= 500 or status == 429,
    )


MAX_OUTPUT_DEPTH = 100
"""Deepest nesting of objects and arrays kept from a tool's JSON answer. Deeper JSON,
like JSON with ``NaN`` or ``Infinity`` or a lone UTF-16 surrogate escape (which Python
reads but no JSON answer can carry), is not decoded: the body is passed on as text, as
any body that is not JSON."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def loads_json(text: str | bytes) -> Any:
    """A tool's JSON answer as Python; ValueError when it is not JSON a caller can be
    sent: not JSON at all, ``NaN``/``Infinity``, or nested deeper than
    :data:`MAX_OUTPUT_DEPTH` (however deep: the parser's own stack running out is caught)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValueError("the JSON is nested too deeply") from exc
    if isinstance(text, bytes):
        brackets = text.count(b"[") + text.count(b"{")
        texts = _SURROGATE_ESCAPE_BYTES.search(text) is not None
    else:
        brackets = text.count("[") + text.count("{")
        texts = _SURROGATE_ESCAPE.search(text) is not None
    # Fewer brackets than the limit cannot nest deeper, and only a \uD800-\uDFFF escape
    # makes a lone surrogate (UTF-8 cannot encode it): only then is the value walked.
    if brackets > MAX_OUTPUT_DEPTH and _too_deep(value, MAX_OUTPUT_DEPTH):
        raise ValueError(f"the JSON is nested deeper than {MAX_OUTPUT_DEPTH} levels")
    if texts and not sendable(value):
        raise ValueError("the JSON holds a lone UTF-16 surrogate")
    return value


def _too_deep(value: Any, max_depth: int) -> bool:
    """Whether ``value`` nests deeper than ``max_depth`` levels: only containers are
    walked (iteratively)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > max_depth:
            return True
        children = container.values() if isinstance(container, dict) else container
        stack.extend([(c, depth + 1) for c in children if isinstance(c, dict | list)])
    return False


def sendable(value: Any, max_depth: int = MAX_OUTPUT_DEPTH, *, texts: bool = True) -> bool:
    """Whether ``value`` nests at most ``max_depth`` levels and holds only finite numbers
    (and, with ``texts``, no string or key with a lone surrogate), so a JSON answer can
    carry it. Iterative: no depth exhausts the stack."""
    if not isinstance(value, dict | list):
        return not _unsendable_scalar(value, texts=texts)
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > max_depth:
            return False
        if isinstance(container, dict):
            if texts and any(LONE_SURROGATE.search(str(k)) for k in container):
                return False
            children: Iterable[Any] = container.values()
        else:
            children = container
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif _unsendable_scalar(child, texts=texts):
                return False
    return True


def _unsendable_scalar(item: Any, *, texts: bool) -> bool:
    if isinstance(item, float):
        return not math.isfinite(item)
    return texts and isinstance(item, str) and LONE_SURROGATE.search(item) is not None


def _decode(response: RawResponse) -> Any:
    if not response.body:
        return None
    content_type = response.headers.get("content-type", "")
    if "json" in content_type:
        try:
            payload = loads_json(response.body)
        except ValueError:
            pass
        else:
            # An error's body goes into the caller's envelope as it is: walk it whole (an
            # error path), so 1e999 (read as infinity) is text too. A success's numbers
            # are checked when its output is encoded (``gateway.invoke.outputs``).
            if 200 <= response.status < 300 or sendable(payload):
                return payload
    charset = "utf-8"
    if "charset=" in content_type:
        charset = content_type.split("charset=", 1)[1].split(";")[0].strip() or "utf-8"
    try:
        return response.body.decode(charset, errors="replace")
    except LookupError:
        return response.body.decode("utf-8", errors="replace")
