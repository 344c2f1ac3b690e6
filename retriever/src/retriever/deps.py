"""Request dependencies: the retriever's long-lived objects, from the lifespan state, and
who is calling.

The caller comes from the shared auth kit (an API key or JWT; in permissive mode also
the claimed ``X-User-Id`` / ``X-User-Roles``). Reading the index needs an authenticated
caller in strict mode and nothing in permissive mode; changing it (ingest, delete) needs
one of ``RETRIEVER_WRITER_ROLES`` in both modes, because what is ingested is what the
agent's model reads.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from reach_common.auth.authenticator import AuthenticatorDep, CallerDep
from reach_common.auth.caller import Caller
from reach_common.auth.errors import InsufficientPermission, Unauthenticated
from reach_common.embeddings import Embedder
from reach_common.llm.types import LLMProvider
from retriever.handles.service import HandleStore
from retriever.ingest.service import Ingestor
from retriever.search.service import Searcher
from retriever.settings import Settings


def get_settings(request: Request) -> Settings:
    settings: Settings = request.state.settings
    return settings


def get_ingestor(request: Request) -> Ingestor:
    ingestor: Ingestor = request.state.ingestor
    return ingestor


def get_searcher(request: Request) -> Searcher:
    searcher: Searcher = request.state.searcher
    return searcher


def get_handle_store(request: Request) -> HandleStore:
    store: HandleStore = request.state.handle_store
    return store


def get_embedder(request: Request) -> Embedder:
    embedder: Embedder = request.state.embedder
    return embedder


def get_provider(request: Request) -> LLMProvider | None:
    provider: LLMProvider | None = request.state.provider
    return provider


def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    sessionmaker: async_sessionmaker[AsyncSession] = request.state.sessionmaker
    return sessionmaker


SettingsDep = Annotated[Settings, Depends(get_settings)]
IngestorDep = Annotated[Ingestor, Depends(get_ingestor)]
SearcherDep = Annotated[Searcher, Depends(get_searcher)]
HandleStoreDep = Annotated[HandleStore, Depends(get_handle_store)]
SessionmakerDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
EmbedderDep = Annotated[Embedder, Depends(get_embedder)]
ProviderDep = Annotated[LLMProvider | None, Depends(get_provider)]


def _how_to_authenticate(strict: bool) -> str:
    if strict:
        return "send an API key or JWT as `Authorization: Bearer <credential>`"
    return (
        "send an API key or JWT as `Authorization: Bearer <credential>`, or (permissive "
        "mode) claim an identity with X-User-Id and X-User-Roles"
    )


async def get_reader(caller: CallerDep, authenticator: AuthenticatorDep) -> Caller:
    """Anyone may read in permissive mode; strict mode needs a verified caller."""
    if authenticator.strict and not caller.authenticated:
        raise Unauthenticated(f"Reading the index needs a caller: {_how_to_authenticate(True)}.")
    return caller


async def get_writer(
    caller: CallerDep, authenticator: AuthenticatorDep, settings: SettingsDep
) -> Caller:
    """Changing the index needs one of ``RETRIEVER_WRITER_ROLES``, in both modes."""
    roles = sorted(set(settings.retriever_writer_roles))
    if not caller.authenticated:
        raise Unauthenticated(
            f"Changing the index needs a caller with one of the roles {', '.join(roles)}: "
            f"{_how_to_authenticate(authenticator.strict)}."
        )
    if not caller.has_any_role(roles):
        raise InsufficientPermission(
            f"Changing the index needs one of the roles {', '.join(roles)} "
            "(RETRIEVER_WRITER_ROLES).",
            roles,
        )
    return caller


ReaderDep = Annotated[Caller, Depends(get_reader)]
"""A caller allowed to read the index: ``/retrieve``, ``/status``, ``/sources``."""
WriterDep = Annotated[Caller, Depends(get_writer)]
"""A caller allowed to change the index: ``/ingest``, ``DELETE /sources/{source}``."""
