"""Request dependencies: the retriever's long-lived objects, from the lifespan state."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

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


def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    sessionmaker: async_sessionmaker[AsyncSession] = request.state.sessionmaker
    return sessionmaker


SettingsDep = Annotated[Settings, Depends(get_settings)]
IngestorDep = Annotated[Ingestor, Depends(get_ingestor)]
SearcherDep = Annotated[Searcher, Depends(get_searcher)]
SessionmakerDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
