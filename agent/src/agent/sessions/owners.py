"""Who owns the sessions this process has served: what lets a turn of a known session
skip the owner check's read before the session lock.

Only what a turn of the owner proved is kept (the session id and its owner). A stale
entry (the session deleted, perhaps started again by someone else, through another
process) is harmless: the turn's first write checks the owner in the same statement
(:func:`agent.sessions.repository.append_as_owner`), writes nothing on a mismatch, and
the turn starts over the checked way, which refuses someone else's session with 403.
"""

from __future__ import annotations

from collections import OrderedDict

SIZE = 100_000  # sessions: a few MB


class SessionOwners:
    """A bounded map of session id to owner; the least recently used entry goes first."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._owners: OrderedDict[str, str | None] = OrderedDict()

    def owned_by(self, session_id: str, owner: str | None) -> bool:
        """Whether a turn of ``owner`` has been claimed in ``session_id`` (and not forgotten)."""
        if session_id not in self._owners or self._owners[session_id] != owner:
            return False
        self._owners.move_to_end(session_id)
        return True

    def remember(self, session_id: str, owner: str | None) -> None:
        self._owners[session_id] = owner
        self._owners.move_to_end(session_id)
        while len(self._owners) > self.size:
            self._owners.popitem(last=False)

    def forget(self, session_id: str) -> None:
        self._owners.pop(session_id, None)
