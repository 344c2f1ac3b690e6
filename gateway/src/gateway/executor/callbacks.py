"""Result callbacks: a finished task or approval POSTed to the caller's ``callback_url``.

Each delivery is signed with the deployment's ``CALLBACK_SECRET``::

    X-Reach-Timestamp: <unix seconds>
    X-Reach-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>
    X-Reach-Delivery: <id, the same on every attempt of one delivery>
    X-Reach-Event: task.finished | approval.finished

A receiver recomputes the HMAC over the timestamp, a dot and the raw body,
compares in constant time and refuses old timestamps (:func:`verify_signature`
does exactly that; ``docs/approvals.md`` shows it standalone). Deliveries that
fail (no answer, or not 2xx) are retried with exponential backoff (tenacity)
up to ``CALLBACK_MAX_ATTEMPTS``; every attempt is a row of
``gateway.callback_delivery``, which ``GET /tasks/{id}`` and
``GET /approvals/{id}`` show.

Callback URLs obey the egress rules of tool calls: in strict mode only public
addresses or ``EGRESS_ALLOWLIST``, checked when the URL is given and again,
on the resolved addresses, at each attempt; the connection goes to the
address that was checked.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import structlog
from opentelemetry import trace
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from tenacity import (
    AsyncRetrying,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from gateway.background import cancel_and_wait
from gateway.catalog.egress import EgressDenied, EgressPolicy, literal_ip
from gateway.executor.models import CallbackDelivery
from gateway.executor.resolver import HostResolver
from gateway.executor.transport import Address, Timing, ToolHttpClient, TransportError
from reach_common.errors import ReachError, ServiceUnavailable, Unprocessable

log = structlog.get_logger(__name__)

SIGNATURE_HEADER = "X-Reach-Signature"
TIMESTAMP_HEADER = "X-Reach-Timestamp"
DELIVERY_HEADER = "X-Reach-Delivery"
EVENT_HEADER = "X-Reach-Event"
MAX_URL_CHARS = 2000


class CallbackAttemptRead(BaseModel):
    """One delivery attempt, as ``GET /tasks/{id}`` and ``GET /approvals/{id}`` show it."""

    model_config = ConfigDict(from_attributes=True)

    delivery_id: str = Field(description="The same on every attempt of one delivery.")
    url: str
    attempt: int
    status_code: int | None = Field(description="The receiver's answer; none if it gave none.")
    error: str | None
    delivered: bool
    at: datetime


class InvalidCallbackUrl(Unprocessable):
    reason = "invalid_callback_url"


class CallbacksNotConfigured(ServiceUnavailable):
    reason = "callbacks_not_configured"


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """The ``X-Reach-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(
    secret: bytes,
    timestamp: str,
    body: bytes,
    signature: str,
    *,
    tolerance_s: float = 300.0,
    now: float | None = None,
) -> bool:
    """What a receiver does: the signature matches and the timestamp is recent."""
    try:
        sent = float(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - sent) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


@dataclass(frozen=True)
class CallbackPolicy:
    secret: SecretStr | None
    max_attempts: int = 5
    backoff_ms: int = 500
    max_backoff_ms: int = 30_000
    timeout_ms: int = 5000


def _valid_host(host: str) -> bool:
    """An IP literal, or a name every label of which IDNA encodes (no empty label, none
    over 63 characters): what the resolver and the connection will need."""
    if literal_ip(host) is not None:
        return True
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


class _AttemptFailed(Exception):
    """One delivery attempt got no 2xx answer: tenacity tries again."""


class CallbackSender:
    """Checks callback URLs, and delivers, signs, retries and logs callbacks."""

    def __init__(
        self,
        *,
        client: ToolHttpClient,
        resolver: HostResolver,
        egress: EgressPolicy,
        sessionmaker: async_sessionmaker[AsyncSession],
        policy: CallbackPolicy,
        tracer: trace.Tracer,
    ) -> None:
        self._client = client
        self._resolver = resolver
        self._egress = egress
        self._sessionmaker = sessionmaker
        self._policy = policy
        self._tracer = tracer
        self._running: set[asyncio.Task[bool]] = set()

    async def check_url(self, url: str) -> None:
        """Refuse a callback URL before the call is accepted: 422 when it is not an
        http(s) URL with a valid host name, 503 when callbacks are not configured, 403
        when egress forbids it."""
        parts = urlsplit(url)
        if (
            len(url) > MAX_URL_CHARS
            or parts.scheme not in ("http", "https")
            or not parts.hostname
            or not _valid_host(parts.hostname)
        ):
            raise InvalidCallbackUrl(
                "callback_url must be an absolute http or https URL with a valid host name, "
                f"of at most {MAX_URL_CHARS} characters, e.g. https://example.com/hooks/reach."
            )
        if self._policy.secret is None:
            raise CallbacksNotConfigured(
                "This gateway has no CALLBACK_SECRET, so it cannot sign callbacks; poll the "
                "status URL instead, or ask the operator to set one."
            )
        await self._addresses(parts.hostname)

    async def _addresses(self, host: str) -> list[Address]:
        ip = literal_ip(host)
        if ip is not None:
            self._egress.check_resolved(host, [ip])
            return [ip]
        return list(await self._resolver.resolve(host, self._tracer))

    def schedule(
        self,
        url: str,
        event: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        approval_id: str | None = None,
    ) -> asyncio.Task[bool]:
        """Deliver in the background; :meth:`stop` waits for deliveries in flight."""
        task = asyncio.create_task(
            self.deliver(url, event, payload, task_id=task_id, approval_id=approval_id)
        )
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    async def stop(self, grace_s: float = 5.0) -> None:
        if self._running:
            _, pending = await asyncio.wait(self._running, timeout=grace_s)
            for task in pending:
                await cancel_and_wait(task)

    async def deliver(
        self,
        url: str,
        event: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        approval_id: str | None = None,
    ) -> bool:
        """POST ``payload`` to ``url`` until a 2xx answer or the attempts run out."""
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        delivery = _Delivery(uuid.uuid4().hex, url, event, body, task_id, approval_id)
        policy = self._policy
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.max_attempts),
            wait=wait_exponential(
                multiplier=policy.backoff_ms / 1000, max=policy.max_backoff_ms / 1000
            ),
            retry=retry_if_exception_type(_AttemptFailed),
        )
        try:
            async for attempt in retrying:
                with attempt:
                    await self._attempt(delivery, attempt.retry_state.attempt_number)
        except RetryError:
            log.warning("callback_given_up", delivery_id=delivery.delivery_id, event=event)
            return False
        except EgressDenied as exc:  # no retry: the answer will not change
            await self._log(delivery, 1, None, exc.message, delivered=False)
            return False
        return True

    async def _attempt(self, delivery: _Delivery, number: int) -> None:
        assert self._policy.secret is not None
        secret = self._policy.secret.get_secret_value().encode()
        timestamp = str(int(time.time()))
        headers = [
            ("Content-Type", "application/json"),
            (TIMESTAMP_HEADER, timestamp),
            (SIGNATURE_HEADER, sign(secret, timestamp, delivery.body)),
            (DELIVERY_HEADER, delivery.delivery_id),
            (EVENT_HEADER, delivery.event),
        ]
        status: int | None = None
        error: str | None = None
        with self._tracer.start_as_current_span(
            "gateway.callback", attributes={"callback.attempt": number}
        ) as span:
            try:
                status = await self._post(delivery.url, headers, delivery.body)
            except (TransportError, OSError, TimeoutError) as exc:
                error = f"{type(exc).__name__}: {exc}"[:500]
            except EgressDenied:
                raise
            except ReachError as exc:  # e.g. the host does not resolve
                error = exc.message[:500]
            span.set_attribute("callback.status_code", status or 0)
        delivered = status is not None and 200 <= status < 300
        if status is not None and not delivered:
            error = f"HTTP {status}"
        await self._log(delivery, number, status, error, delivered=delivered)
        if not delivered:
            raise _AttemptFailed(error)

    async def _post(self, url: str, headers: list[tuple[str, str]], body: bytes) -> int:
        host = urlsplit(url).hostname or ""
        addresses: Sequence[Address] = await self._addresses(host)
        async with asyncio.timeout(self._policy.timeout_ms / 1000):
            answer = await self._client.request(
                "POST",
                url,
                headers,
                body,
                max_bytes=65536,
                timing=Timing(),
                connect_to=addresses,
                reuse=False,
            )
        return answer.status

    async def _log(
        self, delivery: _Delivery, attempt: int, status: int | None, error: str | None, *,
        delivered: bool,
    ) -> None:  # fmt: skip
        row = {
            "delivery_id": delivery.delivery_id,
            "task_id": delivery.task_id,
            "approval_id": delivery.approval_id,
            "url": delivery.url,
            "attempt": attempt,
            "status_code": status,
            "error": error,
            "delivered": delivered,
        }
        async with self._sessionmaker.begin() as session:
            await session.execute(insert(CallbackDelivery), [row])
        log.info(
            "callback_attempt",
            delivery_id=delivery.delivery_id,
            attempt=attempt,
            status=status,
            delivered=delivered,
        )

    async def deliveries(
        self, *, task_id: str | None = None, approval_id: str | None = None
    ) -> list[CallbackDelivery]:
        """Every attempt for a task or an approval, oldest first."""
        query = select(CallbackDelivery).order_by(CallbackDelivery.id)
        if task_id is not None:
            query = query.where(CallbackDelivery.task_id == task_id)
        if approval_id is not None:
            query = query.where(CallbackDelivery.approval_id == approval_id)
        async with self._sessionmaker() as session:
            return list((await session.scalars(query)).all())


@dataclass(frozen=True)
class _Delivery:
    delivery_id: str
    url: str
    event: str
    body: bytes
    task_id: str | None
    approval_id: str | None
