"""Valid event streams for replay tests: a list of (action, pick) steps becomes events.

Each step's ``pick`` chooses the workspace and the subject among what exists so far; a step
whose subject does not exist yet is skipped, so every generated stream is one the hub could
have appended. Users keep one profile across workspaces, as real users do.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lineup.protocol.ids import new_ulid
from lineup.store import NewEvent, Store

from .factory import T0, event, workspace_created

ACTIONS = (
    "member",
    "pair",
    "connect",
    "heartbeat_lost",
    "rename",
    "revoke",
    "conversation",
    "message",
    "task",
    "child",
    "accept",
    "progress",
    "finish",
    "cancel_task",
    "request",
    "resolve",
    "expire",
    "cancel_interaction",
    "artifact",
    "unknown",
    "resend",
    "register_tools",
    "tool_call",
    "tool_answer",
    "tool_fail",
    "tool_cancel",
    "tool_expire",
    "canvas_open",
    "canvas_op",
)

Step = tuple[str, int]


@dataclass
class _Space:
    id: str
    agents: list[str] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    open_interactions: list[str] = field(default_factory=list)
    pending_calls: list[tuple[str, str, str]] = field(default_factory=list)
    canvases: list[str] = field(default_factory=list)


class StreamBuilder:
    def __init__(self, workspaces: int = 2) -> None:
        self.tag = new_ulid().lower()  # keeps ids and emails unique across examples
        self.spaces = [_Space(new_ulid()) for _ in range(workspaces)]
        self.events: list[NewEvent] = [
            workspace_created(s.id, f"ws{i}", owner=self._user(0))
            for i, s in enumerate(self.spaces)
        ]
        self.counter = 0
        self.clock = T0

    def _user(self, n: int) -> str:
        return f"u{n % 3}-{self.tag}"

    def _id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}-{self.tag}"

    def _emit(self, space: _Space, type: str, payload: dict[str, Any], **envelope: Any) -> None:
        self.clock += 7
        self.events.append(event(space.id, type, payload, occurred_at=self.clock, **envelope))

    def build(self, steps: list[Step]) -> list[NewEvent]:
        for action, pick in steps:
            space = self.spaces[pick % len(self.spaces)]
            getattr(self, f"_{action}")(space, pick // len(self.spaces))
        return self.events

    # --- actions ---------------------------------------------------------------------------

    def _member(self, s: _Space, pick: int) -> None:
        user = self._user(pick)
        self._emit(
            s,
            "member.joined",
            {
                "userId": user,
                "email": f"{user}@example.com",
                "displayName": f"User {user}",
                "role": "owner" if pick % 3 == 0 else "member",
            },
        )

    def _pair(self, s: _Space, pick: int) -> None:
        agent = self._id("a")
        s.agents.append(agent)
        payload: dict[str, Any] = {"agentId": agent, "name": f"agent {pick}"}
        if pick % 2:
            payload["runtime"] = "python"
        self._emit(s, "agent.paired", payload)

    def _connect(self, s: _Space, pick: int) -> None:
        if s.agents:
            agent = s.agents[pick % len(s.agents)]
            payload: dict[str, Any] = {
                "agentId": agent,
                "agentVersion": f"1.{pick % 4}",
                "runtime": "node",
                "capabilities": ["tasks"][: pick % 2],
            }
            if pick % 3:
                payload["tools"] = [{"name": "calc", "type": "app"}]
            self._emit(s, "agent.connected", payload, actor=f"agent:{agent}")

    def _heartbeat_lost(self, s: _Space, pick: int) -> None:
        if s.agents:
            agent = s.agents[pick % len(s.agents)]
            beat = None if pick % 2 else self.clock
            payload = {"agentId": agent, "status": "offline", "lastHeartbeatAt": beat}
            self._emit(s, "agent.status_changed", payload)

    def _rename(self, s: _Space, pick: int) -> None:
        if s.agents:
            agent = s.agents[pick % len(s.agents)]
            self._emit(s, "agent.renamed", {"agentId": agent, "name": f"renamed {pick}"})

    def _revoke(self, s: _Space, pick: int) -> None:
        if s.agents:
            self._emit(s, "agent.revoked", {"agentId": s.agents[pick % len(s.agents)]})

    def _conversation(self, s: _Space, pick: int) -> None:
        conversation = self._id("c")
        s.conversations.append(conversation)
        payload = {
            "conversationId": conversation,
            "title": f"talk {pick}",
            "agentIds": s.agents[:1],
        }
        self._emit(s, "conversation.created", payload, conversation_id=conversation)

    def _message(self, s: _Space, pick: int) -> None:
        if not s.conversations:
            return
        conversation = s.conversations[pick % len(s.conversations)]
        author = {"kind": "user", "id": self._user(pick)} if pick % 2 else {"kind": "system"}
        payload: dict[str, Any] = {"messageId": self._id("m"), "author": author, "content": "hi"}
        if pick % 3 == 0:
            payload["blocks"] = [{"type": "markdown", "text": "**hi**"}]
        if s.tasks and pick % 4 == 0:
            payload["taskId"] = s.tasks[pick % len(s.tasks)]
        self._emit(s, "message.created", payload, conversation_id=conversation)

    def _task(self, s: _Space, pick: int) -> None:
        task = self._id("t")
        s.tasks.append(task)
        payload: dict[str, Any] = {"taskId": task, "title": f"task {pick}", "createdBy": "user:x"}
        if s.agents:
            payload["targetAgentId"] = s.agents[pick % len(s.agents)]
        conversation = s.conversations[pick % len(s.conversations)] if s.conversations else None
        self._emit(s, "task.created", payload, conversation_id=conversation, task_id=task)

    def _child(self, s: _Space, pick: int) -> None:
        if s.tasks:
            parent = s.tasks[pick % len(s.tasks)]
            child = self._id("t")
            s.tasks.append(child)
            payload = {
                "childTaskId": child,
                "parentTaskId": parent,
                "title": "sub",
                "status": "queued",
            }
            self._emit(s, "task.child_created", payload, actor="agent:x", task_id=child)

    def _accept(self, s: _Space, pick: int) -> None:
        if s.tasks:
            task = s.tasks[pick % len(s.tasks)]
            self._emit(s, "task.accepted", {"taskId": task}, task_id=task)

    def _progress(self, s: _Space, pick: int) -> None:
        if s.tasks:
            task = s.tasks[pick % len(s.tasks)]
            payload = {"taskId": task, "status": "running", "progress": pick % 101}
            if pick % 2:
                payload["summary"] = f"at {pick}"
            self._emit(s, "task.status_changed", payload, task_id=task)

    def _finish(self, s: _Space, pick: int) -> None:
        if s.tasks:
            task = s.tasks[pick % len(s.tasks)]
            payload: dict[str, Any] = {"taskId": task, "status": "completed", "progress": 100}
            if pick % 2:
                payload = {"taskId": task, "status": "failed", "error": {"code": "boom"}}
            self._emit(s, "task.status_changed", payload, task_id=task)

    def _cancel_task(self, s: _Space, pick: int) -> None:
        if s.tasks:
            task = s.tasks[pick % len(s.tasks)]
            payload = {"taskId": task, "reason": "enough"} if pick % 2 else {"taskId": task}
            self._emit(s, "task.cancel_requested", payload, task_id=task)

    def _request(self, s: _Space, pick: int) -> None:
        interaction = self._id("i")
        s.open_interactions.append(interaction)
        task = s.tasks[pick % len(s.tasks)] if s.tasks and pick % 4 else None
        request: dict[str, Any] = {
            "id": interaction,
            "type": ("approval", "choice", "input", "review")[pick % 4],
            "title": "?",
            "options": [{"id": "y", "label": "Yes"}],
            "expiresAt": "2030-01-01T00:00:00Z" if pick % 5 == 0 else None,
        }
        self._emit(
            s,
            "interaction.requested",
            {"interaction": request},
            actor="agent:x" if pick % 2 else "system",
            task_id=task,
        )

    def _close(self, s: _Space, pick: int, type: str, extra: dict[str, Any]) -> None:
        if s.open_interactions:
            interaction = s.open_interactions.pop(pick % len(s.open_interactions))
            self._emit(s, type, {"interactionId": interaction, **extra})

    def _resolve(self, s: _Space, pick: int) -> None:
        response = {"optionId": "y", "n": pick}
        self._close(
            s,
            pick,
            "interaction.resolved",
            {
                "response": response,
                "respondedBy": "user:u",
                "respondedByName": "U",
                "respondedAt": self.clock,
            },
        )

    def _expire(self, s: _Space, pick: int) -> None:
        self._close(s, pick, "interaction.expired", {})

    def _cancel_interaction(self, s: _Space, pick: int) -> None:
        self._close(s, pick, "interaction.cancelled", {"reason": "moot"})

    def _artifact(self, s: _Space, pick: int) -> None:
        payload: dict[str, Any] = {"artifactId": self._id("f"), "name": "out", "url": "https://x/y"}
        if s.tasks and pick % 2:
            payload["taskId"] = s.tasks[pick % len(s.tasks)]
            payload["mimeType"] = "text/plain"
        self._emit(s, "artifact.created", payload)

    def _unknown(self, s: _Space, pick: int) -> None:
        self._emit(s, "canvas.stroke_added", {"points": [[0, 0], [pick, pick]]})

    def _resend(self, s: _Space, pick: int) -> None:
        self.events.append(self.events[pick % len(self.events)])

    def _register_tools(self, s: _Space, pick: int) -> None:
        tools = [{"name": "choice", "type": "action", "inputSchema": {"type": "object"}}]
        payload = {
            "deviceId": f"dev{pick % 3}",
            "userId": self._user(pick),
            "tools": tools[: pick % 2],
        }
        self._emit(s, "tool.registered", payload, actor=f"user:{self._user(pick)}")

    def _called(self, s: _Space, pick: int, name: str, action: str | None, **extra: Any) -> str:
        agent = s.agents[pick % len(s.agents)]
        call = self._id("tc")
        payload: dict[str, Any] = {
            "toolCallId": call,
            "callId": f"c{pick}-{call}",
            "agentId": agent,
            "name": name,
            "arguments": extra.pop("arguments", {"question": "?", "options": ["a", "b"]}),
            "targetAgentId": agent,
            **extra,
        }
        if action is not None:
            payload["action"] = action
        conversation = s.conversations[pick % len(s.conversations)] if s.conversations else None
        self._emit(s, "tool.called", payload, actor=f"agent:{agent}", conversation_id=conversation)
        return call

    def _completed(self, s: _Space, call: str, name: str, **outcome: Any) -> None:
        payload = {
            "toolCallId": call,
            "callId": "c",
            "name": name,
            "answeredBy": "user:u",
            "answeredAt": self.clock,
            "targetAgentId": "a",
            **outcome,
        }
        self._emit(s, "tool.completed", payload, actor="user:u")

    def _tool_call(self, s: _Space, pick: int) -> None:
        if s.agents:
            extra = {"timeoutMs": 1000, "expiresAt": self.clock + 1000} if pick % 3 == 0 else {}
            s.pending_calls.append(
                (self._called(s, pick, "choice", "select", **extra), "choice", "")
            )

    def _take_call(self, s: _Space, pick: int) -> tuple[str, str, str] | None:
        return s.pending_calls.pop(pick % len(s.pending_calls)) if s.pending_calls else None

    def _tool_answer(self, s: _Space, pick: int) -> None:
        if taken := self._take_call(s, pick):
            self._completed(s, taken[0], taken[1], result={"message": "a", "index": 0})

    def _tool_fail(self, s: _Space, pick: int) -> None:
        if taken := self._take_call(s, pick):
            self._completed(
                s, taken[0], taken[1], error={"code": "invalid_argument", "message": "x"}
            )

    def _tool_expire(self, s: _Space, pick: int) -> None:
        if taken := self._take_call(s, pick):
            error = {"code": "unavailable", "message": "No app answered."}
            self._completed(s, taken[0], taken[1], error=error, expired=True)

    def _tool_cancel(self, s: _Space, pick: int) -> None:
        if taken := self._take_call(s, pick):
            payload = {"toolCallId": taken[0], "callId": "c", "targetAgentId": "a"}
            if pick % 2:
                payload["reason"] = "moot"
            self._emit(s, "tool.cancelled", payload, actor="agent:x")

    def _canvas_open(self, s: _Space, pick: int) -> None:
        if not s.agents:
            return
        instance = self._id("inst")
        arguments = {"width": 100 + pick, "height": 50}
        call = self._called(s, pick, "canvas", "open", arguments=arguments, instanceId=instance)
        self._completed(s, call, "canvas", result={"message": f"instance_id: {instance}"})
        s.canvases.append(instance)

    def _canvas_op(self, s: _Space, pick: int) -> None:
        if not s.canvases or not s.agents:
            return
        instance = s.canvases[pick % len(s.canvases)]
        action = ("draw", "draw", "undo", "clear", "draw", "close")[pick % 6]
        arguments: dict[str, Any] = {"instance_id": instance}
        if action == "draw":
            arguments.update(path=f"M0 0 L{pick} {pick}", color="red", width=1 + pick % 5)
        call = self._called(s, pick, "canvas", action, arguments=arguments, instanceId=instance)
        self._completed(s, call, "canvas", result={"message": "ok"})
        if action == "close":
            s.canvases.remove(instance)


REALISTIC: list[Step] = [
    ("member", 0), ("member", 1), ("member", 2), ("member", 5),
    ("pair", 0), ("pair", 1), ("connect", 0), ("connect", 1),
    ("conversation", 0), ("conversation", 1), ("message", 0), ("message", 2),
    ("task", 0), ("task", 2), ("accept", 0), ("progress", 2), ("child", 0), ("child", 2),
    ("accept", 4), ("request", 2), ("request", 6), ("message", 4),
    ("resolve", 0), ("progress", 4), ("expire", 0), ("request", 10), ("cancel_interaction", 0),
    ("cancel_task", 0), ("finish", 2), ("finish", 5), ("artifact", 1), ("artifact", 0),
    ("heartbeat_lost", 0), ("heartbeat_lost", 3), ("rename", 1), ("revoke", 0),
    ("unknown", 0), ("resend", 7), ("resend", 20), ("pair", 2), ("connect", 2),
    ("task", 1), ("accept", 3), ("request", 3), ("request", 7), ("resolve", 1), ("member", 3),
    ("register_tools", 1), ("register_tools", 3), ("tool_call", 0), ("tool_call", 2),
    ("tool_call", 5), ("tool_call", 7), ("tool_answer", 0), ("tool_fail", 0), ("tool_cancel", 1),
    ("tool_call", 3), ("tool_expire", 0), ("canvas_open", 0), ("canvas_op", 0), ("canvas_op", 2),
    ("canvas_op", 6), ("canvas_op", 4), ("canvas_op", 8), ("canvas_open", 1), ("canvas_op", 1),
    ("canvas_op", 3), ("canvas_op", 10),
]  # fmt: skip


async def append_in_batches(store: Store, stream: list[NewEvent], size: int = 24) -> None:
    """Append ``stream`` ``size`` events at a time, each lot submitted in one turn of the event
    loop so the writer takes it in as few batches as it can (in order within a workspace:
    one lane per submission, queued in turn; a batch may take the jobs that write rows
    workspaces share first, so the workspaces are created before); asserts that some
    batches held many events."""
    largest = store.writer_stats.largest_batch
    created = [e for e in stream if e.type == "workspace.created"]
    for e in created:
        await store.append(e)
    stream = [e for e in stream if e.type != "workspace.created"]
    for start in range(0, len(stream), size):
        lot = stream[start : start + size]
        await asyncio.wait_for(asyncio.gather(*(store.append(e) for e in lot)), 30)
    assert store.writer_stats.largest_batch > max(largest, 1)
