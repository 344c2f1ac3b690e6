"""Tool calls the agent answers itself, without asking the gateway.

The model reads each as the ``is_error`` result of its call (rendered by
``reach_common.errors.error_body``, like a gateway error) and carries on; none
reaches the client as an HTTP error.

- ``UnknownTool`` (404, ``unknown_tool``): the model named a tool it was not offered;
- ``UnreadableArguments`` (422, ``invalid_arguments``): the arguments were not a
  complete JSON object;
- ``ConfirmationRequired`` (403, ``confirmation_required``): a write proposed
  after reading tool output (``agent.react.policy``).
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.react.policy import CONFIRMATION_MESSAGE, CONFIRMATION_REQUIRED
from reach_common.errors import NotFound, ReachError, Unprocessable


class UnknownTool(NotFound):
    reason = "unknown_tool"

    def __init__(self, name: str, known: Iterable[str]) -> None:
        listed = ", ".join(sorted(known)) or "none"
        super().__init__(f"There is no tool {name!r}. Tools: {listed}.")


class UnreadableArguments(Unprocessable):
    reason = "invalid_arguments"

    def __init__(self, raw: str) -> None:
        super().__init__(
            "The arguments were not a complete JSON object, so the tool was not run: "
            f"{raw[:200]!r}. Send the call again with a JSON object."
        )


class ConfirmationRequired(ReachError):
    status_code = 403
    reason = CONFIRMATION_REQUIRED

    def __init__(self, tool_id: str) -> None:
        super().__init__(CONFIRMATION_MESSAGE.format(tool_id=tool_id))
