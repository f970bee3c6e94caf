"""How ``lineup serve`` holds connections: not forever, not without bound, not out of files.

Every open connection costs the hub a file descriptor. A client that opens connections and
sends nothing (or sends its headers a byte at a time) would otherwise keep them until the
process runs out of descriptors, and then even ``/healthz`` fails. So:

- a request's headers must arrive within ``header_timeout`` seconds of the connection
  opening (or, on a kept-alive connection, of that request's first byte), else the hub
  closes the connection; an idle kept-alive connection closes after ``keep_alive_timeout``
  (uvicorn's own timer);
- one client address may hold at most ``max_connections_per_address`` HTTP connections at
  once; more are answered 503 and closed. A WebSocket counts until its upgrade: from then on
  it is the socket's own business (an agent's must say hello, a person's must be signed in);
- at start the soft open-files limit is raised to the hard one.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineup.hub.config import Settings

log = logging.getLogger("lineup.hub")

_FAR_ENOUGH = 1 << 20
"""The open-files target when the hard limit is unlimited (Linux's default ``nr_open``)."""

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: 45\r\n\r\n"
    b"Too many open connections from this address.\n"
)


def open_files_target(soft: int, hard: int) -> int:
    """The soft limit to ask for: the hard limit, or a large finite one if that is unlimited;
    never lower than what the process has."""
    if hard == resource.RLIM_INFINITY:
        return soft if soft == resource.RLIM_INFINITY else max(soft, _FAR_ENOUGH)
    return max(soft, hard)


def raise_open_files_limit() -> int:
    """Raise RLIMIT_NOFILE's soft limit as far as allowed; returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = open_files_target(soft, hard)
    if target != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d: %s", soft, exc)
            return soft
    return target


def guarded_http_protocol(
    header_timeout: float, max_per_address: int
) -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol with a header timeout and a per-address cap.

    It relies on that protocol's hooks (``connection_made``, ``on_message_begin``,
    ``on_headers_complete``, ``handle_websocket_upgrade``, ``connection_lost``);
    tests/e2e run it (``lineup serve``).
    """
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools: uvicorn's choice, without these guards
        log.warning("httptools is not installed: no header timeout or per-address cap")
        return "auto"

    open_by_address: dict[str, int] = {}

    class GuardedHttpProtocol(HttpToolsProtocol):
        _address: str | None = None
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else None
            if address is not None and max_per_address > 0:
                if open_by_address.get(address, 0) >= max_per_address:
                    transport.write(_BUSY)
                    transport.close()
                    return
                open_by_address[address] = open_by_address.get(address, 0) + 1
                self._address = address
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._header_timer is None:  # the next request on a kept-alive connection
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def handle_websocket_upgrade(self) -> None:
            self._disarm()
            self._release()
            super().handle_websocket_upgrade()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._release()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if header_timeout > 0:
                self._header_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def _release(self) -> None:
            address, self._address = self._address, None
            if address is not None:
                left = open_by_address[address] - 1
                if left:
                    open_by_address[address] = left
                else:
                    del open_by_address[address]

    return GuardedHttpProtocol


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The uvicorn settings for the HTTP edge, from the hub's settings."""
    return {
        "http": guarded_http_protocol(
            settings.header_timeout, settings.max_connections_per_address
        ),
        "timeout_keep_alive": settings.keep_alive_timeout,
    }
