"""A small scripted agent over the raw agent WebSocket (src/lineup/hub/agent_gateway.py).

It pairs with a one-time code, says ``agent.hello``, beats in the background, and sends
envelopes one at a time, each waited on until the hub acks it. Downlink frames
(``task.assigned``, ``interaction.resolved``...) are queued for the test to wait on. Every
wait has a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from lineup.protocol.ids import new_id
from tests.support.envelopes import envelope

DEADLINE = 15.0


@dataclass
class Pairing:
    agent_id: str
    workspace_id: str
    credential: str
    websocket_url: str


def redeem(hub_url: str, code: str, name: str = "builder") -> Pairing:
    response = httpx.post(
        f"{hub_url}/api/pairing/redeem",
        json={"code": code, "name": name, "runtime": "python", "agentVersion": "0.1.0"},
        timeout=DEADLINE,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    return Pairing(body["agentId"], body["workspaceId"], body["credential"], body["websocketUrl"])


@dataclass
class ScriptedAgent:
    pairing: Pairing
    last_sequence: int = 0
    ws: ClientConnection | None = None
    downlink: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    _answered: threading.Condition = field(default_factory=threading.Condition)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    heartbeat_seconds: float = 0.2
    hello: dict[str, Any] = field(default_factory=dict)
    """More fields for ``agent.hello`` (a ``settingsSchema``, say)."""
    welcome: dict[str, Any] | None = None

    # --- connection -------------------------------------------------------------------

    def connect(self) -> dict[str, Any]:
        """Open the socket, say hello (resuming from the last sequence seen), start beating."""
        self._stop = threading.Event()
        self.ws = connect(
            self.pairing.websocket_url,
            additional_headers={"Authorization": f"Bearer {self.pairing.credential}"},
            proxy=None,
            legacy=True,
            open_timeout=DEADLINE,
            close_timeout=2,
        )
        hello_id = new_id("evt")
        self._send_raw(
            hello_id,
            "agent.hello",
            {
                "agentVersion": "0.1.0",
                "runtime": "python",
                "capabilities": ["tasks", "code"],
                "lastSequence": self.last_sequence,
                **self.hello,
            },
        )
        # The handshake is answered in order: ack, then agent.welcome.
        ack = self._recv_json()
        assert ack.get("type") == "ack" and ack.get("id") == hello_id, ack
        welcome = self._recv_json()
        assert welcome.get("type") == "agent.welcome", welcome
        self.heartbeat_seconds = welcome["payload"]["heartbeatIntervalMs"] / 1000 / 2
        reader = threading.Thread(target=self._read, name="agent-reader", daemon=True)
        beater = threading.Thread(target=self._beat, name="agent-heartbeat", daemon=True)
        self._threads = [reader, beater]
        reader.start()
        beater.start()
        self.welcome = welcome
        return welcome

    def disconnect(self) -> None:
        """Drop the connection (as if the adapter process stopped)."""
        self._stop.set()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.close()
        for thread in self._threads:
            thread.join(timeout=DEADLINE)
        self.ws = None

    # --- sending ----------------------------------------------------------------------

    def call(
        self,
        type_: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> dict[str, Any]:
        """Send one envelope and wait for its answer; fail the test on an error frame."""
        event_id = new_id("evt")
        self._send_raw(event_id, type_, payload, task_id=task_id, conversation_id=conversation_id)
        answer = self._wait_answer(event_id)
        assert answer.get("type") == "ack", f"{type_} refused: {answer}"
        return answer

    def invoke(
        self,
        capability: str,
        params: dict[str, Any],
        *,
        conversation_id: str,
        instance: str | None = None,
    ) -> str:
        """Send ``capability.invoke`` in a conversation; return its ``invocationId`` once acked."""
        invocation_id = new_id("inv")
        payload: dict[str, Any] = {
            "invocationId": invocation_id,
            "capability": capability,
            "params": params,
        }
        if instance is not None:
            payload["instance"] = instance
        self.call("capability.invoke", payload, conversation_id=conversation_id)
        return invocation_id

    def capability_result(
        self, invocation_id: str, status: str | None = None, timeout: float = DEADLINE
    ) -> dict[str, Any]:
        """The next ``capability.result`` payload for ``invocation_id`` (with ``status``, if
        given); the other downlink frames stay queued for later waits."""
        deadline = time.monotonic() + timeout
        held: list[dict[str, Any]] = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"no capability.result {status or ''} for {invocation_id} within {timeout}s"
                    )
                try:
                    frame = self.downlink.get(timeout=left)
                except queue.Empty:
                    continue
                payload = frame.get("payload") or {}
                if (
                    frame.get("type") == "capability.result"
                    and payload.get("invocationId") == invocation_id
                    and (status is None or payload.get("status") == status)
                ):
                    return dict(payload)
                held.append(frame)
        finally:
            for frame in held:
                self.downlink.put(frame)

    def send_delta(self, message_id: str, delta: str, *, task_id: str) -> None:
        self.call("message.delta", {"messageId": message_id, "delta": delta}, task_id=task_id)

    # --- waiting for the hub ----------------------------------------------------------

    def next_downlink(self, type_: str, timeout: float = DEADLINE) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the agent got no {type_} within {timeout}s")
            try:
                frame = self.downlink.get(timeout=left)
            except queue.Empty:
                continue
            if frame.get("type") == type_:
                return frame

    # --- internals --------------------------------------------------------------------

    def _send_raw(
        self,
        event_id: str,
        type_: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        extra: dict[str, str] = {} if task_id is None else {"taskId": task_id}
        if conversation_id is not None:
            extra["conversationId"] = conversation_id
        frame = envelope(type_, payload, self.pairing.workspace_id, event_id=event_id, **extra)
        assert self.ws is not None, "not connected"
        self.ws.send(json.dumps(frame))

    def _recv_json(self) -> dict[str, Any]:
        assert self.ws is not None
        raw = self.ws.recv(timeout=DEADLINE)
        frame: dict[str, Any] = json.loads(raw)
        return frame

    def _wait_answer(self, event_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE
        with self._answered:
            while event_id not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no answer from the hub for {event_id}")
                self._answered.wait(timeout=left)
            return self.answers.pop(event_id)

    def _read(self) -> None:
        ws = self.ws
        assert ws is not None
        while not self._stop.is_set():
            try:
                raw = ws.recv(timeout=0.5)
            except TimeoutError:
                continue
            except (ConnectionClosed, OSError, RuntimeError):
                return
            frame = json.loads(raw)
            if frame.get("type") in ("ack", "error"):
                if str(frame.get("id", "")).startswith("hb_"):
                    continue
                with self._answered:
                    self.answers[str(frame.get("id"))] = frame
                    self._answered.notify_all()
                continue
            sequence = frame.get("sequence")
            if isinstance(sequence, int) and sequence > self.last_sequence:
                self.last_sequence = sequence
            self.downlink.put(frame)

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            try:
                self._send_raw(new_id("hb"), "agent.heartbeat", {})
            except (ConnectionClosed, OSError, RuntimeError, AssertionError):
                return
