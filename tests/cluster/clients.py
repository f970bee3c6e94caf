"""Raw WebSocket clients for the cluster tests: a browser (``/ws/client`` with a session
cookie) that checks order as it reads and resumes from its last sequence on another node,
and an agent (``/ws/agent``) that streams progress reports and heartbeats."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from lineup.protocol.ids import new_id
from tests.support.envelopes import envelope_text


class Browser:
    """Follows a workspace from sequence 0; on a lost connection resumes on the next node in
    ``nodes`` with its last sequence. Records every event it gets, in arrival order."""

    def __init__(self, name: str, nodes: list[str], workspace_id: str, cookie: str) -> None:
        self.name = name
        self.nodes = nodes  # ws:// base URLs, the first one preferred
        self.workspace_id = workspace_id
        self.cookie = cookie
        self.sequences: list[int] = []
        self.types: list[str] = []
        self.deltas: list[str] = []
        self.reconnects = 0
        self.caught_up = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def last(self) -> int:
        return self.sequences[-1] if self.sequences else 0

    def start(self) -> Browser:
        self._task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        index = 0
        while True:
            url = f"{self.nodes[index % len(self.nodes)]}/ws/client?workspaceId={self.workspace_id}"
            try:
                async with connect(
                    url,
                    additional_headers={"Cookie": f"lineup_session={self.cookie}"},
                    max_size=None,
                    max_queue=None,
                    open_timeout=5,
                ) as ws:
                    await ws.send(
                        envelope_text(
                            "client.subscribe", {"lastSequence": self.last}, self.workspace_id
                        )
                    )
                    await self._read(ws)
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidStatus, TimeoutError):
                pass
            # the node went away: resume on the next one
            index += 1
            self.reconnects += 1
            await asyncio.sleep(0.05)

    async def _read(self, ws: ClientConnection) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            kind = frame.get("type")
            if kind == "client.caught_up":
                self.caught_up.set()
            elif kind == "message.delta":
                self.deltas.append(frame["payload"]["delta"])
            elif frame.get("sequence") is not None and kind not in ("ack", "error"):
                self.sequences.append(int(frame["sequence"]))
                self.types.append(kind)

    def check_order(self, through: int) -> None:
        """Every event 1..through exactly once, in order (it started from sequence 0)."""
        expected = list(range(1, through + 1))
        got = self.sequences[: len(expected)]
        if got != expected:
            missing = sorted(set(expected) - set(self.sequences))
            doubled = sorted({s for s in self.sequences if self.sequences.count(s) > 1})
            disorder = [
                (a, b)
                for a, b in zip(self.sequences, self.sequences[1:], strict=False)
                if b != a + 1
            ]
            raise AssertionError(
                f"browser {self.name}: missing {missing[:10]}, doubled {doubled[:10]}, "
                f"out of order at {disorder[:10]}"
            )


class Agent:
    """An agent socket that beats, reads acks, and streams ``task.status_changed``."""

    def __init__(self, ws: ClientConnection, workspace_id: str, beat: float = 0.2) -> None:
        self.ws = ws
        self.workspace_id = workspace_id
        self.acks: dict[str, int] = {}
        self.errors: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self._beat = beat
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def connect(
        cls, ws_base: str, credential: str, workspace_id: str, beat: float = 0.2
    ) -> Agent:
        ws = await connect(
            f"{ws_base}/ws/agent",
            additional_headers={"Authorization": f"Bearer {credential}"},
            max_queue=None,
            open_timeout=10,
        )
        agent = cls(ws, workspace_id, beat)
        hello = {"agentVersion": "test", "runtime": "test", "capabilities": []}
        await ws.send(envelope_text("agent.hello", hello, workspace_id))
        while json.loads(await ws.recv())["type"] != "agent.welcome":
            pass
        agent._tasks = [asyncio.create_task(agent._read()), asyncio.create_task(agent._beats())]
        return agent

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                frame = json.loads(raw)
                if frame.get("type") == "ack" and frame.get("sequence") is not None:
                    self.acks[frame["id"]] = frame["sequence"]
                elif frame.get("type") == "error":
                    self.errors.append(frame)
                else:
                    self.frames.append(frame)

    async def _beats(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                await self.ws.send(envelope_text("agent.heartbeat", {}, self.workspace_id))
                await asyncio.sleep(self._beat)

    async def send(self, type_: str, payload: dict[str, Any], **extra: Any) -> str:
        event_id = extra.pop("id", None) or new_id("evt")
        await self.ws.send(
            envelope_text(type_, payload, self.workspace_id, event_id=event_id, **extra)
        )
        return str(event_id)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.ws.close()
