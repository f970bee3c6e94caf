"""Web Push delivery (RFC 8030 / 8291 / 8292) with ``pywebpush``: the payload is encrypted
for the device (aes128gcm) and signed with the hub's VAPID key; the push service's answer says
what happens next."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import aiohttp
from py_vapid import Vapid
from pywebpush import WebPushException, webpush_async

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


def classify(status: int, body: str = "", retry_after: str | None = None) -> SendResult:
    if 200 <= status < 300:
        return SendResult("delivered", status)
    text = f"{status} from the push service" + (f": {body.strip()[:200]}" if body.strip() else "")
    if status in (404, 410):
        return SendResult("expired", status, text)
    if status == 429 or status >= 500:
        return SendResult("retry", status, text, retry_after_seconds(retry_after))
    return SendResult("failed", status, text)


class PushSender:
    def __init__(self, keys: VapidKeys, subject: str, *, timeout: float = 10.0) -> None:
        self.keys = keys
        self.subject = subject
        self.timeout = timeout
        self._vapid = Vapid.from_string(private_key=keys.private_key)
        self._session: aiohttp.ClientSession | None = None

    async def send(self, device: Device, data: dict[str, Any], *, tag: str) -> SendResult:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
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
            status = exc.status_code
            if status is None:
                return SendResult("retry", None, f"push failed: {exc.message}")
            body = ""
            if exc.response is not None:
                try:
                    body = await exc.response.text()
                except Exception:
                    body = ""
            return classify(int(status), body, exc.retry_after)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return SendResult("retry", None, f"push service unreachable: {type(exc).__name__}")
        status = getattr(response, "status", 201)
        return classify(int(status))

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
            # Let aiohttp's connector finish closing its transports (no ResourceWarning).
            await asyncio.sleep(0)
