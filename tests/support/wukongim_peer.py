"""A loopback WuKongIM peer written with the codec: the server's part of a session.

It has its own X25519 key and salt, answers CONNECT, SEND and PING, and records what the
client sent; tests push RECVs and DISCONNECTs through it. It checks a client's I/O, not the
bytes (the official SDK's vectors do that).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from lineup.relay.wukongim import (
    Connack,
    Connect,
    FrameReader,
    KeyPair,
    MessageCipher,
    Ping,
    Pong,
    Recv,
    Recvack,
    Send,
    Sendack,
    Setting,
    decode,
    encode,
)

SALT = "0123456789abcdef"


class Peer:
    """The server side of one session; records what the client sent."""

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        refuse: bool = False,
        server_version: int | None = None,
        answer_pings: bool = True,
    ) -> None:
        self.write = write
        self.refuse = refuse
        self.server_version = server_version
        self.answer_pings = answer_pings
        self.version = 2
        self.keys = KeyPair(bytes(range(1, 33)))
        self.cipher: MessageCipher | None = None
        self.connect: Connect | None = None
        self.sent: list[bytes] = []
        self.recvacks: list[Recvack] = []
        self.got_recvack = asyncio.Event()
        self.pings = 0
        self.last_send: Send | None = None

    async def on_packet(self, raw: bytes) -> None:
        packet = decode(raw, self.version)
        match packet:
            case Connect():
                self.connect = packet
                code = 2 if self.refuse else 1
                connack = Connack(0, code, self.keys.public_base64, SALT, self.server_version, 7)
                await self.write(encode(connack))
                if self.server_version is not None:
                    self.version = self.server_version
                self.cipher = self.keys.cipher(packet.client_key, SALT)
            case Send():
                assert self.cipher is not None
                content = self.cipher.open_send(packet)
                self.sent.append(content)
                self.last_send = packet
                await self.write(encode(Sendack(1000 + packet.client_seq, packet.client_seq, 1, 1)))
                if content == b"echo":
                    await self.push(b'{"echo":true}')
            case Recvack():
                self.recvacks.append(packet)
                self.got_recvack.set()
            case Ping():
                self.pings += 1
                if self.answer_pings:
                    await self.write(encode(Pong()))

    async def push(self, content: bytes, *, forged: bool = False) -> None:
        assert self.cipher is not None
        recv = Recv(
            Setting(), "", "person", "person", 1, "m-1", 77, 5, 1, self.cipher.encrypt(content)
        )
        key = "0" * 32 if forged else self.cipher.recv_msg_key(recv)
        await self.write(encode(Recv(**{**_fields(recv), "msg_key": key}), self.version))


def _fields(packet: Recv) -> dict[str, object]:
    return {name: getattr(packet, name) for name in packet.__dataclass_fields__}


Serve = Callable[..., contextlib.AbstractAsyncContextManager[tuple[str, list[Peer]]]]


@contextlib.asynccontextmanager
async def tcp_peer(**options: Any) -> AsyncIterator[tuple[str, list[Peer]]]:
    peers: list[Peer] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        peer = Peer(write, **options)
        peers.append(peer)
        frames = FrameReader()
        while data := await reader.read(65536):
            for raw in frames.feed(data):
                await peer.on_packet(raw)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"tcp://127.0.0.1:{port}", peers


@contextlib.asynccontextmanager
async def ws_peer(**options: Any) -> AsyncIterator[tuple[str, list[Peer]]]:
    peers: list[Peer] = []

    async def handle(socket: ServerConnection) -> None:
        peer = Peer(socket.send, **options)
        peers.append(peer)
        frames = FrameReader()
        async for data in socket:
            for raw in frames.feed(bytes(data) if not isinstance(data, str) else data.encode()):
                await peer.on_packet(raw)

    async with serve(handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}", peers
