"""How much of a tool's schema a request is read for.

A manifest may declare thousands of parameters (an upstream MCP server's tool, an
imported OpenAPI operation, a 1 MB body), and the router reads a request for each one it
reads: the filling rules (0.2-0.8 ms a parameter with examples in its description) and
the tool's words. 10,000 parameters cost 0.2-4.6 s a request on the event loop. The
router reads at most ``MAX_READ_PROPERTIES``, the required ones first; a required one
past them is reported missing, and the schema still judges the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_READ_PROPERTIES = 64


def read_properties(properties: dict[str, Any], first: Sequence[str] = ()) -> dict[str, Any]:
    """``properties``, at most ``MAX_READ_PROPERTIES`` of them: those named in ``first``
    (the required ones), then the others as declared."""
    if len(properties) <= MAX_READ_PROPERTIES:
        return properties
    names = [n for n in dict.fromkeys([*first, *properties]) if n in properties]
    return {n: properties[n] for n in names[:MAX_READ_PROPERTIES]}
