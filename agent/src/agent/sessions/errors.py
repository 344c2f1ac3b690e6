"""Session errors; each carries the ``reason`` clients branch on."""

from __future__ import annotations

from reach_common.errors import Conflict, NotFound, ReachError


class SessionNotFound(NotFound):
    reason = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session has id {session_id!r}.", session_id=session_id)


class SessionBusy(Conflict):
    reason = "session_busy"

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Session {session_id!r} is answering another message. Wait for that turn to "
            "finish, then send again (a retry with the same message_id is safe).",
            session_id=session_id,
        )


class SessionForbidden(ReachError):
    status_code = 403
    reason = "session_forbidden"

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Session {session_id!r} belongs to another user. Continue one of your own "
            "sessions or start a new one.",
            session_id=session_id,
        )


class MessageIdReused(Conflict):
    reason = "message_id_reused"

    def __init__(self, message_id: str) -> None:
        super().__init__(
            f"message_id {message_id!r} was already used in this session for a different "
            "message; use a new id for a new message.",
            message_id=message_id,
        )


class TurnSuperseded(Conflict):
    reason = "turn_superseded"

    def __init__(self, message_id: str) -> None:
        super().__init__(
            f"The turn of message_id {message_id!r} never finished and newer messages "
            "followed it, so it cannot be resumed; send it again with a new id.",
            message_id=message_id,
        )


class MemoryNotFound(NotFound):
    reason = "memory_not_found"

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"No memory of yours has id {memory_id!r}.", memory_id=memory_id)
