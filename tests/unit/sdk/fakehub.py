"""An in-memory hub that speaks the agent gateway protocol, for the SDK's tests.

The handshake, the answers to what cannot be read and the close codes are the real hub's:
each connection wraps a :class:`~lineup.protocol.session.HubSession`.

It is also the SDK's :class:`~lineup.sdk.Transport`: ``connect`` opens an in-memory
connection whose frames the hub handles as it receives them. What it does, as the real hub:

* refuses a wrong or revoked credential with one error frame (``LNP-AUTH-REVOKED``) and close
  code 4401;
* answers ``agent.hello`` with an ack, an ``agent.welcome``, then every downlink event after
  ``lastSequence`` in order (or ``system.resync_required`` if told history is pruned), then
  live events;
* answers every frame exactly once by id; records an event the first time its id is seen (an
  *effect*) and acks a resend as a duplicate with the original sequence.

And what a test needs: drop the connection on demand or right after recording an event of a
given type (before acking it), refuse an event once with a given error, fail connects.

Tools: a ``tool.list`` query is answered with a ``tool.list`` frame (correlated
to the query) from ``tool_catalogue``, then acked; ``tool.call`` and ``tool.cancel`` are
recorded like any event; :meth:`FakeHub.answer_tool` sends the downlink ``tool.result``.

Capabilities: a ``capability.list`` query is answered with a ``capability.list`` frame
(correlated to the query) from ``capability_catalogue``, then acked; a ``capability.invoke``
is recorded and acked, then answered with the ``capability.result`` frames scripted for its
capability in ``capability_script`` (after the ack, as the hub does); the same
``invocationId`` again is a duplicate (same content, the first sequence) or a ``conflict``.
:meth:`FakeHub.capability_result` sends a further status.

Uploads: :attr:`FakeHub.http` is an ``httpx.MockTransport`` for the agent's HTTP that stores
``POST /api/agent/artifacts`` bodies in :attr:`FakeHub.files` (one per idempotency key, as
the hub does) and can fail the next uploads with a status (``fail_uploads``).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from lineup.protocol import encode
from lineup.protocol.builtin_tools import BUILTIN_DEFINITIONS
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import RETRYABLE, ErrorCode
from lineup.protocol.events import AgentHello
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.protocol.session import (
    CloseCode,
    EventReceived,
    FrameRefused,
    HelloReceived,
    HubSession,
)
from lineup.sdk import TransportClosed

WORKSPACE = "ws_test"
AGENT = "agent_test"
CREDENTIAL = "lnp_secret_credential"


class FakeConnection:
    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.inbox: asyncio.Queue[str | TransportClosed] = asyncio.Queue()
        self.session = HubSession(hub.workspace_id)
        self.closed = False
        self.welcomed = False

    def flush(self) -> None:
        """Deliver what the session queued; make the close it asked for."""
        for data in self.session.data_to_send():
            if not self.closed:
                self.inbox.put_nowait(data)
        close = self.session.close_to_send()
        if close is not None:
            self.shut(close.code, close.reason)

    async def send(self, text: str) -> None:
        if self.closed:
            raise TransportClosed(1006, "connection lost")
        self.hub.handle(self, text)
        await asyncio.sleep(0)  # a real send yields to the loop too

    async def recv(self) -> str:
        item = await self.inbox.get()
        if isinstance(item, TransportClosed):
            self.inbox.put_nowait(item)  # every later recv sees the close as well
            raise item
        return item

    async def close(self) -> None:
        self.shut(1000, "closed by the agent")

    def push(self, frame: Envelope | Ack | ErrorFrame) -> None:
        """A frame the session does not make (a test's own)."""
        if not self.closed:
            self.inbox.put_nowait(encode(frame))

    def shut(self, code: int, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.inbox.put_nowait(TransportClosed(code, reason))
            self.hub.notify()


class FakeHub:
    def __init__(self, *, heartbeat_interval_ms: int = 25_000) -> None:
        self.workspace_id = WORKSPACE
        self.agent_id = AGENT
        self.credential = CREDENTIAL
        self.revoked = False
        self.awaiting_confirmation = False
        self.settings: dict[str, Any] | None = None
        """What the welcome says: whether a person confirmed the agent, its settings."""
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.sequence = 0
        self.log: list[Envelope] = []
        self.received: list[Envelope] = []
        self.effects: list[Envelope] = []
        self.duplicates: list[Envelope] = []
        self.deltas: list[Envelope] = []
        self.log_batches: list[Envelope] = []
        self.heartbeats: list[datetime] = []
        self.hellos: list[dict[str, Any]] = []
        self.rejected: list[ErrorFrame] = []
        self.seen: dict[str, int] = {}
        self.connections: list[FakeConnection] = []
        self.connect_attempts = 0
        self.fail_connects = 0
        self.earliest_sequence: int | None = None
        self.drop_after: dict[str, int] = {}
        self.refuse: dict[str, list[ErrorCode]] = {}
        self.refusal_details: dict[str, dict[str, Any]] = {}
        """The ``details`` of the refusals of ``refuse``, by event type."""
        self.tool_catalogue: list[dict[str, Any]] = [dict(d) for d in BUILTIN_DEFINITIONS]
        self.tool_queries: list[Envelope] = []
        self.capability_catalogue: list[dict[str, Any]] = []
        self.project_id: str | None = "proj_plant"
        self.capability_queries: list[Envelope] = []
        self.capability_script: dict[str, list[dict[str, Any]]] = {}
        self.invocations: dict[str, Envelope] = {}
        self._after_flush: list[Callable[[], object]] = []
        self._waiters: list[asyncio.Future[None]] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.upload_attempts: list[httpx.Request] = []
        self.fail_uploads: list[int] = []
        self.http = httpx.MockTransport(self._http)

    # --- the agent's HTTP: uploads ----------------------------------------------------------

    def _http(self, request: httpx.Request) -> httpx.Response:
        self.upload_attempts.append(request)
        self.notify()
        if request.url.path != "/api/agent/artifacts" or request.method != "POST":
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "?"}})
        if request.headers.get("authorization") != f"Bearer {self.credential}":
            return httpx.Response(401, json={"error": {"code": "unauthenticated", "message": "?"}})
        if self.fail_uploads:
            status = self.fail_uploads.pop(0)
            if status == 0:
                raise httpx.ConnectError("connection refused", request=request)
            code = {429: "rate_limited", 503: "unavailable", 413: "invalid_argument"}[status]
            return httpx.Response(status, json={"error": {"code": code, "message": "Not now."}})
        content = request.content
        digest = hashlib.sha256(content).hexdigest()
        if request.headers.get("x-content-sha256", digest) != digest:
            return httpx.Response(400, json={"error": {"code": "invalid_argument", "message": "!"}})
        key = request.headers.get("idempotency-key") or new_id("k")
        if key not in self.files:
            file_id = f"file_{len(self.files) + 1}"
            self.files[key] = {
                "fileId": file_id,
                "url": f"/api/workspaces/{self.workspace_id}/files/{file_id}",
                "name": request.url.params["name"],
                "mimeType": request.headers["content-type"],
                "size": len(content),
                "sha256": digest,
                "content": content,
            }
        body = {k: v for k, v in self.files[key].items() if k != "content"}
        return httpx.Response(201, json=body)

    # --- the Transport the SDK connects through -------------------------------------------

    async def connect(self, url: str, headers: Mapping[str, str]) -> FakeConnection:
        self.connect_attempts += 1
        self.notify()
        if self.fail_connects > 0:
            self.fail_connects -= 1
            raise OSError("connection refused")
        connection = FakeConnection(self)
        self.connections.append(connection)
        if self.revoked or headers.get("Authorization") != f"Bearer {self.credential}":
            connection.push(
                ErrorFrame(
                    id=None,
                    code=ErrorCode.UNAUTHENTICATED,
                    message="This agent's credential was revoked.",
                    details={
                        "diagnostic": "LNP-AUTH-REVOKED",
                        "nextStep": "Pair the agent again from the Agents page.",
                    },
                )
            )
            connection.shut(CloseCode.UNAUTHENTICATED, "unauthenticated")
        return connection

    # --- what the hub does with a frame ---------------------------------------------------

    def handle(self, connection: FakeConnection, text: str) -> None:
        session = connection.session
        for event in session.receive_frame(text):
            if isinstance(event, HelloReceived):
                self.received.append(event.envelope)
                self.hellos.append(dict(event.envelope.payload))
                self._hello(connection, event.hello)
            elif isinstance(event, FrameRefused):
                self.rejected.append(event.error)
            elif isinstance(event, EventReceived):
                self.received.append(event.envelope)
                self._event(connection, event.envelope)
        connection.flush()
        later, self._after_flush = self._after_flush, []
        for action in later:
            action()
        self.notify()

    def _event(self, connection: FakeConnection, envelope: Envelope) -> None:
        session = connection.session
        if envelope.type == "agent.heartbeat":
            self.heartbeats.append(datetime.now(UTC))
            session.answer(envelope.id)
        elif envelope.type == "message.delta":
            self.deltas.append(envelope)
            session.answer(envelope.id)
        elif envelope.type == "agent.logs" and not self.refuse.get("agent.logs"):  # not recorded
            self.log_batches.append(envelope)
            session.answer(envelope.id)
        elif envelope.type == "tool.list":  # a query, never recorded
            self.tool_queries.append(envelope)
            answer = self._envelope("tool.list", {"tools": self.tool_catalogue})
            session.send_event(answer.model_copy(update={"correlation_id": envelope.id}))
            session.answer(envelope.id)
        elif envelope.type == "capability.list":  # a query, never recorded
            self.capability_queries.append(envelope)
            listing = self._envelope(
                "capability.list",
                {"capabilities": self.capability_catalogue, "projectId": self.project_id},
            )
            session.send_event(listing.model_copy(update={"correlation_id": envelope.id}))
            session.answer(envelope.id)
        elif envelope.type == "capability.invoke" and self._invoked_before(connection, envelope):
            pass
        elif envelope.id in self.seen:
            self.duplicates.append(envelope)
            session.answer(envelope.id, sequence=self.seen[envelope.id], duplicate=True)
        elif self.refuse.get(envelope.type):
            code = self.refuse[envelope.type].pop(0)
            connection.push(
                ErrorFrame(
                    id=envelope.id,
                    code=code,
                    message=f"refused by the test ({code.value})",
                    retryable=code in RETRYABLE,
                    details=(
                        {"retryAfterMs": 1}
                        if code in RETRYABLE
                        else self.refusal_details.get(envelope.type)
                    ),
                )
            )
        else:
            self.sequence += 1
            self.seen[envelope.id] = self.sequence
            self.effects.append(envelope)
            if envelope.type == "capability.invoke":
                self.invocations[envelope.payload["invocationId"]] = envelope
                for fields in self.capability_script.get(envelope.payload["capability"], []):
                    self._after_flush.append(
                        lambda fields=fields: self.capability_result(envelope, **fields)
                    )
            if self.drop_after.get(envelope.type, 0) > 0:
                self.drop_after[envelope.type] -= 1
                connection.shut(1006, "dropped by the test before the ack")
            else:
                session.answer(envelope.id, sequence=self.sequence)

    def _invoked_before(self, connection: FakeConnection, envelope: Envelope) -> bool:
        """The hub's rule for invocation ids: the same invoke again is a duplicate, the same
        id for another one a conflict; either way nothing runs."""
        first = self.invocations.get(envelope.payload["invocationId"])
        if first is None:
            return False
        if dict(first.payload) != dict(envelope.payload):
            connection.push(
                ErrorFrame(
                    id=envelope.id,
                    code=ErrorCode.CONFLICT,
                    message="This invocationId was used for another invoke.",
                    details={"reason": "id_reused"},
                )
            )
            return True
        self.duplicates.append(envelope)
        connection.session.answer(envelope.id, sequence=self.seen[first.id], duplicate=True)
        return True

    def _hello(self, connection: FakeConnection, hello: AgentHello) -> None:
        session = connection.session
        session.acknowledge_hello(None)
        after = session.accept(
            agent_id=self.agent_id,
            heartbeat_interval_ms=self.heartbeat_interval_ms,
            last_sequence=hello.last_sequence or 0,
            latest_sequence=self.sequence,
            earliest_sequence=self.earliest_sequence,
            now=datetime.now(UTC),
            name="builder",
            awaiting_confirmation=self.awaiting_confirmation,
            settings=self.settings,
        )
        for event in self.log:
            if event.sequence is not None and event.sequence > after:
                session.send_event(event)
        connection.welcomed = True

    # --- what a test makes the hub do -----------------------------------------------------

    @property
    def live(self) -> FakeConnection | None:
        for connection in reversed(self.connections):
            if connection.welcomed and not connection.closed:
                return connection
        return None

    def drop(self) -> None:
        """Cut the live connection, as a network failure would."""
        if self.live is not None:
            self.live.shut(1006, "dropped by the test")

    def emit(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Envelope:
        self.sequence += 1
        event = self._envelope(
            event_type,
            payload,
            sequence=self.sequence,
            task_id=task_id,
            conversation_id=conversation_id,
        )
        self.log.append(event)
        if self.live is not None:
            self.live.push(event)
        self.notify()
        return event

    def assign_task(
        self, title: str = "Migrate the database", *, task_id: str | None = None
    ) -> str:
        task_id = task_id or new_id("task")
        self.emit(
            "task.assigned",
            {"taskId": task_id, "title": title, "description": "Three migrations", "messages": []},
            task_id=task_id,
            conversation_id="conv_1",
        )
        return task_id

    def resolve(
        self,
        interaction_id: str,
        *,
        option_id: str | None = None,
        option_ids: list[str] | None = None,
        text: str | None = None,
        input: dict[str, Any] | None = None,
    ) -> None:
        response: dict[str, Any] = {}
        if input is not None:
            response["input"] = input
        if option_id is not None:
            response["optionId"] = option_id
        if option_ids is not None:
            response["optionIds"] = option_ids
        if text is not None:
            response["text"] = text
        self.emit(
            "interaction.resolved",
            {
                "interactionId": interaction_id,
                "response": response,
                "respondedBy": "user_ana",
                "respondedByName": "Ana",
                "respondedAt": 1_784_894_400_000,
            },
        )

    def expire(self, interaction_id: str, expires_at_ms: int | None = None) -> None:
        payload: dict[str, Any] = {"interactionId": interaction_id}
        if expires_at_ms is not None:
            payload["expiresAt"] = expires_at_ms
        self.emit("interaction.expired", payload)

    def withdraw(self, interaction_id: str, reason: str = "The task was cancelled.") -> None:
        self.emit("interaction.cancelled", {"interactionId": interaction_id, "reason": reason})

    def withdraw_tool_call(self, call_id: str, reason: str = "The task was cancelled.") -> None:
        self.emit("tool.cancelled", {"call_id": call_id, "reason": reason})

    def cancel(self, task_id: str, reason: str = "Not needed any more") -> None:
        self.emit("task.cancel_requested", {"taskId": task_id, "reason": reason}, task_id=task_id)

    def end_task(self, task_id: str, cause: str = "cancel_timeout") -> None:
        """The hub ends the agent's task itself (a cancel it did not confirm in time)."""
        self.emit(
            "task.status_changed",
            {
                "taskId": task_id,
                "status": "cancelled",
                "cause": cause,
                "summary": "The agent did not confirm the cancel in time.",
            },
            task_id=task_id,
        )

    def deliver_message(self, content: str, *, task_id: str | None = None) -> str:
        message_id = new_id("msg")
        self.emit(
            "message.delivered",
            {
                "messageId": message_id,
                "author": {"kind": "user", "id": "user_ana", "name": "Ana"},
                "content": content,
                "steer": False,
                **({"taskId": task_id} if task_id else {}),
            },
            conversation_id="conv_1",
        )
        return message_id

    def tool_calls(self) -> list[Envelope]:
        return self.effects_of("tool.call")

    async def next_tool_call(self, count: int) -> Envelope:
        """Wait for the ``count``-th tool call the hub recorded."""
        await self.wait_for(lambda: len(self.tool_calls()) >= count)
        return self.tool_calls()[count - 1]

    def answer_tool(
        self,
        call: Envelope,
        result: dict[str, Any] | None = None,
        *,
        error: dict[str, Any] | None = None,
    ) -> Envelope:
        """An app answers ``call``: the downlink ``tool.result`` (with a sequence)."""
        payload: dict[str, Any] = {"call_id": call.payload["call_id"], "name": call.payload["name"]}
        if call.payload.get("action") is not None:
            payload["action"] = call.payload["action"]
        if error is not None:
            payload["error"] = error
        else:
            payload["result"] = result or {"message": "ok"}
        return self.emit(
            "tool.result",
            payload,
            task_id=call.task_id,
            conversation_id=call.conversation_id,
        )

    def invokes(self) -> list[Envelope]:
        return self.effects_of("capability.invoke")

    async def next_invoke(self, count: int) -> Envelope:
        """Wait for the ``count``-th invoke the hub recorded."""
        await self.wait_for(lambda: len(self.invokes()) >= count)
        return self.invokes()[count - 1]

    def capability_result(self, invoke: Envelope, status: str, **fields: Any) -> Envelope:
        """Where ``invoke`` is now: a downlink ``capability.result`` (with a sequence)."""
        payload = {
            "invocationId": invoke.payload["invocationId"],
            "capability": invoke.payload["capability"],
            "status": status,
            **fields,
        }
        return self.emit(
            "capability.result",
            payload,
            task_id=invoke.task_id,
            conversation_id=invoke.conversation_id,
        )

    # --- what a test looks at -------------------------------------------------------------

    def effects_of(self, event_type: str, task_id: str | None = None) -> list[Envelope]:
        return [
            e
            for e in self.effects
            if e.type == event_type and (task_id is None or e.task_id == task_id)
        ]

    def statuses(self, task_id: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.effects_of("task.status_changed", task_id)]

    def final_status(self, task_id: str) -> str | None:
        for payload in reversed(self.statuses(task_id)):
            if payload["status"] in ("succeeded", "failed", "cancelled"):
                return str(payload["status"])
        return None

    def interactions(self) -> list[dict[str, Any]]:
        return [e.payload["interaction"] for e in self.effects_of("interaction.requested")]

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_for(self, condition: Callable[[], object], deadline: float = 5.0) -> None:
        """Wait until ``condition()`` holds; fail after ``deadline`` seconds."""
        async with asyncio.timeout(deadline):
            while not condition():
                waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter

    def _envelope(
        self,
        event_type: str,
        payload: dict[str, Any],
        *,
        sequence: int | None = None,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Envelope:
        return Envelope(
            id=new_id("evt"),
            type=event_type,
            occurred_at=datetime.now(UTC),
            workspace_id=self.workspace_id,
            sequence=sequence,
            task_id=task_id,
            conversation_id=conversation_id,
            payload=payload,
        )
