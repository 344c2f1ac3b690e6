"""What one approval is for: this caller, this tool, these exact arguments, this manifest.

The arguments are hashed in a canonical form (keys sorted, no whitespace, UTF-8),
so the same call always has the same hash and any change to any value does not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def arguments_hash(arguments: dict[str, Any]) -> str:
    """sha256 of the canonical arguments, as 64 hex characters."""
    return hashlib.sha256(canonical_json(arguments).encode()).hexdigest()
