"""How projections look on the HTTP API: camelCase keys, ISO 8601 UTC timestamps."""

from __future__ import annotations

from typing import Any

from lineup.domain import ACTIVE_STATUSES
from lineup.hub.downlink import for_person
from lineup.hub.presence import Presence
from lineup.protocol import agent_settings
from lineup.protocol import builtin_tools as builtin
from lineup.protocol.times import iso
from lineup.store import (
    Agent,
    Artifact,
    Conversation,
    Interaction,
    Message,
    StoredEvent,
    Task,
    User,
    UserWorkspace,
)
from lineup.store.records import CanvasInstance, CanvasOpRecord, ToolCallRecord, ToolDevice


def user(u: User) -> dict[str, Any]:
    return {"id": u.id, "email": u.email, "displayName": u.display_name}


def workspace(uw: UserWorkspace) -> dict[str, Any]:
    return {"id": uw.workspace.id, "name": uw.workspace.name, "role": uw.role}


def agent(a: Agent, presence: Presence | None = None) -> dict[str, Any]:
    last_beat = a.last_heartbeat_at
    link = presence.get(a.id) if presence is not None else None
    if link is not None and a.status == "online":
        last_beat = max(last_beat or 0, link.last_beat_ms)
    return {
        "id": a.id,
        "name": a.name,
        "runtime": a.runtime,
        "version": a.agent_version,
        "status": a.status,
        "online": a.status == "online",
        "capabilities": a.capabilities or [],
        "tools": a.tools or [],
        "lastHeartbeatAt": iso(last_beat),
        "connectedAt": iso(a.connected_at),
        "offlineAt": iso(a.offline_at),
        "revokedAt": iso(a.revoked_at),
        "createdAt": iso(a.created_at),
        "confirmed": a.confirmed,
        "confirmedAt": iso(a.confirmed_at),
        "settingsSchema": a.settings_schema,
        "settings": agent_settings.effective(a.settings_schema, a.settings),
    }


def conversation(c: Conversation) -> dict[str, Any]:
    return {
        "id": c.id,
        "title": c.title,
        "agentIds": c.agent_ids or [],
        "createdAt": iso(c.created_at),
        "updatedAt": iso(c.updated_at),
        "lastSequence": c.last_sequence,
        "projectId": c.project_id,
    }


def message(m: Message) -> dict[str, Any]:
    author: dict[str, Any] = {"kind": m.author_kind, "id": m.author_id}
    if m.author_name:
        author["name"] = m.author_name
    return {
        "id": m.id,
        "conversationId": m.conversation_id,
        "author": author,
        "content": m.content,
        "blocks": m.blocks,
        "attachments": m.attachments,
        "targetAgentId": m.target_agent_id,
        "taskId": m.task_id,
        "createdAt": iso(m.created_at),
        "sequence": m.sequence,
    }


def task(t: Task, agents: dict[str, Agent] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": t.id,
        "conversationId": t.conversation_id,
        "parentTaskId": t.parent_task_id,
        "title": t.title,
        "description": t.description,
        "targetAgentId": t.target_agent_id,
        "status": t.status,
        "progress": t.progress,
        "summary": t.summary,
        "error": t.error,
        "cancelRequested": bool(t.cancel_requested),
        "cancelReason": t.cancel_reason,
        "cancelDeadline": iso(t.cancel_deadline),
        "endCause": t.end_cause,
        "createdBy": t.created_by,
        "createdAt": iso(t.created_at),
        "updatedAt": iso(t.updated_at),
        "lastSequence": t.last_sequence,
        "agentConnectionLost": False,
        "lastHeartbeatAt": None,
        "connectionLostAt": None,
    }
    target = (agents or {}).get(t.target_agent_id or "")
    active = t.status in ACTIVE_STATUSES
    if target is not None and active and target.status in ("offline", "revoked"):
        body["agentConnectionLost"] = True
        body["lastHeartbeatAt"] = iso(target.last_heartbeat_at)
        lost = target.revoked_at if target.status == "revoked" else target.offline_at
        body["connectionLostAt"] = iso(lost or target.last_heartbeat_at)
    return body


def interaction(
    i: Interaction, *, agent_name: str | None = None, task_title: str | None = None
) -> dict[str, Any]:
    return {
        "id": i.id,
        "agentName": agent_name,
        "taskTitle": task_title,
        "type": i.kind,
        "status": i.status,
        "taskId": i.task_id,
        "conversationId": i.conversation_id,
        "agentId": i.agent_id,
        "request": i.request,
        "response": i.response,
        "respondedBy": i.responded_by,
        "respondedByName": i.responded_by_name,
        "respondedAt": iso(i.responded_at),
        "expiresAt": iso(i.expires_at),
        "cancelReason": i.cancel_reason,
        "createdAt": iso(i.created_at),
        "sequence": i.sequence,
    }


def artifact(a: Artifact) -> dict[str, Any]:
    return {
        "id": a.id,
        "taskId": a.task_id,
        "conversationId": a.conversation_id,
        "name": a.name,
        "url": a.url,
        "mimeType": a.mime_type,
        "summary": a.summary,
        "createdBy": a.created_by,
        "createdAt": iso(a.created_at),
    }


def event(e: StoredEvent) -> dict[str, Any]:
    return for_person(e)


def tool_call(row: ToolCallRecord) -> dict[str, Any]:
    return {
        "id": row.id,
        "callId": row.call_id,
        "agentId": row.agent_id,
        "name": row.name,
        "action": row.action,
        "arguments": row.arguments,
        "status": row.status,
        "conversationId": row.conversation_id,
        "taskId": row.task_id,
        "instanceId": row.instance_id,
        "result": row.result,
        "error": row.error,
        "answeredBy": row.answered_by,
        "answeredByName": row.answered_by_name,
        "answeredAt": iso(row.answered_at),
        "cancelReason": row.cancel_reason,
        "timeoutMs": row.timeout_ms,
        "expiresAt": iso(row.expires_at),
        "createdAt": iso(row.created_at),
        "updatedAt": iso(row.updated_at),
        "sequence": row.sequence,
    }


def canvas(canvas: CanvasInstance, ops: list[CanvasOpRecord]) -> dict[str, Any]:
    strokes = builtin.visible_strokes(
        builtin.CanvasOp(
            kind=op.kind,
            undone=bool(op.undone),
            stroke=builtin.Stroke(op.path or "", op.color, op.width, op.tool_call_id)
            if op.kind == "draw"
            else None,
        )
        for op in ops
    )
    return {
        "id": canvas.id,
        "agentId": canvas.agent_id,
        "toolCallId": canvas.tool_call_id,
        "conversationId": canvas.conversation_id,
        "taskId": canvas.task_id,
        "width": canvas.width,
        "height": canvas.height,
        "status": canvas.status,
        "strokes": [
            {"path": s.path, "color": s.color, "width": s.width, "toolCallId": s.call_id}
            for s in strokes
        ],
        "operations": len(ops),
        "undone": sum(1 for op in ops if op.undone),
        "createdAt": iso(canvas.created_at),
        "updatedAt": iso(canvas.updated_at),
        "lastSequence": canvas.last_sequence,
    }


def tool_device(device: ToolDevice) -> dict[str, Any]:
    return {
        "deviceId": device.device_id,
        "userId": device.user_id,
        "name": device.name,
        "tools": [t.get("name") for t in device.tools],
        "updatedAt": iso(device.updated_at),
    }
