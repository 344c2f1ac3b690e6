"""``reach keys``: API keys over the gateway's ``/keys`` API (registry admins, proven by a
credential). The very first admin key comes from ``python -m gateway keys create``, which
writes to the database directly: a bootstrap, since this API needs a key to be used."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from reach_cli.output import State, call, err, show

app = typer.Typer(no_args_is_help=True, help="API keys (registry admins).")


def key_table(keys: list[dict[str, Any]]) -> Table:
    table = Table("key id", "user", "roles", "created", "revoked")
    for key in keys:
        table.add_row(
            key["key_id"],
            key["user_id"],
            ", ".join(key.get("roles", [])),
            str(key.get("created_at", ""))[:19],
            str(key.get("revoked_at") or "")[:19],
        )
    return table


@app.command("ls")
def keys_ls(
    user: Annotated[str | None, typer.Option("--for", help="Only this user's keys.")] = None,
    revoked: Annotated[bool, typer.Option(help="Include revoked keys.")] = False,
) -> None:
    """Keys newest first: ids, owners, roles and dates (never the keys)."""
    body = call("GET", "/keys", params={"user_id": user, "include_revoked": revoked})
    show(body, key_table(body.get("keys", [])))


@app.command("create")
def keys_create(
    user_id: Annotated[str, typer.Argument(help="The user the key acts as.")],
    roles: Annotated[str, typer.Option(help="Comma-separated roles.")] = "",
) -> None:
    """Create a key and print it: this is the only time it is shown."""
    role_list = [r.strip() for r in roles.split(",") if r.strip()]
    body = call("POST", "/keys", json={"user_id": user_id, "roles": role_list})
    if State.as_json:
        show(body)
        return
    print(body["key"])
    err.print(
        f"key id {body['key_id']} for {body['user_id']!r} with roles "
        f"{', '.join(body['roles']) or '(none)'}; store the key now, it is not shown again.",
        highlight=False,
    )


@app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key's id.")]) -> None:
    """Revoke a key; services stop accepting it within API_KEY_CACHE_TTL_S."""
    body = call("DELETE", f"/keys/{key_id}")
    if State.as_json:
        show(body)
    else:
        print(f"revoked {body['key_id']}")
