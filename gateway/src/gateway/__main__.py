"""``python -m gateway``: serve the gateway, or manage its API keys.

python -m gateway                      # serve (embedded Postgres/Redis if no URLs)
python -m gateway keys create --user u1 --roles ops_admin
python -m gateway keys revoke <key id>
python -m gateway manifest-schema > manifests/schema.json
python -m gateway mcp-stdio --url http://127.0.0.1:8080/mcp --key <key>   # MCP over stdio
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import structlog
import typer

from gateway.settings import Settings
from reach_common import migrate
from reach_common.auth.keys import CreatedKey, create_key, revoke_key
from reach_common.db import create_engine, create_sessionmaker
from reach_common.embedded import ensure_urls

cli = typer.Typer(add_completion=False, help="The Reach gateway.")
keys = typer.Typer(help="API keys for AUTH_MODE=strict. A key is shown once, then kept hashed.")
cli.add_typer(keys, name="keys")


@cli.callback(invoke_without_command=True)
def main(context: typer.Context) -> None:
    """Serve the gateway when no command is given."""
    if context.invoked_subcommand is None:
        serve()


@cli.command()
def serve() -> None:
    """Serve the gateway on GATEWAY_PORT (8080)."""
    from reach_common.service import run_service  # the key commands need none of the server

    run_service(Settings(), "gateway.app:create_app")


@cli.command("manifest-schema")
def manifest_schema() -> None:
    """Print the tool manifest's JSON Schema, generated from its model (manifests/schema.json)."""
    from gateway.registry.manifest_model import manifest_schema_text

    typer.echo(manifest_schema_text(), nl=False)


@cli.command("mcp-stdio")
def mcp_stdio(
    url: Annotated[
        str, typer.Option(help="The gateway's MCP endpoint, e.g. http://127.0.0.1:8080/mcp.")
    ] = "http://127.0.0.1:8080/mcp",
    key: Annotated[
        str | None,
        typer.Option(envvar="REACH_API_KEY", help="API key or JWT (or set REACH_API_KEY)."),
    ] = None,
    user: Annotated[str | None, typer.Option(help="Permissive mode only: a user id.")] = None,
    roles: Annotated[str | None, typer.Option(help="Permissive mode only: roles.")] = None,
) -> None:
    """Speak MCP over stdin/stdout and forward to a gateway (for desktop MCP clients)."""
    from gateway.mcp.bridge import bridge_headers, serve_stdio

    asyncio.run(serve_stdio(url, bridge_headers(key, user, roles)))


async def _create(database_url: str, user: str, roles: list[str]) -> CreatedKey:
    engine = create_engine(database_url, pool_size=1)
    try:
        async with create_sessionmaker(engine).begin() as session:
            return await create_key(session, user, roles)
    finally:
        await engine.dispose()


async def _revoke(database_url: str, key_id: str) -> bool:
    engine = create_engine(database_url, pool_size=1)
    try:
        async with create_sessionmaker(engine).begin() as session:
            return await revoke_key(session, key_id)
    finally:
        await engine.dispose()


def _database_url() -> tuple[str, object]:
    # Stdout carries only the key (KEY=$(python -m gateway keys create ...)): the embedded
    # servers' start-up lines go to stderr.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    settings = Settings()
    embedded = not settings.database_url
    servers = ensure_urls(settings)
    assert settings.database_url
    if embedded:  # a fresh clone's own database: bring it to head first (a no-op after)
        migrate.upgrade(settings.database_url)
    return settings.database_url, servers


@keys.command("create")
def create(
    user: Annotated[str, typer.Option(help="The user id the key acts as.")],
    roles: Annotated[
        str, typer.Option(help="Comma-separated roles, e.g. ops_admin,order_manager.")
    ] = "",
) -> None:
    """Create an API key and print it (only this once)."""
    database_url, servers = _database_url()
    try:
        role_list = [r.strip() for r in roles.split(",") if r.strip()]
        created = asyncio.run(_create(database_url, user, role_list))
    finally:
        if servers is not None:
            servers.stop()  # type: ignore[attr-defined]
    typer.echo(created.key)
    typer.echo(
        f"key id {created.key_id} for user {created.user_id!r} with roles "
        f"{', '.join(created.roles) or '(none)'}; store the key now, it is not shown again.",
        err=True,
    )


@keys.command("revoke")
def revoke(key_id: Annotated[str, typer.Argument(help="The key id printed at creation.")]) -> None:
    """Revoke an API key; gateways stop accepting it within API_KEY_CACHE_TTL_S."""
    database_url, servers = _database_url()
    try:
        revoked = asyncio.run(_revoke(database_url, key_id))
    finally:
        if servers is not None:
            servers.stop()  # type: ignore[attr-defined]
    if not revoked:
        typer.echo(f"no active key {key_id!r}", err=True)
        raise typer.Exit(1)
    typer.echo(f"revoked {key_id}")


if __name__ == "__main__":
    cli()
