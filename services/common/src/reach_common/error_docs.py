"""Every error answer in a service's OpenAPI document, with its schema.

A route declares the errors of its own (``responses={409: {"description":
"`session_busy`..."}}``); :func:`document_errors` adds the ones the shared
shell gives every route, and the body schema of each (:class:`ErrorBody`, what
:func:`reach_common.errors.error_body` builds), so a client or a fuzzer can
check every answer against the document:

- 422 ``invalid_request`` for a route that takes parameters or a body (in place
  of FastAPI's own validation schema, which Reach never sends);
- 400 ``malformed_json`` and 413 ``payload_too_large`` for a route with a body;
- 401 ``unauthenticated`` / ``invalid_credential`` and 400 ``invalid_request``
  (unreadable ``X-User-*`` headers) for a route that reads its caller;
- 400 ``invalid_request`` for a route with path or query parameters: a NUL character
  in either (``BodyLimitMiddleware``);
- 404 ``not_found`` for a route with path parameters: a value the router cannot
  match (one holding ``/``) finds no route.

An error a route declares with a body model of its own (the tool-call envelope)
may be either: its schema becomes ``anyOf`` that model and :class:`ErrorBody`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel, ConfigDict, Field

from reach_common.auth.authenticator import get_authenticator, get_caller

ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_FASTAPI_VALIDATION = "#/components/schemas/HTTPValidationError"
_AUTH_DEPENDENCIES = (get_caller, get_authenticator)


class ErrorBody(BaseModel):
    """The body of every error answer; some carry more fields (``errors``, the tool-call
    envelope's ``success`` and ``error``, ...)."""

    model_config = ConfigDict(extra="allow")

    reason: str = Field(description="What went wrong, for programs: `invalid_request`, ...")
    message: str = Field(description="What went wrong, for people.")
    trace_id: str | None = Field(None, description="The request's trace: GET /traces/{id}.")


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    yield dependant
    for sub in dependant.dependencies:
        yield from _dependants(sub)


def _shell_errors(route: Any) -> dict[str, str]:
    """The error codes the shell adds to ``route``, with their descriptions."""
    tree = list(_dependants(route.dependant))
    has_body = route.body_field is not None
    has_params = has_body or any(
        d.path_params or d.query_params or d.header_params or d.cookie_params for d in tree
    )
    codes: dict[str, str] = {}
    bad: list[str] = []  # what a 400 may say
    if has_body:
        bad.append("`malformed_json`: the body is not JSON")
        codes["413"] = "`payload_too_large`: the body is over MAX_BODY_BYTES."
    if any(d.call in _AUTH_DEPENDENCIES for d in tree):
        codes["401"] = "`unauthenticated` (strict mode) or `invalid_credential`."
        bad.append("`invalid_request`: unreadable `X-User-Id` / `X-User-Roles` headers")
    if any(d.path_params or d.query_params for d in tree):
        bad.append("`invalid_request`: a NUL character in the path or query string")
    if bad:
        codes["400"] = "; or ".join(bad) + "."
    if any(d.path_params for d in tree):
        codes["404"] = "`not_found`: no route for this path."
    if has_params:
        codes["422"] = "`invalid_request`: a parameter or the body is invalid (`errors`)."
    return codes


def _error_content(response: dict[str, Any]) -> dict[str, Any]:
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if not schema or schema.get("$ref") in (_FASTAPI_VALIDATION, ERROR_REF["$ref"]):
        return {"application/json": {"schema": ERROR_REF}}
    return {"application/json": {"schema": {"anyOf": [schema, ERROR_REF]}}}


def _document_operation(operation: dict[str, Any], shell: dict[str, str]) -> None:
    responses = operation.setdefault("responses", {})
    for code, description in shell.items():
        declared = responses.get(code)
        if declared is None or declared.get("description") == "Validation Error":
            responses[code] = {"description": description}
    for code, response in responses.items():
        if code[0] in "45" and code.isdigit():
            content = response.get("content", {})
            if set(content) - {"application/json"}:
                continue  # declared in another media type on purpose
            response["content"] = _error_content(response)


def _drop_unused_validation_schemas(document: dict[str, Any]) -> None:
    schemas = document.get("components", {}).get("schemas", {})
    if _FASTAPI_VALIDATION not in json.dumps(document.get("paths", {})):
        schemas.pop("HTTPValidationError", None)
        if '"#/components/schemas/ValidationError"' not in json.dumps(schemas):
            schemas.pop("ValidationError", None)


def _api_routes(app: FastAPI) -> Iterator[Any]:
    """Every operation of ``app`` as FastAPI's OpenAPI generator sees it (included
    routers flattened: path, methods, body and dependencies)."""
    for context in iter_route_contexts(app.routes):
        if isinstance(context.original_route, APIRoute) and context.include_in_schema:
            yield context


def add_error_responses(app: FastAPI, document: dict[str, Any]) -> None:
    """Declare the shell's errors, and the :class:`ErrorBody` schema, on every operation."""
    components = document.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorBody"] = ErrorBody.model_json_schema()
    for route in _api_routes(app):
        path = document.get("paths", {}).get(route.path_format, {})
        shell = _shell_errors(route)
        for method in route.methods:
            operation = path.get(method.lower())
            if operation is not None:
                _document_operation(operation, shell)
    _drop_unused_validation_schemas(document)


def document_errors(app: FastAPI) -> None:
    """Make ``app.openapi()`` declare every error answer (see the module docstring)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            add_error_responses(app, build())
        assert app.openapi_schema is not None
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
