"""Run an OpenAPI import: read and check the document, propose, then show or register.

The document work (parsing, validation, conversion) is CPU-bound on an
untrusted input, so it runs in a worker thread, bounded by the document limits;
the event loop keeps serving. Each proposal is compiled exactly as
``POST /tools/register`` would compile it (schema, strict-mode permission,
egress, secret bindings); one that would be refused, or whose id is taken, is
listed as skipped with the reason. A real run registers every proposal in one
transaction and one registry revision: all of them, or (on a race with another
writer) none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from gateway.openapi import convert, document
from gateway.openapi.convert import ImportOptions, Proposal, Skipped
from gateway.openapi.document import Limits
from gateway.openapi.schemas import (
    OpenApiImportRequest,
    OpenApiImportResult,
    ProposedTool,
    SkippedOperation,
)
from gateway.registry.cache import RegistryCache
from gateway.registry.service import RegistryService
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class _Plan:
    title: str | None
    version: str
    found: int
    proposals: list[Proposal]
    skipped: list[Skipped]


def _plan(raw: bytes | str | Mapping[str, Any], options: ImportOptions, limits: Limits) -> _Plan:
    doc = document.load(raw, limits)
    document.check_refs(doc)
    document.validate(doc)
    found, proposals, skipped = convert.propose(doc, options)
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    title = str(info.get("title"))[:200] if info.get("title") else None
    return _Plan(title, str(doc["openapi"]), found, proposals, skipped)


def options_of(request: OpenApiImportRequest, document_url: str | None) -> ImportOptions:
    return ImportOptions(
        namespace=request.namespace,
        permission=request.permission,
        scope=tuple(request.scope),
        base_url=request.base_url,
        id_prefix=request.id_prefix,
        operations=frozenset(request.operations) if request.operations is not None else None,
        methods=frozenset(request.methods) if request.methods is not None else None,
        approval_for_writes=request.approval_for_writes,
        output_schema=request.output_schema,
        document_url=document_url,
    )


class OpenApiImporter:
    def __init__(self, *, registry: RegistryService, cache: RegistryCache, limits: Limits) -> None:
        self._registry = registry
        self._cache = cache
        self._limits = limits

    def _admissible(self, plan: _Plan) -> tuple[list[Proposal], list[Skipped]]:
        accepted: list[Proposal] = []
        skipped = list(plan.skipped)
        for proposal in plan.proposals:
            refusal: tuple[str, str] | None = None
            if self._cache.get(proposal.tool_id) is not None:
                refusal = (
                    "tool_exists",
                    f"tool {proposal.tool_id!r} is already registered; an import never "
                    "replaces a tool (PUT /tools/{id} does)",
                )
            else:
                try:
                    self._registry.compile(proposal.manifest)
                except ReachError as exc:
                    refusal = (exc.reason, exc.message)
            if refusal is None:
                accepted.append(proposal)
            else:
                skipped.append(
                    Skipped(proposal.method, proposal.path, proposal.operation_id, *refusal)
                )
        return accepted, skipped

    async def run(
        self,
        request: OpenApiImportRequest,
        raw: bytes | str | Mapping[str, Any],
        *,
        source: str,
        document_url: str | None,
        actor: str | None,
    ) -> OpenApiImportResult:
        options = options_of(request, document_url)
        plan = await asyncio.to_thread(_plan, raw, options, self._limits)
        accepted, skipped = self._admissible(plan)
        registered, revision = 0, None
        if not request.dry_run and accepted:
            changes = await self._registry.register_many(
                [p.manifest for p in accepted], actor=actor, action="imported"
            )
            registered, revision = len(changes), changes[0].revision
            log.info("openapi_imported", source=source, tools=registered, revision=revision)
        return OpenApiImportResult(
            dry_run=request.dry_run,
            source=source,
            title=plan.title,
            openapi_version=plan.version,
            operations_found=plan.found,
            proposed=len(accepted),
            registered=registered,
            revision=revision,
            tools=[_proposed(p) for p in accepted],
            skipped=[SkippedOperation(**s.__dict__) for s in skipped],
        )


def _proposed(proposal: Proposal) -> ProposedTool:
    manifest = proposal.manifest
    return ProposedTool(
        tool_id=proposal.tool_id,
        operation_id=proposal.operation_id,
        method=proposal.method,
        path=proposal.path,
        url=manifest["endpoint"]["url"],
        idempotent=manifest["idempotent"],
        requires_approval=bool(manifest.get("requires_approval")),
        flags=proposal.flags,
        notes=proposal.notes,
        manifest=manifest,
    )
