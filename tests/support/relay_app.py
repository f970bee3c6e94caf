"""A stand-in for the web app in relay mode: LineUp's tunnel (3101–3104) spoken over the
Python WuKongIM client, as a person's IM user, to the agent's uid — what the web app does
with the official JS SDK, written from docs/relay-mode.md.

It acknowledges every message it receives, drops repeats by message id, reassembles
responses and keeps them per request id (a request answered twice would show; so would a
second answer that differs from the first, which a replay from the host's ledger never does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from lineup.relay import tunnel
from lineup.relay.media import Media
from lineup.relay.wukongim.client import Client, ConnectionEnded, Message, connect
from lineup.relay.wukongim.codec import Flags

ANSWER_SECONDS = 30.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class TunnelSocket:
    id: str
    frames: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    closed: asyncio.Future[tuple[int, str]] | None = None


class TunnelApp:
    def __init__(self, client: Client, agent_uid: str) -> None:
        self.client = client
        self.agent_uid = agent_uid
        self.answered: Counter[str] = Counter()
        self.answers: defaultdict[str, list[Answer]] = defaultdict(list)
        self.texts: asyncio.Queue[str] = asyncio.Queue()
        self.media: asyncio.Queue[Media] = asyncio.Queue()
        self._responses: dict[str, asyncio.Future[Answer]] = {}
        self._reassembly = tunnel.Reassembly()
        self._seen: set[int] = set()
        self._sockets: dict[str, TunnelSocket] = {}
        self._reader = asyncio.create_task(self._read())
        self.workspace_id = ""

    @classmethod
    async def open(cls, server: str, uid: str, token: str, agent_uid: str) -> TunnelApp:
        return cls(await connect(server, uid, token, ping_interval=None), agent_uid)

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self.client.close()

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionEnded):
            while True:
                item = await self.client.recv()
                if not isinstance(item, Message):
                    continue
                await self.client.ack(item)
                if item.packet.message_id in self._seen:
                    continue
                self._seen.add(item.packet.message_id)
                if item.packet.from_uid == self.agent_uid:
                    self._on(tunnel.parse(item.content))

    def _on(self, parsed: tunnel.Message | None) -> None:
        match parsed:
            case tunnel.ResponsePart():
                whole = self._reassembly.add(parsed)
                if whole is None:
                    return
                self.answered[whole.id] += 1
                answer = Answer(whole.status, whole.headers, whole.body)
                self.answers[whole.id].append(answer)
                waiting = self._responses.get(whole.id)
                if waiting is not None and not waiting.done():
                    waiting.set_result(answer)
            case tunnel.SocketFrame():
                socket = self._sockets.get(parsed.socket)
                if socket is not None:
                    socket.frames.put_nowait(json.loads(parsed.data))
            case tunnel.SocketClose():
                closing = (
                    list(self._sockets.values())
                    if parsed.socket == tunnel.ALL_SOCKETS
                    else [s for s in [self._sockets.get(parsed.socket)] if s is not None]
                )
                for socket in closing:
                    if socket.closed is not None and not socket.closed.done():
                        socket.closed.set_result((parsed.code, parsed.reason))
            case tunnel.Text():
                self.texts.put_nowait(parsed.content)
            case Media():
                self.media.put_nowait(parsed)

    # --- 3101 / 3102 -----------------------------------------------------------------------

    async def send_request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        request_id: str | None = None,
        headers: dict[str, str] | None = None,
        file: tunnel.FileRef | None = None,
    ) -> str:
        """Send a request (persisted); returns its id. Its answer: :meth:`answer`. ``file``:
        its body is a file stored with TSDD (``body`` stays None)."""
        rid = request_id or uuid.uuid4().hex
        self._responses.setdefault(rid, asyncio.get_running_loop().create_future())
        sent_headers = {"content-type": "application/json", **(headers or {})}
        req = tunnel.Request(
            rid, method, path, sent_headers, None if body is None else json.dumps(body), file
        )
        ack = await self.client.send(self.agent_uid, 1, tunnel.request(req))
        assert ack.reason_code == 1, ack
        return rid

    async def answer(self, request_id: str) -> Answer:
        """The request's whole response (within :data:`ANSWER_SECONDS`)."""
        future = self._responses.setdefault(request_id, asyncio.get_running_loop().create_future())
        async with asyncio.timeout(ANSWER_SECONDS):
            return await asyncio.shield(future)

    async def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Answer:
        return await self.answer(await self.send_request(method, path, body, **kw))

    async def ok(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        answer = await self.call(method, path, body)
        assert answer.status == status, (answer.status, answer.body)
        return answer.json()

    def ws(self, path: str) -> str:
        return f"/api/workspaces/{self.workspace_id}{path}"

    async def find_workspace(self) -> str:
        listed = await self.ok("GET", "/api/workspaces")
        self.workspace_id = listed["workspaces"][0]["id"]
        return self.workspace_id

    # --- 3103 ------------------------------------------------------------------------------

    async def open_socket(self, path: str) -> TunnelSocket:
        socket = TunnelSocket(uuid.uuid4().hex)
        socket.closed = asyncio.get_running_loop().create_future()
        self._sockets[socket.id] = socket
        await self.client.send(
            self.agent_uid, 1, tunnel.socket_open(socket.id, path), flags=Flags(no_persist=True)
        )
        return socket

    async def socket_send(self, socket: TunnelSocket, frame: dict[str, Any]) -> None:
        await self.client.send(
            self.agent_uid,
            1,
            tunnel.socket_frame(socket.id, json.dumps(frame)),
            flags=Flags(no_persist=True),
        )

    async def socket_close(self, socket: TunnelSocket) -> None:
        await self.client.send(
            self.agent_uid, 1, tunnel.socket_close(socket.id), flags=Flags(no_persist=True)
        )

    # --- 3104 and text ---------------------------------------------------------------------

    async def register_tools(self, tools: list[dict[str, Any]]) -> None:
        await self.client.send(self.agent_uid, 1, tunnel.tools(tools))

    async def send_text(self, text: str) -> None:
        await self.client.send(self.agent_uid, 1, tunnel.text(text))

    async def send_content(self, content: bytes) -> None:
        """Any content as it is (an image or file message, as TSDD's apps send them)."""
        await self.client.send(self.agent_uid, 1, content)
