"""Web Push delivery (RFC 8030 / 8291 / 8292) with ``pywebpush``: the payload is encrypted
for the device (aes128gcm) and signed with the hub's VAPID key; the push service's answer says
what happens next.

Every request goes through :mod:`lineup.hub.notify.endpoints`' rules: the URL before sending and
at every redirect (a client middleware), the addresses a name resolves to when connecting (the
connector's resolver). What a push service answered is reported by its status alone: its body
is a third party's text and never reaches the person or the database.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from py_vapid import Vapid
from pywebpush import WebPushException, webpush_async

from lineup.hub.notify.endpoints import EndpointRefused, PushPolicy, public_address
from lineup.store.notifications import Device, VapidKeys

PUSH_TTL_SECONDS = 24 * 3600
"""How long a push service keeps a message for a device that is offline."""


@dataclass(frozen=True, slots=True)
class SendResult:
    """``outcome``: delivered, retry (429/5xx/network), failed (refused for good) or expired
    (404/410: the subscription is gone)."""

    outcome: str
    status_code: int | None = None
    error: str | None = None
    retry_after_s: float | None = None


def topic_for(tag: str) -> str:
    """The ``Topic`` header (≤ 32 URL-safe base64 characters): a push service replaces a
    still-undelivered message with the same topic, so a resend never arrives twice."""
    return base64.urlsafe_b64encode(hashlib.sha256(tag.encode()).digest()).decode()[:32]


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime
        from time import time

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time())
        except (TypeError, ValueError):
            return None


_STATUS_MEANING = {
    400: "it found the message malformed",
    401: "it did not accept the hub's signature",
    403: "it did not accept the hub's signature",
    404: "the subscription no longer exists",
    410: "the subscription no longer exists",
    413: "the message was too large",
    429: "it asked the hub to slow down",
}


def classify(status: int, retry_after: str | None = None) -> SendResult:
    """The outcome of the push service's answer, described by its status only."""
    if 200 <= status < 300:
        return SendResult("delivered", status)
    meaning = _STATUS_MEANING.get(status) or (
        "it is unavailable" if status >= 500 else "it refused the message"
    )
    text = f"The push service answered {status}: {meaning}."
    if status in (404, 410):
        return SendResult("expired", status, text)
    if status == 429 or status >= 500:
        return SendResult("retry", status, text, retry_after_seconds(retry_after))
    return SendResult("failed", status, text)


class AddressRefused(OSError):
    """A push host resolved to an address the hub does not post to."""


class GuardedResolver(AbstractResolver):
    """Resolves as usual, then refuses a name with any non-public address unless the
    operator listed its host. Runs at connect time, on the addresses actually used."""

    def __init__(self, policy: PushPolicy, inner: AbstractResolver | None = None) -> None:
        self.policy = policy
        self.inner = inner or aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        if self.policy.operator_listed(host):
            return results
        if not results or any(not public_address(r["host"]) for r in results):
            raise AddressRefused(f"{host} resolves to an address that is not public.")
        return results

    async def close(self) -> None:
        await self.inner.close()


def _checked_every_hop(policy: PushPolicy) -> aiohttp.ClientMiddlewareType:
    """A client middleware: the first request and each redirect must pass the URL rules
    (an address literal never reaches the resolver, so this is where it is caught)."""

    async def middleware(
        request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        policy.check(str(request.url))
        return await handler(request)

    return middleware


def _refusal(exc: BaseException) -> str | None:
    """The reason if ``exc`` (or what it wraps) is one of the hub's own refusals."""
    seen: BaseException | None = exc
    for _ in range(5):  # aiohttp wraps a resolver's error once or twice
        if seen is None:
            break
        if isinstance(seen, (EndpointRefused, AddressRefused)):
            return str(seen)
        seen = getattr(seen, "os_error", None) or seen.__cause__
    return None


class PushSender:
    def __init__(
        self,
        keys: VapidKeys,
        subject: str,
        policy: PushPolicy,
        *,
        timeout: float = 10.0,
        resolver: AbstractResolver | None = None,
    ) -> None:
        self.keys = keys
        self.subject = subject
        self.policy = policy
        self.timeout = timeout
        self._resolver = resolver
        self._vapid = Vapid.from_string(private_key=keys.private_key)
        self._session: aiohttp.ClientSession | None = None

    def _open_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(resolver=GuardedResolver(self.policy, self._resolver))
        return aiohttp.ClientSession(
            connector=connector, middlewares=(_checked_every_hop(self.policy),)
        )

    async def send(self, device: Device, data: dict[str, Any], *, tag: str) -> SendResult:
        try:
            self.policy.check(device.endpoint)
        except EndpointRefused as exc:
            return SendResult("failed", None, f"Not sent: {exc}")
        if self._session is None or self._session.closed:
            self._session = self._open_session()
        subscription: dict[str, Any] = {
            "endpoint": device.endpoint,
            "keys": {"p256dh": device.p256dh, "auth": device.auth},
        }
        try:
            response = await webpush_async(
                subscription,
                data=json.dumps(data, separators=(",", ":")),
                vapid_private_key=self._vapid,
                vapid_claims={"sub": self.subject},  # a fresh dict: pywebpush adds aud and exp
                ttl=PUSH_TTL_SECONDS,
                timeout=self.timeout,
                headers={"Topic": topic_for(tag), "Urgency": "high"},
                aiohttp_session=self._session,
            )
        except WebPushException as exc:
            # Its message quotes the push service's reply: only the status is used.
            if exc.status_code is None:
                return SendResult("retry", None, "The push service could not be reached.")
            return classify(int(exc.status_code), exc.retry_after)
        except (EndpointRefused, aiohttp.ClientError, TimeoutError, OSError) as exc:
            reason = _refusal(exc)
            if reason is not None:
                return SendResult("failed", None, f"Not sent: {reason}")
            return SendResult(
                "retry", None, f"The push service could not be reached ({type(exc).__name__})."
            )
        status = getattr(response, "status", 201)
        return classify(int(status))

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
            # Let aiohttp's connector finish closing its transports (no ResourceWarning).
            await asyncio.sleep(0)
