"""A scripted agent on the in-process app's agent socket: it says hello, then sends what the
test scripts and collects the hub's answers and downlink frames, read on demand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.testclient import TestClient

from tests.support.envelopes import envelope


@dataclass
class AgentSocket:
    """An agent's connection: sends envelopes, collects answers and downlink frames."""

    ws: Any
    workspace_id: str
    agent_id: str
    frames: list[dict[str, Any]] = field(default_factory=list)
    welcome: dict[str, Any] | None = None

    def send(
        self, type_: str, payload: dict[str, Any], *, event_id: str | None = None, **env: Any
    ) -> str:
        workspace_id = env.pop("workspaceId", self.workspace_id)
        frame = envelope(type_, payload, workspace_id, event_id=event_id, **env)
        self.ws.send_text(json.dumps(frame))
        return str(frame["id"])

    def receive(self) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(self.ws.receive_text())
        self.frames.append(frame)
        return frame

    def answer(self, event_id: str) -> dict[str, Any]:
        for frame in self.frames:
            if _is_answer(frame, event_id):
                frame["_seen"] = True
                return frame
        while True:
            frame = self.receive()
            if _is_answer(frame, event_id):
                frame["_seen"] = True
                return frame

    def call(self, type_: str, payload: dict[str, Any], **env: Any) -> dict[str, Any]:
        return self.answer(self.send(type_, payload, **env))

    def next_of(self, type_: str) -> dict[str, Any]:
        for frame in self.frames:
            if frame.get("type") == type_ and not frame.get("_seen"):
                frame["_seen"] = True
                return frame
        while True:
            frame = self.receive()
            if frame.get("type") == type_:
                frame["_seen"] = True
                return frame

    def hello(
        self, last_sequence: int | None = None, extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The handshake: ``agent.hello`` (with ``extra`` fields) acked, then
        ``agent.welcome`` (returned)."""
        hello: dict[str, Any] = {
            "agentVersion": "1.0",
            "runtime": "python",
            "capabilities": ["tasks"],
            **(extra or {}),
        }
        if last_sequence is not None:
            hello["lastSequence"] = last_sequence
        ack = self.call("agent.hello", hello)
        assert ack["type"] == "ack", ack
        welcome = self.next_of("agent.welcome")
        assert welcome["payload"]["agentId"] == self.agent_id
        return welcome


def _is_answer(frame: dict[str, Any], event_id: str) -> bool:
    return (
        frame.get("type") in ("ack", "error")
        and frame.get("id") == event_id
        and not frame.get("_seen")
    )


@contextmanager
def agent_socket(
    client: TestClient,
    credentials: dict[str, Any],
    last_sequence: int | None = None,
    hello: dict[str, Any] | None = None,
) -> Iterator[AgentSocket]:
    """The agent of ``credentials`` connected and welcomed; the socket closes on the way out."""
    with client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {credentials['credential']}"}
    ) as ws:
        agent = AgentSocket(ws, credentials["workspaceId"], credentials["agentId"])
        agent.welcome = agent.hello(last_sequence, hello)
        yield agent
