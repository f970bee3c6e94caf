"""Local stand-ins for the outside world of notifications, for tests and ``bench/bench_push.py``.

``PushService`` is a Web Push service on 127.0.0.1. Each ``BrowserDevice`` makes its keys as a
browser does (a P-256 key pair and a 16-byte auth secret), and the service **decrypts** every
message it receives with them (RFC 8291 aes128gcm via ``http_ece``) and checks the VAPID
signature (RFC 8292), so nothing inside LineUp is mocked. A device can be told to answer with
other statuses (429, 503, 410, …) first.

``MailServer`` is an SMTP server (``aiosmtpd``) on 127.0.0.1 that keeps what it receives and can
refuse the first messages with a given reply.
"""

from __future__ import annotations

import base64
import email
import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import http_ece
from aiosmtpd.controller import Controller
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    device: str
    status: int
    payload: dict[str, Any] | None
    raw: bytes
    headers: dict[str, str]
    vapid_ok: bool
    at: float  # time.perf_counter() when it arrived


@dataclass(frozen=True)
class Answer:
    status: int = 201
    retry_after: str | None = None
    body: str = ""
    location: str | None = None


@dataclass
class BrowserDevice:
    name: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: os.urandom(16))
    answers: deque[Answer] = field(default_factory=deque)

    def subscription(self, label: str | None = None) -> dict[str, Any]:
        """``PushSubscription.toJSON()`` as a browser sends it, plus a label."""
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)},
            "label": label or self.name,
        }

    def answer(
        self,
        *statuses: int,
        retry_after: str | None = None,
        body: str = "",
        location: str | None = None,
    ) -> None:
        """Answer the next messages with these statuses (then 201 again)."""
        for status in statuses:
            self.answers.append(Answer(status, retry_after, body, location))

    def decrypt(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(
            body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm"
        )
        decoded: dict[str, Any] = json.loads(plain)
        return decoded


def _vapid_ok(authorization: str, endpoint: str) -> bool:
    """``vapid t=<JWT>,k=<key>``: signed by k, for this push service's origin, not expired."""
    try:
        if not Vapid02.verify(authorization):
            return False
        token = authorization.split(" ", 1)[1].split(",")[0].split("=", 1)[1]
        claims = json.loads(b64url_decode(token.split(".")[1]))
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(endpoint))
        return bool(
            claims.get("aud") == origin and claims.get("exp", 0) > time.time() and claims.get("sub")
        )
    except Exception:
        return False


class PushService:
    def __init__(self) -> None:
        self.devices: dict[str, BrowserDevice] = {}
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                name = self.path.rsplit("/", 1)[-1]
                answer = service._next_answer(name)
                status = answer.status
                device = service.devices.get(name)
                payload = None
                if device is not None and body:
                    payload = device.decrypt(body)
                received = Received(
                    device=name,
                    status=status,
                    payload=payload,
                    raw=body,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    vapid_ok=_vapid_ok(
                        self.headers.get("Authorization", ""),
                        device.endpoint if device else "",
                    ),
                    at=time.perf_counter(),
                )
                with service._arrived:
                    service.received.append(received)
                    service._arrived.notify_all()
                self.send_response(status)
                if answer.retry_after is not None:
                    self.send_header("Retry-After", answer.retry_after)
                if answer.location is not None:
                    self.send_header("Location", answer.location)
                reply = answer.body.encode()
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> PushService:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def device(self, name: str) -> BrowserDevice:
        device = BrowserDevice(name, f"{self.url}/push/{name}")
        self.devices[name] = device
        return device

    def _next_answer(self, name: str) -> Answer:
        device = self.devices.get(name)
        if device is None:
            return Answer(404)
        with self._lock:
            if device.answers:
                return device.answers.popleft()
        return Answer()

    def delivered(self, device: str | None = None) -> list[Received]:
        with self._lock:
            return [
                r
                for r in self.received
                if 200 <= r.status < 300 and (device is None or r.device == device)
            ]

    def wait_for(
        self, predicate: Callable[[list[Received]], Any], what: str, timeout: float = 10.0
    ) -> Any:
        """Block until ``predicate(received)`` is truthy; no fixed sleeps."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                value = predicate(list(self.received))
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}")
                self._arrived.wait(left)


@dataclass
class Mail:
    sender: str
    recipients: list[str]
    message: Message

    @property
    def text(self) -> str:
        part = self.message.get_payload(decode=True) if not self.message.is_multipart() else b""
        return (part or b"").decode() if isinstance(part, bytes) else str(part)


class MailServer:
    def __init__(self) -> None:
        self.mails: list[Mail] = []
        self.refusals: deque[str] = deque()
        self.attempts = 0
        self._lock = threading.Condition()
        server = self

        class Handler:
            async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
                with server._lock:
                    server.attempts += 1
                    if server.refusals:
                        return server.refusals.popleft()
                    message = email.message_from_bytes(envelope.content)
                    server.mails.append(Mail(envelope.mail_from, list(envelope.rcpt_tos), message))
                    server._lock.notify_all()
                return "250 Message accepted for delivery"

        self.port = _free_port()
        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> MailServer:
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()

    def refuse(self, *replies: str) -> None:
        """Answer the next messages' DATA with these replies, e.g. ``"451 4.3.0 try later"``."""
        with self._lock:
            self.refusals.extend(replies)

    def wait_for(
        self, predicate: Callable[[list[Mail]], Any], what: str, timeout: float = 10.0
    ) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = predicate(list(self.mails))
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}")
                self._lock.wait(left)
