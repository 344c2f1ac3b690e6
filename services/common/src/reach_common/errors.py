"""One error root for every Reach service.

Every failure a client can see is a :class:`ReachError` with a machine-readable
``reason`` and a human ``message``. :func:`install_error_handlers` renders it as

    {"reason": "...", "message": "...", "trace_id": "<32 hex>", ...details}

FastAPI's own validation errors and unknown paths are mapped to the same shape
here, once, so no handler raises a bare ``HTTPException``. Unexpected
exceptions become a JSON 500 in ``middleware.UnhandledErrorMiddleware``, so no
stack trace ever reaches a client.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from opentelemetry import trace
from starlette.exceptions import HTTPException as StarletteHTTPException


class ReachError(Exception):
    """Base of every error a Reach service reports to its client."""

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


class NotFound(ReachError):
    status_code = 404
    reason = "not_found"


class Conflict(ReachError):
    status_code = 409
    reason = "conflict"


class Unprocessable(ReachError):
    status_code = 422
    reason = "invalid_request"


class ServiceUnavailable(ReachError):
    status_code = 503
    reason = "unavailable"


def current_trace_id() -> str | None:
    """The OpenTelemetry trace id of the current span as 32 hex characters."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else None


def error_body(reason: str, message: str, **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"reason": reason, "message": message}
    body.update(details)
    body["trace_id"] = current_trace_id()
    return body


def _describe_validation(exc: RequestValidationError) -> tuple[str, str, list[dict[str, Any]]]:
    errors = exc.errors()
    if any(err.get("type") == "json_invalid" for err in errors):
        first = next(err for err in errors if err.get("type") == "json_invalid")
        detail = (first.get("ctx") or {}).get("error", "invalid JSON")
        return "malformed_json", f"The request body is not valid JSON: {detail}.", []
    fields = []
    parts = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p != "body"]
        where = ".".join(loc) or "body"
        fields.append({"field": where, "problem": err.get("msg", "invalid")})
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid_request", "The request is invalid. " + "; ".join(parts), fields


def install_error_handlers(app: FastAPI) -> None:
    """Render every error as JSON with ``reason``, ``message`` and ``trace_id``."""

    @app.exception_handler(ReachError)
    async def _reach_error(_: Request, exc: ReachError) -> JSONResponse:
        return JSONResponse(
            error_body(exc.reason, exc.message, **exc.details),
            status_code=exc.status_code,
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        reason, message, fields = _describe_validation(exc)
        status = 400 if reason == "malformed_json" else 422
        extra = {"errors": fields} if fields else {}
        return JSONResponse(error_body(reason, message, **extra), status_code=status)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        reasons = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
        reason = reasons.get(exc.status_code, "http_error")
        if exc.status_code == 404:
            message = f"No route for {request.method} {request.url.path}."
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}."
        else:
            message = str(exc.detail)
        return JSONResponse(
            error_body(reason, message), status_code=exc.status_code, headers=exc.headers
        )
