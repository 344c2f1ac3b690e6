"""Approval requests: ask, list, read, approve, deny, and redeem an approval.

Who may see a request: the caller who asked, and anyone holding one of its
tool's ``approvers`` roles. Who may decide: an approver, never the caller who
asked unless the manifest says ``allow_self_approval`` (the caller may always
withdraw their own request with deny). Identities come from the request's
verified credential in strict mode.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from opentelemetry import propagate
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.approvals import repository
from gateway.approvals.binding import arguments_hash
from gateway.approvals.errors import (
    ApprovalArgumentsChanged,
    ApprovalExpired,
    ApprovalManifestChanged,
    ApprovalNotFound,
    ApprovalNotPending,
    ApprovalRequired,
    ApprovalToolMismatch,
    ApproverRoleRequired,
    SelfApprovalForbidden,
)
from gateway.approvals.execution import GATEWAY, ApprovalRunner, caller_of
from gateway.approvals.journal import Journal
from gateway.approvals.models import DENIED, PENDING, Approval, ApprovalEvent
from gateway.audit.redaction import redact
from gateway.auth.service import can_use
from gateway.catalog.spec import ToolSpec
from gateway.executor.callbacks import CallbackSender
from gateway.executor.models import CallbackDelivery
from gateway.registry.cache import RegisteredTool, RegistryCache
from gateway.registry.errors import ToolNotFound
from reach_common.auth.caller import Caller
from reach_common.auth.errors import Unauthenticated
from reach_common.errors import current_trace_id

DEFAULT_APPROVERS = ("admin",)
Validate = Callable[[ToolSpec, dict[str, Any]], None]


@dataclass(frozen=True)
class ApprovalView:
    """A request with its transitions and callback attempts, as ``GET /approvals/{id}``
    shows it."""

    approval: Approval
    events: Sequence[ApprovalEvent]
    callbacks: Sequence[CallbackDelivery]


class ApprovalService:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        registry: RegistryCache,
        runner: ApprovalRunner,
        journal: Journal,
        callbacks: CallbackSender,
        validate: Validate,
        ttl_s: float,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._registry = registry
        self.runner = runner
        self._journal = journal
        self._callbacks = callbacks
        self._validate = validate
        self._ttl = timedelta(seconds=ttl_s)

    def _now(self) -> datetime:
        return self.runner.clock()

    # --- asking ---------------------------------------------------------------------------------

    async def request(
        self,
        tool: RegisteredTool,
        arguments: dict[str, Any],
        caller: Caller,
        *,
        callback_url: str | None = None,
        replaces: str | None = None,
        actor: str | None = None,
    ) -> Approval:
        """A pending request for this exact call, bound to the tool's current manifest."""
        spec = tool.spec
        if not caller.user_id:
            raise ApprovalRequired(
                f"Tool {spec.tool_id!r} runs only after a person approves the call, and an "
                "approval is bound to the caller who asked: call it with an identity."
            )
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        now = self._now()
        approval = Approval(
            approval_id=uuid.uuid4().hex,
            tool_id=spec.tool_id,
            arguments=arguments,
            arguments_shown=redact(arguments, spec.input_schema),
            arguments_hash=arguments_hash(arguments),
            manifest_revision=tool.revision,
            idempotent=spec.idempotent,
            caller=caller.user_id,
            caller_roles=sorted(caller.roles),
            caller_via=caller.via,
            trace_id=current_trace_id(),
            traceparent=carrier.get("traceparent"),
            reason=(
                f"Tool {spec.tool_id!r} requires a person's approval before it runs "
                f"(approvers: {', '.join(spec.approvers)})."
            ),
            callback_url=callback_url,
            replaces=replaces,
            state=PENDING,
            attempts=0,
            expires_at=now + self._ttl,
            created_at=now,
        )
        async with self._sessionmaker.begin() as session:
            await repository.add(session, approval, actor=actor or caller.user_id)
        await self._journal.recorded(approval, None, actor or caller.user_id)
        return approval

    # --- reading --------------------------------------------------------------------------------

    def approvers_of(self, tool_id: str) -> tuple[str, ...]:
        tool = self._registry.get(tool_id)
        return tool.spec.approvers if tool is not None else DEFAULT_APPROVERS

    def is_approver(self, caller: Caller, tool_id: str) -> bool:
        return bool(caller.roles & set(self.approvers_of(tool_id)))

    def visible(self, approval: Approval, caller: Caller) -> bool:
        mine = caller.user_id is not None and caller.user_id == approval.caller
        return mine or self.is_approver(caller, approval.tool_id)

    async def _load(self, approval_id: str, caller: Caller) -> Approval:
        """The request, expired first if it is overdue; 404 unless ``caller`` may see it."""
        await self.runner.expire(approval_id)
        async with self._sessionmaker() as session:
            approval = await repository.get(session, approval_id)
        if approval is None or not self.visible(approval, caller):
            raise ApprovalNotFound(approval_id)
        return approval

    async def read(self, approval_id: str, caller: Caller) -> ApprovalView:
        approval = await self._load(approval_id, caller)
        async with self._sessionmaker() as session:
            events = await repository.events(session, approval_id)
        callbacks = await self._callbacks.deliveries(approval_id=approval_id)
        return ApprovalView(approval, events, callbacks)

    async def list_requests(
        self,
        caller: Caller,
        *,
        state: str | None,
        tool_id: str | None,
        requested_by: str | None,
        limit: int,
    ) -> Sequence[Approval]:
        """The caller's own requests, plus every request for a tool they may approve."""
        approvable = [t for t in self._registry.tools if self.is_approver(caller, t)]
        async with self._sessionmaker() as session:
            return await repository.list_approvals(
                session,
                me=caller.user_id,
                approvable_tools=approvable,
                state=state,
                tool_id=tool_id,
                caller=requested_by,
                limit=limit,
            )

    # --- deciding -------------------------------------------------------------------------------

    async def _decidable(self, approval_id: str, person: Caller, *, deny: bool) -> Approval:
        if not person.user_id:
            raise Unauthenticated("Deciding on an approval request needs an identity.")
        approval = await self._load(approval_id, person)
        own = person.user_id == approval.caller
        if not self.is_approver(person, approval.tool_id) and not (deny and own):
            raise ApproverRoleRequired(
                f"Only a caller with one of the roles {list(self.approvers_of(approval.tool_id))} "
                f"may decide on calls of tool {approval.tool_id!r}."
            )
        tool = self._registry.get(approval.tool_id)
        if own and not deny and not (tool is not None and tool.spec.allow_self_approval):
            raise SelfApprovalForbidden(
                f"You asked for this call yourself, and tool {approval.tool_id!r} does not allow "
                "self-approval: another approver must approve it."
            )
        self._must_be_pending(approval)
        return approval

    @staticmethod
    def _must_be_pending(approval: Approval) -> None:
        if approval.state == PENDING:
            return
        if approval.state == "expired":
            raise ApprovalExpired(
                f"Approval request {approval.approval_id} expired at "
                f"{approval.expires_at.isoformat()} and can no longer be decided; ask again.",
                state=approval.state,
            )
        raise ApprovalNotPending(
            f"Approval request {approval.approval_id} is already {approval.state}"
            + (f" (decided by {approval.decided_by})" if approval.decided_by else "")
            + "; it is decided once.",
            state=approval.state,
        )

    async def _decide(
        self, approval: Approval, person: Caller, to_state: str, comment: str | None
    ) -> Approval:
        """pending → ``to_state`` if still pending and unexpired; else why not."""
        now = self._now()
        async with self._sessionmaker.begin() as session:
            moved = await repository.transition(
                session, approval.approval_id, from_state=PENDING, to_state=to_state,
                actor=person.user_id, at=now, note=comment, where=[Approval.expires_at > now],
                decided_by=person.user_id, decided_at=now, comment=comment,
                **({"finished_at": now} if to_state == DENIED else {}),
            )  # fmt: skip
        if moved is None:
            await self.runner.expire(approval.approval_id)
            self._must_be_pending(await self.runner.reread(approval.approval_id))
            raise ApprovalNotPending(f"Approval request {approval.approval_id} changed meanwhile.")
        await self._journal.recorded(moved, PENDING, person.user_id)
        return moved

    async def approve(
        self,
        approval_id: str,
        person: Caller,
        *,
        comment: str | None,
        arguments: dict[str, Any] | None = None,
    ) -> tuple[ApprovalView, bool]:
        """Approve and run the call; ``(view, False)``. With edited ``arguments``, the request
        is replaced by a new pending one for them instead: ``(view of the new one, True)``."""
        approval = await self._decidable(approval_id, person, deny=False)
        if arguments is not None and arguments_hash(arguments) != approval.arguments_hash:
            replacement = await self._replace(approval, person, arguments, comment)
            return await self.read(replacement.approval_id, person), True
        approved = await self._decide(approval, person, "approved", comment)
        await self.runner.run(approved)
        return await self.read(approval_id, person), False

    async def deny(self, approval_id: str, person: Caller, *, comment: str | None) -> ApprovalView:
        approval = await self._decidable(approval_id, person, deny=True)
        await self._decide(approval, person, DENIED, comment)
        return await self.read(approval_id, person)

    async def _replace(
        self, approval: Approval, person: Caller, arguments: dict[str, Any], comment: str | None
    ) -> Approval:
        """An approver edited the arguments: a new request for them, checked against the
        tool's policy now, and the old one denied as replaced."""
        tool = self._registry.get(approval.tool_id)
        caller = caller_of(approval)
        if tool is None or not can_use(caller, tool.spec).allowed:
            raise ToolNotFound(approval.tool_id)
        self._validate(tool.spec, arguments)
        replacement = await self.request(
            tool, arguments, caller, callback_url=approval.callback_url,
            replaces=approval.approval_id, actor=person.user_id,
        )  # fmt: skip
        note = f"replaced by {replacement.approval_id} (arguments edited)"
        await self._decide(approval, person, DENIED, f"{comment} — {note}" if comment else note)
        return replacement

    # --- redeeming ------------------------------------------------------------------------------

    async def redeem(
        self, approval_id: str, tool_id: str, arguments: dict[str, Any], caller: Caller
    ) -> Approval:
        """The request a caller names when calling again: theirs, for this tool and these
        exact arguments (else a clear refusal). Its state says what the call became."""
        approval = await self._load(approval_id, caller)
        if caller.user_id != approval.caller:
            raise ApprovalNotFound(approval_id)
        if approval.tool_id != tool_id:
            raise ApprovalToolMismatch(
                f"Approval {approval_id} is for tool {approval.tool_id!r}, not {tool_id!r}; "
                "an approval covers one tool.",
                approved_tool_id=approval.tool_id,
            )
        if arguments_hash(arguments) != approval.arguments_hash:
            raise ApprovalArgumentsChanged(
                f"Approval {approval_id} was given for other arguments (compare "
                f"{approval.arguments_shown}); a changed call needs a new approval.",
                approved_arguments=approval.arguments_shown,
            )
        tool = self._registry.get(tool_id)
        if approval.state in (PENDING, "approved") and (
            tool is None or tool.revision != approval.manifest_revision
        ):
            raise ApprovalManifestChanged(
                f"Tool {tool_id!r} changed after approval {approval_id} was asked for, so the "
                "approval does not cover it; ask for a new one.",
                approved_revision=approval.manifest_revision,
            )
        return approval


__all__ = ["GATEWAY", "ApprovalService", "ApprovalView"]
