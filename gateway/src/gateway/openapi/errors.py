"""What an OpenAPI import refuses, and why."""

from __future__ import annotations

from reach_common.errors import ReachError, Unprocessable


class InvalidOpenApi(Unprocessable):
    """The document is not OpenAPI 3.x; ``path`` is the JSON pointer of the first problem."""

    reason = "invalid_openapi"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            f"The OpenAPI document is invalid at {path or '/'}: {problem}",
            path=path or "/",
            problem=problem,
        )


class OpenApiTooLarge(ReachError):
    """Over one of the import's limits (bytes, nesting depth, nodes, operations)."""

    status_code = 413
    reason = "openapi_too_large"

    def __init__(self, what: str, limit: int, setting: str) -> None:
        super().__init__(
            f"The OpenAPI document has more than {limit} {what}; {setting} sets the limit.",
            limit=limit,
            what=what,
        )


class OpenApiFetchFailed(ReachError):
    """The document's URL did not give a document."""

    status_code = 502
    reason = "openapi_fetch_failed"

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"Could not read the OpenAPI document at {url!r}: {why}.", url=url)


class BaseUrlRequired(Unprocessable):
    """No absolute server URL to call the operations at."""

    reason = "base_url_required"

    def __init__(self, server: str) -> None:
        super().__init__(
            f"The document's server URL {server!r} is relative and the document was not "
            "read from a URL; send `base_url` (e.g. https://api.example.com).",
            server=server,
        )
