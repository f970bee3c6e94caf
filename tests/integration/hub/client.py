"""A small test driver for the hub: people over HTTP, agents over the WebSocket."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.protocol.ids import new_id
from tests.deadlines import wait_until


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Person:
    client: TestClient
    email: str
    csrf: str
    workspace_id: str
    user_id: str

    def headers(self, **extra: str) -> dict[str, str]:
        return {"X-CSRF-Token": self.csrf, **extra}

    def url(self, path: str) -> str:
        return f"/api/workspaces/{self.workspace_id}{path}"

    def get(self, path: str, **kwargs: Any) -> Any:
        self._use()
        return self.client.get(self.url(path), **kwargs)

    def post(self, path: str, body: dict[str, Any] | None = None, **headers: str) -> Any:
        self._use()
        return self.client.post(self.url(path), json=body or {}, headers=self.headers(**headers))

    def ok(self, response: Any, status: int = 200) -> Any:
        assert response.status_code == status, response.text
        return response.json()

    def _use(self) -> None:
        """TestClient keeps one cookie jar; make it this person's."""
        self.client.cookies.clear()
        self.client.cookies.set("lineup_session", self.session)
        self.client.cookies.set("lineup_csrf", self.csrf)

    session: str = ""


@dataclass
class AgentSocket:
    """An agent's connection: sends envelopes, collects answers and downlink frames."""

    ws: Any
    workspace_id: str
    agent_id: str
    frames: list[dict[str, Any]] = field(default_factory=list)

    def send(
        self, type_: str, payload: dict[str, Any], *, event_id: str | None = None, **env: Any
    ) -> str:
        event_id = event_id or new_id("evt")
        frame = {
            "id": event_id,
            "type": type_,
            "version": "0.1",
            "occurredAt": now_iso(),
            "workspaceId": env.pop("workspaceId", self.workspace_id),
            "payload": payload,
            **env,
        }
        self.ws.send_text(json.dumps(frame))
        return event_id

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


def _is_answer(frame: dict[str, Any], event_id: str) -> bool:
    return (
        frame.get("type") in ("ack", "error")
        and frame.get("id") == event_id
        and not frame.get("_seen")
    )


class HubClient:
    def __init__(self, client: TestClient) -> None:
        self.client = client

    def sign_up(self, email: str | None = None, name: str = "Ana") -> Person:
        email = email or f"{new_id('u').lower()}@example.test"
        self.client.cookies.clear()
        response = self.client.post(
            "/api/auth/signup",
            json={"email": email, "password": "correct horse battery", "displayName": name},
        )
        assert response.status_code == 201, response.text
        body = response.json()
        person = Person(
            self.client, email, body["csrfToken"], body["workspaceId"], body["user"]["id"]
        )
        person.session = response.cookies.get("lineup_session") or self.client.cookies.get(
            "lineup_session"
        )
        return person

    def pair(self, person: Person, name: str = "builder") -> dict[str, Any]:
        code = person.ok(person.post("/pairing-codes", {}), 201)["code"]
        response = self.client.post(
            "/api/pairing/redeem",
            json={"code": code, "name": name, "runtime": "python", "agentVersion": "1.0"},
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def connect_agent(
        self, credentials: dict[str, Any], last_sequence: int | None = None
    ) -> tuple[AgentSocket, Any]:
        """Open the agent socket and complete the handshake (hello → ack → welcome)."""
        context = self.client.websocket_connect(
            "/ws/agent", headers={"Authorization": f"Bearer {credentials['credential']}"}
        )
        ws = context.__enter__()
        agent = AgentSocket(ws, credentials["workspaceId"], credentials["agentId"])
        hello = {"agentVersion": "1.0", "runtime": "python", "capabilities": ["tasks"]}
        if last_sequence is not None:
            hello["lastSequence"] = last_sequence
        ack = agent.call("agent.hello", hello)
        assert ack["type"] == "ack", ack
        welcome = agent.next_of("agent.welcome")
        assert welcome["payload"]["agentId"] == credentials["agentId"]
        return agent, context


__all__ = ["AgentSocket", "HubClient", "Person", "WebSocketDisconnect", "wait_until"]


class FakeClock:
    """Milliseconds that move only when a test says so."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)
