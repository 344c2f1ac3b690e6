"""The prefix policy: how an upstream MCP tool's name becomes a Reach tool id.

``<server>__<name>``: the server id (``^[a-z][a-z0-9]{0,19}$``, no ``_``), two
underscores, then the tool's name in lower case with every run of other
characters (``-``, ``.``, ``/``, spaces ...) turned into one ``_``. So
``Get-Weather`` on server ``acme`` is ``acme__get_weather``.

- Ids of different servers never meet: each starts with its own ``<server>__``, and
  a server id holds no ``_``, so adding a server never renames another's tools.
- When that id is too long (over 64 characters), empty (a name such as ``..``) or
  already taken (two upstream names that read alike, or a tool registered by hand),
  the name is cut and ``_`` plus 8 hex characters of the name's SHA-256 are added.
- Once given, an id is kept (the gateway stores it), so a server that adds a
  look-alike tool later never renames the first one.

The upstream name itself is kept in the manifest (``endpoint.tool``), and calls
use it unchanged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container

SEPARATOR = "__"
TOOL_ID_MAX = 64
#: The names the MCP specification allows (1-128 of letters, digits, ``_``, ``-``, ``.``).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def tool_id_for(server_id: str, name: str, taken: Container[str]) -> str:
    """The id for upstream tool ``name`` of ``server_id``, not one of ``taken``."""
    prefix = server_id + SEPARATOR
    base = slug(name)
    candidate = prefix + base
    if base and len(candidate) <= TOOL_ID_MAX and candidate not in taken:
        return candidate
    digest = hashlib.sha256(name.encode()).hexdigest()
    room = TOOL_ID_MAX - len(prefix) - 9
    for extra in range(0, 56, 8):  # a longer digest if even that one is taken
        tail = digest[: 8 + extra]
        head = base[: max(0, room - extra)].rstrip("_")
        candidate = prefix + (f"{head}_{tail}" if head else f"t{tail}")
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free tool id for {name!r}")
