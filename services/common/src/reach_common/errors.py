"""One error root for every Reach service, and the one function that renders it.

Every failure a client can see is a :class:`ReachError`: an HTTP status, a
machine-readable ``reason``, a human ``message``, and optional ``details``
(extra body fields) and response ``headers``. Domain code raises a subclass;
:func:`error_body` is the only place an error becomes JSON, in every service:

- an HTTP error (:func:`install_error_handlers` and the middlewares):
  ``{"reason", "message", ...details, "trace_id"}``;
- a tool-call envelope (the gateway's ``POST /tools/{id}/invoke`` and
  ``POST /run``, a queued task's result): ``success: false``, the call's
  fields, ``error: {reason, message, ...details}``, and ``reason``,
  ``message``, ``trace_id`` at the top level like every other error body;
- the agent's SSE ``error`` event, and the tool error a model reads.

FastAPI's validation errors and Starlette's HTTP errors (unknown path, wrong
method) become a ``ReachError`` here, so no handler raises a bare
``HTTPException``; anything unexpected becomes ``InternalError`` in
``middleware.UnhandledErrorMiddleware``, so no stack trace reaches a client.
A client of another Reach service reads its error bodies back into a
``ReachError`` with :meth:`RemoteError.from_body`.

The tree, module by module (class, status, reason; a base in parentheses when
it lives in another module)::

    reach_common.errors
    ReachError                              400 bad_request         the root
    ├── BadRequest                          400 bad_request
    │   ├── MalformedJson                   400 malformed_json      the body is not JSON
    │   └── InvalidHost                     400 invalid_host        Host not in ALLOWED_HOSTS
    ├── NotFound                            404 not_found           also an unknown path
    ├── MethodNotAllowed                    405 method_not_allowed
    ├── Conflict                            409 conflict
    ├── PayloadTooLarge                     413 payload_too_large   over MAX_BODY_BYTES
    ├── Unprocessable                       422 invalid_request     the body does not fit
    ├── InternalError                       500 internal_error      anything unexpected
    ├── RemoteError                         502 remote_error        another service's error,
    │                                                               its status and reason kept
    └── ServiceUnavailable                  503 unavailable
        └── DependencyUnavailable           503 dependency_unavailable  Redis or Postgres
                                                                    down; Retry-After

    reach_common.auth.errors
    Unauthenticated (ReachError)            401 unauthenticated
    └── InvalidCredential                   401 invalid_credential
    InsufficientPermission (ReachError)     403 insufficient_permission

    reach_common.llm.errors (what each means: that module's docstring)
    LLMError (ReachError)                   502 llm_error
    ├── LLMConfigError                      503 llm_not_configured
    ├── LLMAuthError                        502 llm_auth_failed
    ├── LLMRequestError                     502 llm_bad_request
    ├── LLMResponseError                    502 llm_bad_response
    └── LLMRetryableError                   503 llm_unavailable
        ├── LLMConnectionError              503 llm_unreachable
        ├── LLMRateLimitError               429 llm_rate_limited
        └── LLMOverloadedError              503 llm_overloaded

    gateway.catalog.egress
    EgressDenied (ReachError)               403 egress_denied
    gateway.catalog.secrets
    SecretNotBound (ReachError)             403 secret_not_bound
    SecretUnavailable (ReachError)          503 secret_unavailable
    gateway.registry.errors
    ToolNotFound (NotFound)                 404 tool_not_found
    ToolExists (Conflict)                   409 tool_exists
    StaleRevision (Conflict)                409 stale_revision
    InvalidManifest (Unprocessable)         422 invalid_manifest    or permission_required
    ToolIdMismatch (Unprocessable)          422 tool_id_mismatch
    VersionNotFound (NotFound)              404 version_not_found
    BatchRefused (Unprocessable)            422 batch_refused       409 if only tool_exists
    BatchTooLarge (Unprocessable)           422 batch_too_large
    gateway.openapi.errors
    InvalidOpenApi (Unprocessable)          422 invalid_openapi     names the JSON pointer
    BaseUrlRequired (Unprocessable)         422 base_url_required
    OpenApiTooLarge (ReachError)            413 openapi_too_large
    OpenApiFetchFailed (ReachError)         502 openapi_fetch_failed
    gateway.executor.errors
    InvalidArguments (Unprocessable)        422 invalid_arguments
    InvalidToolOutput (ReachError)          502 invalid_tool_output its output_schema broken
    ToolCallError (ReachError)              a base: counts_as_failure feeds the breaker
    ├── ToolFailed                          502 tool_error
    ├── ToolUnavailable                     503 tool_unavailable
    └── ToolTimeout                         504 tool_timeout
    gateway.executor.mcp
    ToolDefinitionChanged (Conflict)        409 tool_definition_changed  held back
    gateway.mcp.federation.errors
    McpServerNotFound (NotFound)            404 mcp_server_not_found
    McpServerExists (Conflict)              409 mcp_server_exists
    McpCommandNotAllowed (ReachError)       403 mcp_command_not_allowed
    McpUpstreamError (ReachError)           502 mcp_upstream_error
    NothingToAccept (Conflict)              409 nothing_to_accept
    gateway.executor.tasks
    QueueUnavailable (ServiceUnavailable)   503 queue_unavailable
    gateway.ratelimit.service
    RateLimited (ReachError)                429 rate_limited
    gateway.executor.callbacks
    InvalidCallbackUrl (Unprocessable)      422 invalid_callback_url
    CallbacksNotConfigured (ServiceUnavailable)
                                            503 callbacks_not_configured
    gateway.approvals.errors
    ApprovalRequired (ReachError)           403 approval_required   no caller to bind it to
    ApprovalPending (ReachError)            202 approval_pending    not a failure: it waits
    ApprovalNotFound (NotFound)             404 approval_not_found
    ApprovalNotPending (Conflict)           409 approval_not_pending
    ApprovalExpired (Conflict)              409 approval_expired
    ApprovalDenied (ReachError)             403 approval_denied
    ApprovalArgumentsChanged (Conflict)     409 approval_arguments_changed
    ApprovalToolMismatch (Conflict)         409 approval_tool_mismatch
    ApprovalManifestChanged (Conflict)      409 approval_manifest_changed
    ApproverRoleRequired (ReachError)       403 approver_role_required
    SelfApprovalForbidden (ReachError)      403 self_approval_forbidden
    OutcomeUnknown (ReachError)             502 outcome_unknown     not run again
    gateway.mcp.virtual.errors
    VirtualServerNotFound (NotFound)        404 virtual_server_not_found
    VirtualServerExists (Conflict)          409 virtual_server_exists
    gateway.routing.errors
    RouteFailed (ReachError)                a base: carries the route so far
    ├── NoMatchingTool (NotFound)           404 no_matching_tool
    └── RoutedArgumentsInvalid (InvalidArguments)
                                            422 invalid_arguments
    RouterBusy (ServiceUnavailable)         503 router_busy         long requests queued

    agent.sessions.errors
    SessionNotFound (NotFound)              404 session_not_found
    MemoryNotFound (NotFound)               404 memory_not_found
    SessionForbidden (ReachError)           403 session_forbidden
    SessionBusy (Conflict)                  409 session_busy
    MessageIdReused (Conflict)              409 message_id_reused
    TurnSuperseded (Conflict)               409 turn_superseded
    agent.clients.gateway
    GatewayRefused (RemoteError)            502 gateway_error       the gateway's error body
    BadGatewayReply (ReachError)            502 bad_gateway_reply
    GatewayUnavailable (ServiceUnavailable) 503 gateway_unavailable
    └── GatewayTimeout                      504 gateway_timeout
    agent.react.errors (results the model reads, never HTTP answers)
    UnknownTool (NotFound)                  404 unknown_tool
    ConfirmationRequired (ReachError)       403 confirmation_required
    UnreadableArguments (Unprocessable)     422 invalid_arguments

    retriever.ingest.errors
    EmptyText (Unprocessable)               422 empty_text
    InvalidSource (Unprocessable)           422 invalid_source
    InvalidText (Unprocessable)             422 invalid_text
    TextTooLarge (ReachError)               413 text_too_large
    MetadataTooLarge (ReachError)           413 metadata_too_large
    retriever.search.errors
    EmptyQuery (Unprocessable)              422 empty_query
    UnknownMode (Unprocessable)             422 unknown_mode
    UnknownRewrite (Unprocessable)          422 unknown_rewrite
    TopKOutOfRange (Unprocessable)          422 top_k_out_of_range
    InvalidSources (Unprocessable)          422 invalid_sources
    UnknownSources (NotFound)               404 source_not_found
    LLMUnavailable (BadRequest)             400 llm_unavailable
    QueryTooLong (ReachError)               413 query_too_long
    InvalidQuery (Unprocessable)            422 invalid_query       a lone surrogate
    retriever.handles.errors
    HandleNotFound (NotFound)               404 handle_not_found    also another user's
    HandleSearchUnsupported (Unprocessable) 422 invalid_handle_search
    TooManyHandles (ReachError)             429 too_many_handles
    InvalidHandleInput (Unprocessable)      422 invalid_handle_input  unstorable output
    retriever.sources.errors
    SourceNotFound (NotFound)               404 source_not_found

    shop.errors
    SkuNotFound (NotFound)                  404 sku_not_found
    OrderNotFound (NotFound)                404 order_not_found
    InsufficientStock (Conflict)            409 insufficient_stock
    IdempotencyKeyReused (Conflict)         409 idempotency_key_reused
    IdempotencyKeyPending (Conflict)        409 idempotency_key_pending
    OrderCapacityReached (Conflict)         409 order_capacity_reached

Reasons raised without a class of their own (``reason=`` on a base):
``trace_not_found`` (a ``NotFound``, ``gateway.api.traces``),
``task_not_found`` (a ``NotFound``, ``gateway.api.tasks``),
``invalid_if_match`` (a ``BadRequest``, ``gateway.api.tools``),
``invalid_request`` (400, unreadable ``X-User-*`` headers,
``reach_common.auth.authenticator``) and ``http_error`` (any other
Starlette HTTP error, here).
"""

from __future__ import annotations

from typing import Any, Self

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from opentelemetry import trace
from starlette.exceptions import HTTPException as StarletteHTTPException

from reach_common.storable import encodable


class ReachError(Exception):
    """Base of every error a Reach service reports to its client.

    ``details`` (the extra keyword arguments) become extra fields of the body;
    ``headers`` go on the response (``Retry-After``, ``WWW-Authenticate``).
    """

    status_code: int = 400
    reason: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        status_code: int | None = None,
        headers: dict[str, str] | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        if status_code is not None:
            self.status_code = status_code
        self.headers = headers or {}
        self.details = details


class BadRequest(ReachError):
    status_code = 400
    reason = "bad_request"


class MalformedJson(BadRequest):
    reason = "malformed_json"


class InvalidHost(BadRequest):
    reason = "invalid_host"


class NotFound(ReachError):
    status_code = 404
    reason = "not_found"


class MethodNotAllowed(ReachError):
    status_code = 405
    reason = "method_not_allowed"


class Conflict(ReachError):
    status_code = 409
    reason = "conflict"


class PayloadTooLarge(ReachError):
    status_code = 413
    reason = "payload_too_large"


class Unprocessable(ReachError):
    status_code = 422
    reason = "invalid_request"


class InternalError(ReachError):
    """Something unexpected failed; the traceback went to the log and the span only."""

    status_code = 500
    reason = "internal_error"


class ServiceUnavailable(ReachError):
    status_code = 503
    reason = "unavailable"


class DependencyUnavailable(ServiceUnavailable):
    """Redis or Postgres did not answer (``reach_common.outages``): try again shortly."""

    reason = "dependency_unavailable"

    def __init__(self, dependency: str, retry_after_s: int = 1) -> None:
        super().__init__(
            f"{dependency.capitalize()} is unavailable right now; try again in {retry_after_s} s.",
            headers={"Retry-After": str(retry_after_s)},
            dependency=dependency,
        )


class RemoteError(ReachError):
    """An error another Reach service answered with, passed on as it came.

    A client of a Reach service (the agent's gateway client) reads the answer
    with :meth:`from_body` and holds a ``ReachError`` like any other, so it is
    logged, raised and rendered (:func:`error_body`) the same way.
    """

    status_code = 502
    reason = "remote_error"

    @classmethod
    def from_body(cls, body: object, status_code: int) -> Self:
        """The error in ``body``, from the ``reason`` and ``message`` at its top level (every
        Reach error body has them). A body without them, such as a proxy's HTML page,
        gives this class's ``reason`` and ``HTTP <status>``."""
        if isinstance(body, dict) and isinstance(body.get("reason"), str):
            message = body.get("message")
            return cls(
                message if isinstance(message, str) else "",
                reason=body["reason"],
                status_code=status_code,
            )
        return cls(f"HTTP {status_code}", status_code=status_code)


def current_trace_id() -> str | None:
    """The OpenTelemetry trace id of the current span as 32 hex characters."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else None


def error_body(
    exc: ReachError, *, nested: bool = False, trace_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    """The JSON body of ``exc``: the one function that turns an error into an envelope.

    Plain (every HTTP error, an SSE ``error`` event, a tool error shown to a model)::

        {"reason", "message", **exc.details, **extra, "trace_id"}

    ``nested=True`` is the tool-call envelope (``POST /tools/{id}/invoke``,
    ``POST /run``, a queued task's result), where ``extra`` carries the call's
    fields (``success``, ``tool_id``, ...) and the details stay with the error::

        {**extra, "error": {"reason", "message", **exc.details}, "reason", "message", "trace_id"}

    ``trace_id`` defaults to the current span's.
    """
    summary = {"reason": exc.reason, "message": exc.message}
    if nested:
        body = {**extra, "error": {**summary, **exc.details}, **summary}
    else:
        body = {**summary, **exc.details, **extra}
    body["trace_id"] = trace_id or current_trace_id()
    # An error quoting a bad input must still encode as UTF-8 (half a surrogate pair: 500).
    quoted: dict[str, Any] = encodable(body)
    return quoted


def error_response(exc: ReachError) -> JSONResponse:
    """``exc`` as an HTTP response: its status, its headers, :func:`error_body`."""
    return JSONResponse(error_body(exc), status_code=exc.status_code, headers=exc.headers)


def _validation_error(exc: RequestValidationError) -> ReachError:
    errors = exc.errors()
    if any(err.get("type") == "json_invalid" for err in errors):
        first = next(err for err in errors if err.get("type") == "json_invalid")
        detail = (first.get("ctx") or {}).get("error", "invalid JSON")
        return MalformedJson(f"The request body is not valid JSON: {detail}.")
    fields = []
    parts = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p != "body"]
        where = ".".join(loc) or "body"
        fields.append({"field": where, "problem": err.get("msg", "invalid")})
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return Unprocessable("The request is invalid. " + "; ".join(parts), errors=fields)


def _http_error(request: Request, exc: StarletteHTTPException) -> ReachError:
    where = f"{request.method} {request.url.path}"
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        return NotFound(f"No route for {where}.", headers=headers)
    if exc.status_code == 405:
        return MethodNotAllowed(
            f"{request.method} is not allowed on {request.url.path}.", headers=headers
        )
    if exc.status_code == 413:
        return PayloadTooLarge(str(exc.detail), headers=headers)
    return ReachError(
        str(exc.detail), reason="http_error", status_code=exc.status_code, headers=headers
    )


def install_error_handlers(app: FastAPI) -> None:
    """Render every error as JSON with ``reason``, ``message`` and ``trace_id``.

    FastAPI's validation errors and Starlette's HTTP errors (unknown path, wrong
    method) become ``ReachError`` first, so all of them leave through
    :func:`error_response`.
    """

    @app.exception_handler(ReachError)
    async def _reach_error(_: Request, exc: ReachError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(_validation_error(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(_http_error(request, exc))
