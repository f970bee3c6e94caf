"""How the agent reaches the hub: one text-frame connection, behind a small protocol.

The default :class:`WebSocketTransport` uses ``websockets``; tests pass an in-memory
transport with the same two methods, so no test needs a socket.

A transport reports failures in three ways, and the agent treats them differently:

* :class:`~lineup.sdk.ConnectionRefusedByHub` — the hub refused the credential: final;
* :class:`~lineup.sdk.InsecureConnection` — the agent refused the hub (plain text to another
  machine, a certificate that does not match its pin or that nobody vouches for), before
  sending anything: final;
* :class:`TransportError`, :class:`OSError` or :class:`TimeoutError` from ``connect`` — the
  network or the hub is unavailable: retried with backoff;
* :class:`TransportClosed` from ``send``/``recv`` — the open connection ended: reconnect.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from lineup import __version__
from lineup.protocol.errors import ErrorCode
from lineup.sdk._errors import ConnectionRefusedByHub
from lineup.sdk._tls import TlsTrust, is_verification_failure


class TransportError(Exception):
    """The connection could not be opened; worth trying again later."""


class TransportClosed(Exception):
    """The connection ended; ``code`` is the WebSocket close code when one was received."""

    def __init__(self, code: int | None = None, reason: str = "") -> None:
        super().__init__(f"connection closed ({code}): {reason}" if code else "connection closed")
        self.code = code
        self.reason = reason


@runtime_checkable
class Connection(Protocol):
    """One open connection carrying text frames (JSON) both ways."""

    async def send(self, text: str) -> None:
        """Send one frame; raises :class:`TransportClosed` if the connection is gone."""
        ...

    async def recv(self) -> str:
        """The next frame; raises :class:`TransportClosed` once the connection has ended."""
        ...

    async def close(self) -> None:
        """Close; safe to call more than once."""
        ...


@runtime_checkable
class Transport(Protocol):
    """Opens connections to the hub."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        """Open a connection to ``url`` sending ``headers`` (``Authorization``)."""
        ...


class WebSocketTransport:
    """The default transport: ``websockets`` with the agent's bearer credential.

    Keepalive pings (``ping_interval``) detect a dead network even when no frame flows.
    ``tls`` checks every address first (see :mod:`lineup.sdk._tls`): plain ``ws://`` only to
    loopback unless allowed, ``wss://`` verified by the pinned fingerprint or an authority.
    """

    def __init__(
        self,
        *,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        max_size: int = 1 << 20,
        tls: TlsTrust | None = None,
    ) -> None:
        self._open_timeout = open_timeout
        self._ping_interval = ping_interval
        self._max_size = max_size
        self.tls = tls if tls is not None else TlsTrust()

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus, InvalidURI, WebSocketException

        context = await self.tls.context(url)  # raises InsecureConnection; nothing sent yet
        try:
            socket = await connect(
                url,
                ssl=context,
                additional_headers=dict(headers),
                user_agent_header=f"lineup-sdk/{__version__}",
                open_timeout=self._open_timeout,
                ping_interval=self._ping_interval,
                max_size=self._max_size,
            )
        except InvalidURI as exc:
            raise ValueError(f"{url!r} is not a WebSocket URL: {exc}") from None
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status in (401, 403):
                raise _refusal_from_http(status, exc.response.body) from None
            raise TransportError(f"the hub answered HTTP {status} to the upgrade") from exc
        except WebSocketException as exc:
            raise TransportError(str(exc)) from exc
        except OSError as exc:
            if is_verification_failure(exc):
                raise await self.tls.untrusted(url, exc) from None
            raise
        return _WebSocketConnection(socket)


class _WebSocketConnection:
    def __init__(self, socket: Any) -> None:
        self._socket = socket

    async def send(self, text: str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._socket.send(text)
        except ConnectionClosed as exc:
            raise _closed(exc) from None

    async def recv(self) -> str:
        from websockets.exceptions import ConnectionClosed

        try:
            data = await self._socket.recv()
        except ConnectionClosed as exc:
            raise _closed(exc) from None
        return data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")

    async def close(self) -> None:
        await self._socket.close()


def _closed(exc: Any) -> TransportClosed:
    received = getattr(exc, "rcvd", None)
    if received is None:
        return TransportClosed(None, "no close frame received")
    return TransportClosed(int(received.code), str(received.reason))


def _refusal_from_http(status: int, body: bytes | bytearray | None) -> ConnectionRefusedByHub:
    code = ErrorCode.UNAUTHENTICATED if status == 401 else ErrorCode.FORBIDDEN
    message = f"The hub refused the agent credential (HTTP {status})."
    details: dict[str, Any] = {}
    try:
        data = json.loads(body or b"")
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            message = str(error.get("message") or message)
            if isinstance(error.get("details"), dict):
                details = error["details"]
    except ValueError:
        pass
    return ConnectionRefusedByHub(code.value, message, details=details)
