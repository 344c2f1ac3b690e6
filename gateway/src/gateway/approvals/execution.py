"""Running an approved call exactly once, and recovering calls a dead replica left.

An approved request is claimed with one conditional UPDATE (``approved`` →
``running``, with a lease of the tool's ``timeout_ms`` plus
``APPROVAL_RECOVERY_GRACE_MS``); only the replica that gets the row back runs
the tool, with the approval id as its ``Idempotency-Key``. No transaction is
open while the tool runs.

Every replica sweeps every ``APPROVAL_SWEEP_S``: pending requests past their
expiry become ``expired``; an ``approved`` request nobody claimed is run; a
``running`` one whose lease ran out was left by a replica that died mid-call,
so an idempotent tool is run again (``resumed``) and a non-idempotent one is
marked ``failed`` with ``outcome_unknown`` — never run a second time. Each of
these is again a conditional UPDATE, so two replicas sweeping at once act once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, cast

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.approvals import repository
from gateway.approvals.binding import arguments_hash
from gateway.approvals.errors import (
    ApprovalArgumentsChanged,
    ApprovalManifestChanged,
    OutcomeUnknown,
)
from gateway.approvals.journal import Journal
from gateway.approvals.models import (
    APPROVED,
    EXPIRED,
    FAILED,
    PENDING,
    RUNNING,
    SUCCEEDED,
    Approval,
)
from gateway.auth.service import can_use
from gateway.background import cancel_and_wait
from gateway.catalog.spec import QueueTarget
from gateway.executor.http import CallStats
from gateway.executor.service import Executor
from gateway.registry.cache import RegisteredTool, RegistryCache
from reach_common.auth.caller import AuthVia, Caller
from reach_common.auth.errors import InsufficientPermission
from reach_common.errors import ReachError, error_body
from reach_common.outages import down_dependency

log = structlog.get_logger(__name__)

GATEWAY = "gateway"  # the actor of transitions no person made
Clock = Callable[[], datetime]


def caller_of(approval: Approval) -> Caller:
    via = cast(AuthVia, approval.caller_via)
    return Caller(user_id=approval.caller, roles=frozenset(approval.caller_roles), via=via)


def failure_result(exc: ReachError) -> dict[str, Any]:
    """A failed call's stored result: the tool-call error envelope and its HTTP status."""
    return {**error_body(exc, nested=True, success=False), "http_status": exc.status_code}


def binding_problem(approval: Approval, tool: RegisteredTool | None) -> ReachError | None:
    """Why this approval no longer covers the call it is about to run, if it does not."""
    if tool is None:
        return ApprovalManifestChanged(
            f"Tool {approval.tool_id!r} is no longer registered; the approval was for the "
            "manifest it had then. Nothing was run."
        )
    if tool.revision != approval.manifest_revision:
        return ApprovalManifestChanged(
            f"Tool {approval.tool_id!r} changed after this call was submitted for approval "
            f"(manifest revision {approval.manifest_revision}, now {tool.revision}), so the "
            "approval does not cover it. Nothing was run; ask for a new approval.",
            approved_revision=approval.manifest_revision,
            current_revision=tool.revision,
        )
    if arguments_hash(approval.arguments) != approval.arguments_hash:
        return ApprovalArgumentsChanged(
            "The stored arguments no longer match the ones approved. Nothing was run."
        )
    if not can_use(caller_of(approval), tool.spec).allowed:
        return InsufficientPermission(
            f"The caller who asked may no longer use tool {approval.tool_id!r}. Nothing was run."
        )
    return None


class ApprovalRunner:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        registry: RegistryCache,
        executor: Executor,
        journal: Journal,
        grace_ms: int,
        sweep_s: float,
        clock: Clock,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._registry = registry
        self._executor = executor
        self._journal = journal
        self._grace = timedelta(milliseconds=grace_ms)
        self._sweep_s = sweep_s
        self.clock = clock
        self._loop_task: asyncio.Task[None] | None = None

    async def _move(self, approval_id: str, from_state: str, to_state: str, **kwargs: Any) -> (
        Approval | None
    ):  # fmt: skip
        """One conditional transition in its own short transaction, then its journal."""
        actor = kwargs.pop("actor", GATEWAY)
        now = self.clock()
        async with self._sessionmaker.begin() as session:
            moved = await repository.transition(
                session, approval_id, from_state=from_state, to_state=to_state, actor=actor,
                at=now, **kwargs,
            )  # fmt: skip
        return moved

    async def expire(self, approval_id: str) -> Approval | None:
        """pending → expired, if it is pending and past its expiry."""
        now = self.clock()
        moved = await self._move(
            approval_id, PENDING, EXPIRED, where=[Approval.expires_at <= now], decided_at=now,
            finished_at=now, note="expired before anyone decided",
        )  # fmt: skip
        if moved is not None:
            await self._journal.recorded(moved, PENDING, GATEWAY)
        return moved

    async def run(self, approval: Approval) -> Approval:
        """approved → running → succeeded | failed, on the one replica that claims it."""
        tool = self._registry.get(approval.tool_id)
        problem = binding_problem(approval, tool)
        if problem is not None:
            failed = await self._move(
                approval.approval_id, APPROVED, FAILED, result=failure_result(problem),
                finished_at=self.clock(), note=problem.reason,
            )  # fmt: skip
            if failed is not None:
                await self._journal.recorded(failed, APPROVED, GATEWAY)
            raise problem
        assert tool is not None
        claimed = await self._move(
            approval.approval_id, APPROVED, RUNNING, lease_expires_at=self._lease(tool),
            attempts=Approval.attempts + 1,
        )  # fmt: skip
        if claimed is None:
            return await self.reread(approval.approval_id)
        await self._journal.recorded(claimed, APPROVED, GATEWAY)
        return await self._execute(claimed, tool)

    def _lease(self, tool: RegisteredTool) -> datetime:
        return self.clock() + timedelta(milliseconds=tool.spec.timeout_ms) + self._grace

    async def reread(self, approval_id: str) -> Approval:
        async with self._sessionmaker() as session:
            approval = await repository.get(session, approval_id)
        assert approval is not None
        return approval

    async def _execute(self, approval: Approval, tool: RegisteredTool) -> Approval:
        spec = tool.spec
        target = spec.endpoint.target if isinstance(spec.endpoint, QueueTarget) else spec.endpoint
        stats = CallStats()
        started = time.perf_counter()
        with self._journal.span(approval, "gateway.approval.execute"):
            try:
                execution = await self._executor.run(
                    spec, target, approval.arguments,
                    idempotency_key=approval.approval_id, stats=stats,
                )  # fmt: skip
                result: dict[str, Any] = {
                    "success": True, "output": execution.output, "http_status": 200,
                }  # fmt: skip
                state = SUCCEEDED
            except ReachError as exc:
                result, state = failure_result(exc), FAILED
        latency_ms = round((time.perf_counter() - started) * 1000, 2)
        done = await self._move(
            approval.approval_id, RUNNING, state, result=result, finished_at=self.clock(),
            lease_expires_at=None, where=[Approval.attempts == approval.attempts],
        )  # fmt: skip
        if done is None:  # the lease ran out meanwhile and a sweep decided; keep its answer
            return await self.reread(approval.approval_id)
        await self._journal.recorded(
            done, RUNNING, GATEWAY, latency_ms=latency_ms, attempts=stats.attempts
        )
        return done

    async def recover(self, approval: Approval) -> Approval | None:
        """A running call whose lease ran out: resume it (idempotent tool, binding intact)
        or mark it failed with ``outcome_unknown``."""
        now = self.clock()
        tool = self._registry.get(approval.tool_id)
        orphaned = [Approval.lease_expires_at <= now, Approval.attempts == approval.attempts]
        if approval.idempotent and tool is not None and binding_problem(approval, tool) is None:
            resumed = await self._move(
                approval.approval_id, RUNNING, RUNNING, where=orphaned,
                lease_expires_at=self._lease(tool), attempts=Approval.attempts + 1,
                note="resumed: the replica running it stopped; the tool is idempotent",
            )  # fmt: skip
            if resumed is None:
                return None
            await self._journal.recorded(resumed, RUNNING, GATEWAY)
            return await self._execute(resumed, tool)
        unknown = OutcomeUnknown(
            f"The gateway running this approved call of {approval.tool_id!r} stopped before "
            "the tool answered. The tool is not idempotent, so it is not run again: check "
            "whether it acted before asking again."
        )
        failed = await self._move(
            approval.approval_id, RUNNING, FAILED, where=orphaned, result=failure_result(unknown),
            finished_at=now, lease_expires_at=None, note="outcome_unknown",
        )  # fmt: skip
        if failed is not None:
            await self._journal.recorded(failed, RUNNING, GATEWAY)
        return failed

    async def sweep(self) -> None:
        """Expire overdue requests; run or recover calls left behind."""
        now = self.clock()
        async with self._sessionmaker() as session:
            overdue = await repository.overdue(session, now)
            orphans = await repository.orphaned(session, approved_before=now - self._grace, now=now)
        for approval_id in overdue:
            await self.expire(approval_id)
        for orphan in orphans:
            try:
                if orphan.state == APPROVED:
                    await self.run(orphan)
                else:
                    await self.recover(orphan)
            except ReachError as exc:  # recorded on the request already
                log.info("approval_not_run", approval_id=orphan.approval_id, reason=exc.reason)

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop(), name="approval-sweeper")

    async def stop(self) -> None:
        await cancel_and_wait(self._loop_task)

    async def _loop(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception as exc:  # task boundary: log and keep sweeping
                if down := down_dependency(exc):  # an outage, not a bug: no traceback
                    log.warning("approval_sweep_failed", dependency=down, error=type(exc).__name__)
                else:
                    log.exception("approval_sweep_failed")
            await asyncio.sleep(self._sweep_s)
