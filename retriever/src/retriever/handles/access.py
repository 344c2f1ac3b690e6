"""Whose handles a request may use: its own caller's, or, for a delegate, the user named.

The gateway stores and searches tool outputs for the caller a tool ran for. It calls the
retriever with its own service key and names that caller in ``X-Reach-On-Behalf-Of``
(percent-encoded). The header counts only for a caller holding one of
``RETRIEVER_DELEGATE_ROLES``; anyone else sending it is refused, so nobody can read
another user's output by naming them.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from reach_common.auth.caller import Caller
from reach_common.auth.errors import InsufficientPermission, Unauthenticated
from reach_common.errors import Unprocessable

ON_BEHALF_HEADER = "X-Reach-On-Behalf-Of"
_MAX_OWNER_CHARS = 200


def handle_owner(headers: Mapping[str, str], caller: Caller, delegate_roles: list[str]) -> str:
    """The user whose handles this request reads or writes."""
    named = headers.get(ON_BEHALF_HEADER.lower())
    if named is not None:
        roles = sorted(set(delegate_roles))
        if not caller.has_any_role(roles):
            raise InsufficientPermission(
                f"Only a caller with one of the roles {', '.join(roles)} "
                f"(RETRIEVER_DELEGATE_ROLES) may act for another user ({ON_BEHALF_HEADER}).",
                roles,
            )
        owner = unquote(named).strip()
        if owner and len(owner) <= _MAX_OWNER_CHARS:
            return owner
        raise Unprocessable(f"{ON_BEHALF_HEADER} must name a user (1-200 characters).")
    if caller.user_id is None:
        raise Unauthenticated(
            "Stored tool outputs belong to a user: send an API key or JWT as "
            "`Authorization: Bearer <credential>` (or, in permissive mode, X-User-Id)."
        )
    return caller.user_id
