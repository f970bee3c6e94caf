"""What an agent sees of its workspace's log (seed 001 §10.3).

A downlink frame keeps the recorded event's id and sequence, so the agent's ``lastSequence`` is
a cursor into the same log and a replay after a reconnect is exact.
"""

from __future__ import annotations

from typing import Any

from lineup.protocol.envelope import Envelope
from lineup.protocol.times import ms_to_datetime
from lineup.store import StoredEvent


def _envelope(event: StoredEvent, type_: str, payload: dict[str, Any]) -> Envelope:
    return Envelope(
        id=event.id,
        type=type_,
        occurred_at=ms_to_datetime(event.occurred_at),
        workspace_id=event.workspace_id,
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        sequence=event.sequence,
        correlation_id=event.correlation_id,
        payload=payload,
    )


CONNECTION_NEWS = frozenset(("agent.connected", "agent.revoked", "agent.status_changed"))
"""Events an agent's connection reacts to itself: its agent connected again, was revoked, or
was recorded offline (by another node, which found this one dead)."""


def concerns(event: StoredEvent, agent_id: str) -> bool:
    """Whether an agent's connection must look at ``event`` at all: :func:`for_agent` makes a
    frame only for the event's ``targetAgentId``, and the connection closes itself on news of
    its own agent. Everything else of the workspace is skipped without waking it."""
    payload = event.payload
    return payload.get("targetAgentId") == agent_id or (
        event.type in CONNECTION_NEWS and payload.get("agentId") == agent_id
    )


def for_agent(event: StoredEvent, agent_id: str) -> Envelope | None:
    """The frame ``agent_id`` gets for ``event``, or None when it is not the agent's business."""
    p = event.payload
    if p.get("targetAgentId") != agent_id:
        return None
    if event.type == "task.created":
        payload: dict[str, Any] = {"taskId": p["taskId"], "title": p["title"]}
        for key in ("description", "parentTaskId"):
            if p.get(key):
                payload[key] = p[key]
        return _envelope(event, "task.assigned", payload)
    if event.type == "message.created" and p.get("author", {}).get("kind") == "user":
        payload = {
            "messageId": p["messageId"],
            "author": p["author"],
            "content": p["content"],
            "steer": bool(p.get("steer")),
        }
        if p.get("attachments"):
            payload["attachments"] = p["attachments"]
        return _envelope(event, "message.delivered", payload)
    if event.type == "interaction.resolved":
        payload = {
            "interactionId": p["interactionId"],
            "response": p["response"],
            "respondedBy": p["respondedBy"],
            "respondedAt": p["respondedAt"],
        }
        if p.get("respondedByName"):
            payload["respondedByName"] = p["respondedByName"]
        return _envelope(event, "interaction.resolved", payload)
    if event.type == "interaction.cancelled":
        payload = {"interactionId": p["interactionId"]}
        for key in ("reason", "taskId"):
            if p.get(key):
                payload[key] = p[key]
        return _envelope(event, "interaction.cancelled", payload)
    if event.type == "interaction.expired":
        payload = {"interactionId": p["interactionId"]}
        if p.get("expiresAt") is not None:
            payload["expiresAt"] = p["expiresAt"]
        return _envelope(event, "interaction.expired", payload)
    if event.type == "task.cancel_requested":
        payload = {"taskId": p["taskId"]}
        if p.get("reason"):
            payload["reason"] = p["reason"]
        return _envelope(event, "task.cancel_requested", payload)
    if event.type == "tool.completed":
        payload = {"call_id": p["callId"], "name": p["name"]}
        for key in ("action", "result", "error"):
            if p.get(key) is not None:
                payload[key] = p[key]
        return _envelope(event, "tool.result", payload)
    if event.type == "tool.cancelled" and event.actor != f"agent:{agent_id}":
        # The agent's own tool.cancel is not echoed; a withdrawal by the hub is news.
        payload = {"call_id": p["callId"]}
        if p.get("reason"):
            payload["reason"] = p["reason"]
        return _envelope(event, "tool.cancelled", payload)
    return None


def for_person(event: StoredEvent) -> dict[str, Any]:
    """People's apps see every recorded event as an envelope, plus who acted."""
    frame = _envelope(event, event.type, event.payload).wire()
    frame["actor"] = event.actor
    return frame
