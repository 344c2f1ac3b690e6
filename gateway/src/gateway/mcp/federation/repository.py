"""Every federation query. Functions flush at most; callers own the transaction."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.mcp.federation.models import McpServer, McpServerTool
from gateway.registry.models import Tool

#: ``tool.source_path`` of a federated tool: its server.
SOURCE = "mcp"


def source_path(server_id: str) -> str:
    return f"mcp:{server_id}"


async def get_server(session: AsyncSession, server_id: str) -> McpServer | None:
    return await session.get(McpServer, server_id)


async def all_servers(session: AsyncSession) -> Sequence[McpServer]:
    return (await session.scalars(select(McpServer).order_by(McpServer.server_id))).all()


async def server_tools(session: AsyncSession, server_id: str) -> Sequence[McpServerTool]:
    statement = (
        select(McpServerTool)
        .where(McpServerTool.server_id == server_id)
        .order_by(McpServerTool.name)
    )
    return (await session.scalars(statement)).all()


async def taken_tool_ids(session: AsyncSession) -> set[str]:
    """Every tool id in use: the registry's and the ones federation has handed out."""
    registry = await session.scalars(select(Tool.tool_id))
    federated = await session.scalars(select(McpServerTool.tool_id))
    return set(registry) | set(federated)


async def delete_server(session: AsyncSession, server_id: str) -> list[str]:
    """Remove the server, its tool rows and its tools in the registry; their ids."""
    tools = await session.scalars(
        select(Tool.tool_id).where(
            Tool.source == SOURCE, Tool.source_path == source_path(server_id)
        )
    )
    tool_ids = list(tools)
    await session.execute(delete(Tool).where(Tool.tool_id.in_(tool_ids)))
    await session.execute(delete(McpServer).where(McpServer.server_id == server_id))
    return tool_ids
