"""JSON-RPC over a subprocess's stdio, one JSON object per line, in both directions.

Engines such as ``codex app-server`` answer the host's requests, send it notifications, and
make requests of their own (a tool call, an approval) that may wait as long as a person
does. A :class:`JsonRpcPeer` matches responses to requests, hands notifications to a
callback in order, and runs each incoming request as its own task so a slow answer does not
hold up the stream — and so an interrupted turn can cancel it (:meth:`cancel_incoming`).

The ``jsonrpc: "2.0"`` member is optional on the wire (Codex omits it); it is accepted on
input and left out on output unless asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lineup.protocol.errors import ErrorCode

NotificationHandler = Callable[[str, Mapping[str, Any]], None]
RequestHandler = Callable[[str, Mapping[str, Any]], Awaitable[Any]]

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

MAX_LINE = 64 * 1024 * 1024
"""A line may carry a whole command's output or a file's diff."""


class RpcError(Exception):
    """The peer answered a request with an error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class PeerGone(Exception):
    """The peer's output ended (it exited or closed stdout) before it answered."""

    code = ErrorCode.UNAVAILABLE


class MethodNotFound(Exception):
    """Raised by a request handler for a method it does not serve."""


class JsonRpcPeer:
    """One end of a line-delimited JSON-RPC conversation."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
        with_version: bool = False,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notification = on_notification
        self._on_request = on_request
        self._with_version = with_version
        self._next_id = 1
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._incoming: dict[int | str, asyncio.Task[None]] = {}
        self._silenced: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._reading: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        """Set when the peer's output has ended; every pending request then fails."""
        self.unparsed: list[str] = []
        """Lines that were not JSON (an engine's stray print), kept for diagnostics."""

    def start(self) -> None:
        self._reading = asyncio.create_task(self._read_loop(), name="jsonrpc-read")

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        if self.closed.is_set():
            raise PeerGone(f"the peer is gone; {method} not sent")
        ident = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            await self._send({"id": ident, "method": method, "params": dict(params or {})})
            return await future
        finally:
            self._pending.pop(ident, None)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._send(message)

    async def cancel_incoming(self, *, reply: bool = True) -> int:
        """Cancel every incoming request still being answered, and wait until each handler
        has ended; each is answered with a "request cancelled" error unless ``reply`` is
        false (for a peer that has already dropped the request, as Codex does on an
        interrupt). Returns how many there were."""
        tasks = [t for t in self._incoming.values() if not t.done()]
        for task in tasks:
            if not reply:
                self._silenced.add(task)
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)

    @property
    def incoming_pending(self) -> int:
        return sum(1 for t in self._incoming.values() if not t.done())

    async def aclose(self) -> None:
        await self.cancel_incoming(reply=False)
        if self._reading is not None:
            self._reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reading
        self._fail_pending()
        with contextlib.suppress(Exception):
            self._writer.close()

    # --- internals ----------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        if self._with_version:
            message = {"jsonrpc": "2.0", **message}
        line = json.dumps(message, separators=(",", ":")) + "\n"
        async with self._write_lock:
            try:
                self._writer.write(line.encode())
                await self._writer.drain()
            except (ConnectionError, RuntimeError) as error:
                raise PeerGone(f"cannot write to the peer: {error}") from error

    async def _read_loop(self) -> None:
        try:
            while True:
                try:
                    line = await self._reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as end:
                    if end.partial.strip():
                        self._dispatch(end.partial)
                    return
                except (asyncio.LimitOverrunError, ValueError):
                    # a line beyond the limit: drop it rather than the whole session
                    await self._reader.read(MAX_LINE)
                    continue
                self._dispatch(line)
        except (ConnectionError, OSError):
            return
        finally:
            self.closed.set()
            self._fail_pending()

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(PeerGone("the peer exited before it answered"))

    def _dispatch(self, raw: bytes) -> None:
        text = raw.decode(errors="replace").strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except ValueError:
            self.unparsed.append(text[:2000])
            return
        if not isinstance(message, dict):
            self.unparsed.append(text[:2000])
            return
        method = message.get("method")
        ident = message.get("id")
        params = message.get("params") or {}
        if isinstance(method, str) and ident is not None:
            task = asyncio.create_task(self._answer(ident, method, params))
            self._incoming[ident] = task
            task.add_done_callback(self._forget(ident))
        elif isinstance(method, str):
            self._on_notification(method, params)
        elif ident is not None and ident in self._pending:
            future = self._pending[ident]
            if future.done():
                return
            if "error" in message and message["error"] is not None:
                error = message["error"] or {}
                future.set_exception(
                    RpcError(
                        int(error.get("code", INTERNAL_ERROR)),
                        str(error.get("message", "error")),
                        error.get("data"),
                    )
                )
            else:
                future.set_result(message.get("result"))

    def _forget(self, ident: int | str) -> Callable[[asyncio.Task[None]], None]:
        def forget(_task: asyncio.Task[None]) -> None:
            self._incoming.pop(ident, None)

        return forget

    async def _answer(self, ident: int | str, method: str, params: Mapping[str, Any]) -> None:
        reply: dict[str, Any]
        try:
            result = await self._on_request(method, params)
            reply = {"id": ident, "result": result}
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task in self._silenced:
                self._silenced.discard(task)
                return
            reply = {"id": ident, "error": {"code": REQUEST_CANCELLED, "message": "cancelled"}}
        except MethodNotFound:
            reply = {"id": ident, "error": {"code": METHOD_NOT_FOUND, "message": method}}
        except Exception as error:  # the engine gets an answer, whatever went wrong here
            reply = {"id": ident, "error": {"code": INTERNAL_ERROR, "message": str(error)}}
        with contextlib.suppress(PeerGone):
            await self._send(reply)


__all__ = ["JsonRpcPeer", "MethodNotFound", "PeerGone", "RpcError"]
