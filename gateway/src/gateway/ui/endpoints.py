"""The trace viewer: ``/ui/traces`` (recent traces) and ``/ui/traces/{id}`` (a waterfall).

Server-rendered HTML with one small script and one stylesheet, both served from
here, so the viewer works offline. It shows exactly what ``GET /traces`` and
``GET /traces/{id}`` show the same caller. Who the caller is: a signed-in session
(``POST /ui/login``, see ``gateway.ui.sessions``), else a credential header (a
proxy in front may add one), else in permissive mode nobody — a page then asks to
sign in and shows no trace.
"""

from __future__ import annotations

import asyncio
import re
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep, TelemetryDep
from gateway.traces.repository import trace_spans
from gateway.traces.schemas import TraceQuery
from gateway.traces.service import build_trace, find_traces, may_read
from gateway.ui import pages
from gateway.ui.html import Safe, static_file
from gateway.ui.sessions import (
    COOKIE,
    COOKIE_PATH,
    close_session,
    key_id_of,
    open_session,
    session_caller,
)
from reach_common.auth.authenticator import AuthenticatorDep
from reach_common.auth.caller import Caller, UserContext
from reach_common.auth.errors import InvalidCredential
from reach_common.errors import NotFound

router = APIRouter(prefix="/ui", include_in_schema=False)

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_STATIC = {"viewer.css": "text/css; charset=utf-8", "viewer.js": "text/javascript; charset=utf-8"}
_HEADERS = {
    # No inline script or style, nothing from another origin, no framing.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_MAX_FORM_BYTES = 16_384


def html(body: Safe, status: int = 200) -> HTMLResponse:
    return HTMLResponse(str(body), status_code=status, headers=_HEADERS)


async def get_viewer(
    request: Request, runtime: RuntimeDep, session: SessionDep, caller: CallerDep
) -> Caller:
    """The signed-in caller, else the caller of the request's own headers."""
    strict = runtime.auth.mode == "strict"
    token = request.cookies.get(COOKIE)
    signed_in = await session_caller(runtime.redis, session, token, strict=strict)
    return signed_in or caller


ViewerDep = Annotated[Caller, Depends(get_viewer)]


def _same_origin(request: Request) -> bool:
    """A sign-in or sign-out must come from a page of this gateway, not another site.

    Browsers say where a request comes from in ``Sec-Fetch-Site`` (which no page can
    forge); older ones only in ``Origin``. A client that sends neither is no browser,
    so no other site can be behind it.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def _login_page(runtime: RuntimeDep, error: str | None, status: int) -> HTMLResponse:
    return html(pages.login_page(strict=runtime.auth.mode == "strict", error=error), status)


@router.get("")
async def home() -> RedirectResponse:
    return RedirectResponse("/ui/traces", status_code=303)


@router.get("/login")
async def login_form(runtime: RuntimeDep) -> HTMLResponse:
    return _login_page(runtime, None, 200)


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    if len(body) > _MAX_FORM_BYTES or not content_type.startswith(
        "application/x-www-form-urlencoded"
    ):
        return {}
    fields = parse_qs(body.decode("utf-8", "replace"), max_num_fields=10)
    return {k: v[-1].strip() for k, v in fields.items()}


async def _signed_in_caller(
    form: dict[str, str], authenticator: AuthenticatorDep, strict: bool
) -> tuple[Caller, str | None]:
    """The caller the form proves (and the API key's id); raises InvalidCredential."""
    credential = form.get("credential", "")
    if credential:
        caller = await authenticator.resolve({"authorization": f"Bearer {credential}"})
        return caller, key_id_of(credential) if caller.via == "api_key" else None
    if not strict and form.get("user_id"):
        roles = [r.strip() for r in form.get("roles", "").split(",") if r.strip()]
        try:
            claimed = UserContext(user_id=form["user_id"], roles=roles)
        except ValidationError as exc:
            raise InvalidCredential("The user id or roles are too long.") from exc
        return Caller(claimed.user_id, frozenset(claimed.roles), "user_context"), None
    raise InvalidCredential("Paste an API key or a JWT.")


@router.post("/login")
async def login(request: Request, runtime: RuntimeDep, authenticator: AuthenticatorDep) -> Response:
    if not _same_origin(request):
        return _login_page(runtime, "Sign in from this gateway's own page.", 403)
    strict = runtime.auth.mode == "strict"
    try:
        caller, key_id = await _signed_in_caller(await _form(request), authenticator, strict)
    except InvalidCredential as exc:
        return _login_page(runtime, exc.message, 401)
    ttl = runtime.settings.ui_session_ttl_s
    token = await open_session(runtime.redis, caller, key_id, ttl)
    response = RedirectResponse("/ui/traces", status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=ttl,
        path=COOKIE_PATH,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
async def logout(request: Request, runtime: RuntimeDep) -> Response:
    if not _same_origin(request):
        return _login_page(runtime, "Sign out from this gateway's own page.", 403)
    await close_session(runtime.redis, request.cookies.get(COOKIE))
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="lax")
    return response


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'query'}: {e['msg']}" for e in exc.errors()
    )


@router.get("/traces")
async def traces_page(
    request: Request,
    viewer: ViewerDep,
    runtime: RuntimeDep,
    session: SessionDep,
    telemetry: TelemetryDep,
) -> HTMLResponse:
    if not viewer.authenticated:
        return _login_page(runtime, None, 401)
    values = {k: v.strip() for k, v in request.query_params.items() if v.strip()}
    try:
        query = TraceQuery.model_validate(values)
    except ValidationError as exc:
        return html(pages.list_page(viewer, values, None, _problems(exc)), 422)
    await asyncio.to_thread(telemetry.flush, 2000)
    ops = runtime.auth.is_ops(viewer)
    result = await find_traces(session, viewer, query, ops=ops)
    return html(pages.list_page(viewer, values, result, None))


@router.get("/traces/{trace_id}")
async def trace_page(
    trace_id: str,
    viewer: ViewerDep,
    runtime: RuntimeDep,
    session: SessionDep,
    telemetry: TelemetryDep,
) -> HTMLResponse:
    if not viewer.authenticated:
        return _login_page(runtime, None, 401)
    trace_id = trace_id.lower()
    rows = []
    if _TRACE_ID.match(trace_id):
        await asyncio.to_thread(telemetry.flush, 2000)
        rows = await trace_spans(session, trace_id)
    if not rows or not may_read(viewer, rows, ops=runtime.auth.is_ops(viewer)):
        body = pages.error_box("No trace with that id is recorded for you.")
        return html(pages.page("Trace not found", body, viewer), 404)
    return html(pages.trace_page(viewer, build_trace(trace_id, rows)))


@router.get("/static/{name}")
async def static(name: str) -> Response:
    media_type = _STATIC.get(name)
    if media_type is None:
        raise NotFound(f"No viewer file {name!r}.")
    headers = {"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"}
    return Response(static_file(name), media_type=media_type, headers=headers)
