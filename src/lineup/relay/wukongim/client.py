"""A WuKongIM client over TCP or WebSocket: the thin I/O around the codec and the cipher.

:func:`connect` opens the socket (``tcp://host:port``, ``ws://`` or ``wss://``), sends
CONNECT with a fresh X25519 key and waits for CONNACK; the :class:`Client` it returns sends
messages (waiting for their SENDACK), hands over received ones for the caller to
acknowledge once it has kept them (RECVACK), subscribes, and pings. One reader task owns the
socket's input; everything the server says that is not an answer goes to :meth:`Client.recv`.

The protocol version asked for is sent in CONNECT; a server that negotiates says its own in
CONNACK, and that decides the layouts from then on. A server that does not is spoken to in
the layouts the official SDK's vectors check (version 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from lineup.protocol.transport_security import is_loopback_host
from lineup.relay.wukongim.codec import (
    VERIFIED_VERSION,
    Connack,
    Connect,
    Disconnect,
    Event,
    Flags,
    FrameReader,
    Packet,
    Ping,
    Pong,
    Recv,
    Recvack,
    Sendack,
    Setting,
    Sub,
    Suback,
    decode,
    encode,
)
from lineup.relay.wukongim.crypto import KeyPair, MessageCipher, MessageRejected

#: CONNACK's reason code for success (WuKongIM's ``ReasonSuccess``).
REASON_SUCCESS = 1
#: The device flag of an app-less client (0 app, 1 web, 2 pc in WuKongIM's numbering).
DEVICE_FLAG_APP = 0


class ConnectionRefused(Exception):
    """The server answered CONNACK with a reason other than success: final for this token."""

    def __init__(self, reason_code: int) -> None:
        super().__init__(f"the WuKongIM server refused the connection (reason {reason_code})")
        self.reason_code = reason_code


class ConnectionEnded(Exception):
    """The connection is gone: closed, or the server sent DISCONNECT (``reason_code``)."""

    def __init__(self, reason: str, reason_code: int | None = None) -> None:
        super().__init__(reason)
        self.reason_code = reason_code


class PlainTextRefused(Exception):
    """A ``tcp://`` or ``ws://`` address of another machine, not explicitly allowed: the token
    in CONNECT would cross the network in clear. Nothing was sent."""


def check_plain_text(url: str, *, allow_plaintext: bool) -> None:
    parts = urlsplit(url)
    plain = parts.scheme in ("tcp", "ws")
    if plain and not allow_plaintext and not is_loopback_host(parts.hostname or ""):
        raise PlainTextRefused(
            f"Refusing to connect to {parts.hostname} over plain {parts.scheme}://: the "
            "WuKongIM token would cross the network unencrypted. Use the server's wss:// "
            "address, or allow plain text explicitly on a network you trust."
        )


class _Pipe(Protocol):
    async def write(self, data: bytes) -> None: ...
    async def read(self) -> bytes: ...  # b"" once the peer has closed
    async def close(self) -> None: ...


class _TcpPipe:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def read(self) -> bytes:
        return await self._reader.read(65536)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()


class _WebSocketPipe:
    def __init__(self, socket: Any) -> None:
        self._socket = socket

    async def write(self, data: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._socket.send(data)
        except ConnectionClosed:
            raise ConnectionEnded("the WebSocket closed") from None

    async def read(self) -> bytes:
        from websockets.exceptions import ConnectionClosed

        try:
            data = await self._socket.recv()
        except ConnectionClosed:
            return b""
        return data.encode() if isinstance(data, str) else bytes(data)

    async def close(self) -> None:
        await self._socket.close()


async def _open_pipe(url: str, open_timeout: float) -> _Pipe:
    parts = urlsplit(url)
    if parts.scheme == "tcp":
        if not parts.hostname or not parts.port:
            raise ValueError(f"{url!r} needs a host and a port (tcp://host:5100)")
        async with asyncio.timeout(open_timeout):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        return _TcpPipe(reader, writer)
    if parts.scheme in ("ws", "wss"):
        from websockets.asyncio.client import connect as ws_connect

        socket = await ws_connect(url, open_timeout=open_timeout, max_size=1 << 22)
        return _WebSocketPipe(socket)
    raise ValueError(f"{url!r} is not a tcp://, ws:// or wss:// address")


@dataclass(frozen=True)
class Message:
    """A received message, decrypted; acknowledge it with :meth:`Client.ack` once kept."""

    packet: Recv
    content: bytes


class Client:
    """One connected session; build it with :func:`connect`."""

    def __init__(
        self,
        pipe: _Pipe,
        cipher: MessageCipher,
        connack: Connack,
        version: int,
        reader: FrameReader | None = None,
        ping_interval: float | None = None,
    ) -> None:
        self._pipe = pipe
        self._cipher = cipher
        self.connack = connack
        self.version = version
        self._reader = reader or FrameReader()
        self._incoming: asyncio.Queue[Message | Event | ConnectionEnded] = asyncio.Queue()
        self._sendacks: dict[int, asyncio.Future[Sendack]] = {}
        self._subacks: dict[str, asyncio.Future[Suback]] = {}
        self._pong = asyncio.Event()
        self._client_seq = 0
        self._ended: ConnectionEnded | None = None
        self._rejected = 0
        self._task = asyncio.create_task(self._read_loop())
        self._keepalive = (
            asyncio.create_task(self._keep_alive(ping_interval)) if ping_interval else None
        )

    @property
    def rejected(self) -> int:
        """How many received messages failed their key check or decryption (dropped)."""
        return self._rejected

    async def _write(self, packet: Packet) -> None:
        if self._ended is not None:
            raise self._ended
        await self._pipe.write(encode(packet, self.version))

    async def _read_loop(self) -> None:
        ended = ConnectionEnded("the server closed the connection")
        try:
            while True:
                data = await self._pipe.read()
                if not data:
                    break
                for raw in self._reader.feed(data):
                    stop = self._dispatch(decode(raw, self.version))
                    if stop is not None:
                        ended = stop
                        return
        except (OSError, ValueError) as exc:
            ended = ConnectionEnded(f"the connection failed: {exc}")
        finally:
            self._end(ended)

    async def _keep_alive(self, interval: float) -> None:
        """A PING every ``interval``; no PONG within the next one ends the session, so a
        dead network is noticed even when no message flows."""
        while self._ended is None:
            await asyncio.sleep(interval)
            try:
                await self.ping(pong_timeout=interval)
            except TimeoutError:
                self._end(ConnectionEnded(f"no PONG within {interval:g} s"))
                with contextlib.suppress(OSError):
                    await self._pipe.close()
            except (ConnectionEnded, OSError):
                return  # the reader ends the session

    def _dispatch(self, packet: Packet) -> ConnectionEnded | None:
        match packet:
            case Recv():
                try:
                    content = self._cipher.open_recv(packet)
                except MessageRejected:
                    self._rejected += 1
                    return None
                self._incoming.put_nowait(Message(packet, content))
            case Sendack():
                future = self._sendacks.pop(packet.client_seq, None)
                if future is not None and not future.done():
                    future.set_result(packet)
            case Suback():
                waiting = self._subacks.pop(packet.client_msg_no, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result(packet)
            case Pong():
                self._pong.set()
            case Ping():
                self._write_soon(Pong())
            case Event():
                self._incoming.put_nowait(packet)
            case Disconnect():
                return ConnectionEnded(
                    f"the server disconnected this client: {packet.reason or 'no reason given'}",
                    packet.reason_code,
                )
        return None

    def _write_soon(self, packet: Packet) -> None:
        task = asyncio.get_running_loop().create_task(self._write(packet))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def _end(self, ended: ConnectionEnded) -> None:
        if self._ended is not None:
            return
        self._ended = ended
        waiting: list[asyncio.Future[Any]] = [*self._sendacks.values(), *self._subacks.values()]
        for future in waiting:
            if not future.done():
                future.set_exception(ended)
        self._sendacks.clear()
        self._subacks.clear()
        self._incoming.put_nowait(ended)

    async def send(
        self,
        channel_id: str,
        channel_type: int,
        content: bytes,
        *,
        client_msg_no: str | None = None,
        setting: Setting | None = None,
        flags: Flags | None = None,
        ack_timeout: float = 10.0,
    ) -> Sendack:
        """Send one message and wait for the server's SENDACK (its ``message_id``, or a
        ``reason_code`` other than 1 when refused). ``client_msg_no`` is the dedup key;
        ``flags`` the header's delivery hints (``Flags(no_persist=True)``: not stored)."""
        self._client_seq = self._client_seq % 0xFFFF_FFFF + 1
        seq = self._client_seq
        packet = self._cipher.seal_send(
            content,
            client_seq=seq,
            client_msg_no=client_msg_no or uuid.uuid4().hex,
            channel_id=channel_id,
            channel_type=channel_type,
            setting=setting,
        )
        if flags is not None:
            packet = replace(packet, flags=flags)
        future: asyncio.Future[Sendack] = asyncio.get_running_loop().create_future()
        self._sendacks[seq] = future
        try:
            await self._write(packet)
            async with asyncio.timeout(ack_timeout):
                return await future
        finally:
            self._sendacks.pop(seq, None)

    async def recv(self) -> Message | Event:
        """The next received message or event; raises :class:`ConnectionEnded` at the end."""
        item = await self._incoming.get()
        if isinstance(item, ConnectionEnded):
            self._incoming.put_nowait(item)
            raise item
        return item

    async def ack(self, message: Message) -> None:
        await self._write(Recvack(message.packet.message_id, message.packet.message_seq))

    async def subscribe(
        self, channel_id: str, channel_type: int, *, unsubscribe: bool = False, param: str = ""
    ) -> Suback:
        client_msg_no = uuid.uuid4().hex
        future: asyncio.Future[Suback] = asyncio.get_running_loop().create_future()
        self._subacks[client_msg_no] = future
        await self._write(Sub(0, client_msg_no, channel_id, channel_type, int(unsubscribe), param))
        async with asyncio.timeout(10.0):
            return await future

    async def ping(self, pong_timeout: float = 10.0) -> None:
        """One PING, answered by PONG within ``pong_timeout`` (else :class:`TimeoutError`)."""
        self._pong.clear()
        await self._write(Ping())
        async with asyncio.timeout(pong_timeout):
            await self._pong.wait()

    async def close(self) -> None:
        self._end(ConnectionEnded("closed by this client"))
        for task in (self._task, self._keepalive):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        with contextlib.suppress(OSError):
            await self._pipe.close()


async def connect(
    url: str,
    uid: str,
    token: str,
    *,
    version: int = VERIFIED_VERSION,
    device_flag: int = DEVICE_FLAG_APP,
    device_id: str | None = None,
    key_pair: KeyPair | None = None,
    clock: Callable[[], float] = time.time,
    open_timeout: float = 10.0,
    ping_interval: float | None = 30.0,
    allow_plaintext: bool = False,
    open_pipe: Callable[[str, float], Awaitable[_Pipe]] = _open_pipe,
) -> Client:
    """Open a session: CONNECT, CONNACK, the message key. Raises :class:`ConnectionRefused`
    when the server refuses the token, :class:`ConnectionEnded` or :class:`OSError` when the
    connection fails, :class:`TimeoutError` when no CONNACK comes. ``ping_interval`` keeps
    the session alive (WuKongIM drops clients that stay silent) and notices a dead one.
    Plain ``tcp://`` and ``ws://`` go to loopback only unless ``allow_plaintext``
    (:class:`PlainTextRefused`)."""
    check_plain_text(url, allow_plaintext=allow_plaintext)
    keys = key_pair or KeyPair.generate()
    pipe = await open_pipe(url, open_timeout)
    try:
        hello = Connect(version, device_flag, device_id or uuid.uuid4().hex, uid, token,
                        int(clock() * 1000), keys.public_base64)  # fmt: skip
        await pipe.write(encode(hello, version))
        reader = FrameReader()
        async with asyncio.timeout(open_timeout):
            frames: list[bytes] = []
            while not frames:
                data = await pipe.read()
                if not data:
                    raise ConnectionEnded("the server closed the connection before CONNACK")
                frames = reader.feed(data)
        connack = decode(frames[0], version)
        if not isinstance(connack, Connack):
            raise ConnectionEnded(f"the server answered CONNECT with {type(connack).__name__}")
        if connack.reason_code != REASON_SUCCESS:
            raise ConnectionRefused(connack.reason_code)
        negotiated = (
            connack.server_version
            if connack.server_version is not None
            else min(version, VERIFIED_VERSION)
        )
        cipher = keys.cipher(connack.server_key, connack.salt)
        client = Client(pipe, cipher, connack, negotiated, reader, ping_interval)
        for extra in frames[1:]:
            client._dispatch(decode(extra, negotiated))
        return client
    except BaseException:
        with contextlib.suppress(OSError):
            await pipe.close()
        raise
