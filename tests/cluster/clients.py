"""Raw WebSocket clients for the cluster tests: a browser (``/ws/client`` with a session
cookie) that checks order as it reads and resumes from its last sequence on another node,
and an agent (``/ws/agent``) that streams progress reports and heartbeats."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

DEADLINE = 60.0


def envelope(type_: str, payload: dict[str, Any], workspace_id: str, **extra: Any) -> str:
    return json.dumps(
        {
            "id": extra.pop("id", None) or uuid.uuid4().hex,
            "type": type_,
            "version": "0.1",
            "occurredAt": datetime.now(UTC).isoformat(),
            "workspaceId": workspace_id,
            "payload": payload,
            **extra,
        }
    )


async def until(predicate: Callable[[], Any], what: str, within: float = DEADLINE) -> Any:
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        await asyncio.sleep(0.05)


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
                        envelope("client.subscribe", {"lastSequence": self.last}, self.workspace_id)
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
        await ws.send(envelope("agent.hello", hello, workspace_id, id="hello-" + uuid.uuid4().hex))
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
                await self.ws.send(envelope("agent.heartbeat", {}, self.workspace_id))
                await asyncio.sleep(self._beat)

    async def send(self, type_: str, payload: dict[str, Any], **extra: Any) -> str:
        event_id = extra.pop("id", None) or uuid.uuid4().hex
        await self.ws.send(envelope(type_, payload, self.workspace_id, id=event_id, **extra))
        return event_id

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.ws.close()
