"""How an approval request can be refused; each error names what to do next."""

from __future__ import annotations

from reach_common.errors import Conflict, NotFound, ReachError


class ApprovalRequired(ReachError):
    """The tool needs approval and this call cannot ask for it (no caller to bind it to)."""

    status_code = 403
    reason = "approval_required"


class ApprovalPending(ReachError):
    """Not a failure: the call waits for a person. The 202 answer is rendered like every
    Reach answer with a ``reason`` (``error_body``), with the approval's id and status URL."""

    status_code = 202
    reason = "approval_pending"


class ApprovalNotFound(NotFound):
    reason = "approval_not_found"

    def __init__(self, approval_id: str) -> None:
        super().__init__(
            f"No approval request {approval_id!r} that you may see.", approval_id=approval_id
        )


class ApprovalNotPending(Conflict):
    """Someone decided first (or the request ran, or it expired)."""

    reason = "approval_not_pending"


class ApprovalExpired(Conflict):
    reason = "approval_expired"


class ApprovalDenied(ReachError):
    status_code = 403
    reason = "approval_denied"


class ApprovalArgumentsChanged(Conflict):
    reason = "approval_arguments_changed"


class ApprovalToolMismatch(Conflict):
    reason = "approval_tool_mismatch"


class ApprovalManifestChanged(Conflict):
    reason = "approval_manifest_changed"


class ApproverRoleRequired(ReachError):
    status_code = 403
    reason = "approver_role_required"


class SelfApprovalForbidden(ReachError):
    status_code = 403
    reason = "self_approval_forbidden"


class OutcomeUnknown(ReachError):
    """A non-idempotent call was running when its replica died: whether the tool acted
    is unknown, and it is not run again."""

    status_code = 502
    reason = "outcome_unknown"
