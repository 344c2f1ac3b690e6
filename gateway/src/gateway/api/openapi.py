"""``POST /tools/import/openapi``: tools from an OpenAPI 3.x document."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api.deps import CallerDep, RuntimeDep, TelemetryDep
from gateway.catalog.egress import EgressPolicy
from gateway.executor.transport import create_tool_client
from gateway.openapi.document import Limits
from gateway.openapi.fetch import DocumentFetcher
from gateway.openapi.schemas import OpenApiImportRequest, OpenApiImportResult
from gateway.openapi.service import OpenApiImporter
from gateway.settings import Settings
from gateway.upstreams.urls import UpstreamUrls

router = APIRouter(prefix="/tools", tags=["registry"])


def _limits(settings: Settings) -> Limits:
    return Limits(
        max_bytes=settings.openapi_max_bytes,
        max_depth=settings.openapi_max_depth,
        max_nodes=settings.openapi_max_nodes,
        max_operations=settings.openapi_max_operations,
    )


async def _fetch(url: str, settings: Settings, telemetry: TelemetryDep) -> bytes:
    where = UpstreamUrls.from_settings(
        shop_url=settings.shop_url,
        retriever_url=settings.retriever_url,
        agent_url=settings.agent_url,
        extra=settings.upstream_hosts,
    )(url)
    client = create_tool_client(settings.tool_http_client)
    try:
        fetcher = DocumentFetcher(
            egress=EgressPolicy(
                enforce=settings.auth_mode == "strict", allowlist=settings.egress_allowlist
            ),
            client=client,
            tracer=telemetry.tracer("gateway"),
            max_bytes=settings.openapi_max_bytes,
            timeout_s=settings.openapi_fetch_timeout_s,
        )
        return await fetcher.fetch(where)
    finally:
        await client.aclose()


@router.post(
    "/import/openapi",
    response_model=OpenApiImportResult,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`tool_exists` or `batch_refused`."},
        413: {"description": "`openapi_too_large`, or the body is over MAX_BODY_BYTES."},
        502: {"description": "`openapi_fetch_failed`: `url` could not be read."},
    },
)
async def import_openapi(
    body: OpenApiImportRequest, runtime: RuntimeDep, caller: CallerDep, telemetry: TelemetryDep
) -> OpenApiImportResult:
    """Propose (dry run, the default) or register one tool per operation of an OpenAPI 3.x
    document, sent inline (`document`: an object or JSON/YAML text) or read from `url`.

    Registry admins only. Each operation becomes a manifest: id from `operationId`
    (lower-case, `_` between words, `id_prefix` first; repeats get `_2`, `_3`),
    description from summary and description, `input_schema` from path and query
    parameters and the JSON body's properties (`$ref`s resolved), method and URL
    template from the path and `base_url` (default: the document's first server),
    `idempotent` from the method, `permission`/`scope`/`namespace` from this request.
    What cannot be mapped is listed under `skipped` with a reason; an id already
    registered is skipped (`tool_exists`), never replaced. With `dry_run: false`
    every proposal is registered in one batch (one registry revision).

    A malformed document is a 422 `invalid_openapi` whose `path` is the JSON pointer
    of the problem; a document over the import limits is a 413 `openapi_too_large`;
    a URL refused by the egress rules is a 403 `egress_denied`.
    """
    runtime.auth.require_registry_admin(caller)
    settings = runtime.settings
    if body.url is not None:
        raw: bytes | str | dict[str, object] = await _fetch(body.url, settings, telemetry)
    else:
        assert body.document is not None
        raw = body.document
    importer = OpenApiImporter(
        registry=runtime.registry_service, cache=runtime.registry, limits=_limits(settings)
    )
    return await importer.run(
        body,
        raw,
        source=body.url or "inline",
        document_url=body.url,
        actor=caller.user_id,
    )
