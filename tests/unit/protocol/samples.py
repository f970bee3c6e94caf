"""One valid payload per catalog type, shared by the protocol tests."""

from __future__ import annotations

from typing import Any

from lineup.protocol.events import Sender

CHOICE_TOOL = {
    "name": "choice",
    "type": "action",
    "description": "Offer a person a set of options.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "options": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["question", "options"],
    },
}

SAMPLES: dict[tuple[str, Sender], dict[str, Any]] = {
    ("message.create", Sender.USER): {"content": "hello", "targetAgentId": "agent_1"},
    ("message.create", Sender.AGENT): {"content": "done", "messageId": "msg_1"},
    ("task.create", Sender.USER): {"title": "Tidy deps", "targetAgentId": "agent_1"},
    ("task.create", Sender.AGENT): {"title": "Fix the build", "taskId": "task_mine"},
    ("interaction.respond", Sender.USER): {
        "interactionId": "int_1",
        "response": {"optionId": "approve"},
    },
    ("task.cancel_requested", Sender.USER): {"taskId": "task_1", "reason": "not needed"},
    ("agent.hello", Sender.AGENT): {
        "agentVersion": "1.0.0",
        "runtime": "python",
        "capabilities": ["tasks"],
        "lastSequence": 3,
    },
    ("agent.heartbeat", Sender.AGENT): {},
    ("agent.logs", Sender.AGENT): {
        "lines": [
            {
                "id": "log_1",
                "ts": "2026-07-25T09:05:01.003Z",
                "level": "warning",
                "logger": "lineup.sdk",
                "message": "cannot reach the hub; retry in 0.50s",
                "fields": {"attempt": 3},
            }
        ]
    },
    ("message.delta", Sender.AGENT): {"messageId": "msg_1", "delta": "Hel"},
    ("task.accepted", Sender.AGENT): {"taskId": "task_1"},
    ("task.status_changed", Sender.AGENT): {"status": "running", "progress": 40, "summary": "x"},
    ("task.child_created", Sender.AGENT): {"parentTaskId": "task_1", "title": "Scan repo"},
    ("interaction.requested", Sender.AGENT): {
        "interaction": {
            "id": "int_1",
            "type": "approval",
            "title": "Run the production migration?",
            "risk": "high",
            "options": [
                {"id": "approve", "label": "Allow", "style": "primary"},
                {"id": "reject", "label": "Reject", "style": "danger"},
            ],
            "details": {"migrationCount": 3},
            "expiresAt": "2026-07-25T12:00:00Z",
        }
    },
    ("artifact.created", Sender.AGENT): {"name": "plan.md", "url": "https://example.test/p"},
    ("activity.started", Sender.AGENT): {
        "activityId": "act_1",
        "kind": "command",
        "command": "pytest -q",
        "cwd": "/srv/app",
    },
    ("activity.output", Sender.AGENT): {"activityId": "act_1", "chunk": "..F.\n", "offset": 0},
    ("activity.finished", Sender.AGENT): {"activityId": "act_1", "status": "failed", "exitCode": 1},
    ("activity.usage", Sender.AGENT): {"inputTokens": 1200, "outputTokens": 340},
    ("task.assigned", Sender.HUB): {"taskId": "task_1", "title": "Tidy deps"},
    ("message.delivered", Sender.HUB): {
        "messageId": "msg_1",
        "author": {"kind": "user", "id": "user_1"},
        "content": "also check tests",
    },
    ("interaction.resolved", Sender.HUB): {
        "interactionId": "int_1",
        "response": {"optionId": "approve"},
        "respondedBy": "user_1",
        "respondedAt": 1_784_894_460_000,
    },
    ("interaction.expired", Sender.HUB): {"interactionId": "int_1", "expiresAt": 1_784_894_460_000},
    ("system.resync_required", Sender.HUB): {"reason": "history pruned"},
    ("agent.welcome", Sender.HUB): {
        "agentId": "agent_1",
        "workspaceId": "ws_1",
        "heartbeatIntervalMs": 25000,
        "latestSequence": 7,
        "name": "builder",
        "awaitingConfirmation": True,
        "settings": {"retries": 3},
    },
    ("task.status_changed", Sender.HUB): {
        "taskId": "task_1",
        "status": "cancelled",
        "cause": "cancel_timeout",
        "summary": "The agent did not confirm the cancel in time.",
    },
    ("agent.confirmed", Sender.HUB): {"agentId": "agent_1", "name": "builder"},
    ("agent.settings", Sender.HUB): {"agentId": "agent_1", "values": {"retries": 3}},
    ("client.subscribe", Sender.USER): {"lastSequence": 0},
    ("client.caught_up", Sender.HUB): {"sequence": 10},
    ("client.batch", Sender.HUB): {
        "events": [
            {"id": "evt_1", "type": "task.created", "version": "0.1", "sequence": 11},
        ]
    },
    ("tool.list", Sender.AGENT): {"tools": [CHOICE_TOOL]},
    ("tool.call", Sender.AGENT): {
        "call_id": "c1",
        "name": "choice",
        "action": "select",
        "arguments": {"question": "Where?", "options": ["test", "prod"]},
    },
    ("tool.result", Sender.USER): {
        "call_id": "c1",
        "name": "choice",
        "action": "select",
        "result": {"message": "test"},
    },
    ("tool.cancel", Sender.AGENT): {"call_id": "c1", "reason": "no longer needed"},
    ("interaction.cancel", Sender.AGENT): {"interactionId": "int_1", "reason": "Answered"},
    ("tool.cancelled", Sender.HUB): {"call_id": "c1", "reason": "The task was cancelled."},
    ("interaction.cancelled", Sender.HUB): {
        "interactionId": "int_1",
        "reason": "The task was cancelled.",
        "taskId": "task_1",
    },
    ("capability.list", Sender.AGENT): {},
    ("capability.list", Sender.HUB): {
        "capabilities": [
            {
                "id": "scheduling.orders.query",
                "provider": "scheduling",
                "effect": "read",
                "mode": "sync",
                "description": "Orders and their due dates.",
                "inputSchema": {"type": "object"},
            }
        ],
        "projectId": "prj_1",
    },
    ("capability.invoke", Sender.AGENT): {
        "invocationId": "inv-1",
        "capability": "scheduling.schedule.publish",
        "instance": "plant-1",
        "params": {"draftId": "d1", "version": "v3"},
    },
    ("capability.result", Sender.HUB): {
        "invocationId": "inv-1",
        "capability": "scheduling.schedule.publish",
        "status": "succeeded",
        "executionId": "exe_1",
        "output": {"version": "v4"},
    },
}


def envelope(event_type: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": extra.pop("id", "evt_1"),
        "type": event_type,
        "version": "0.1",
        "occurredAt": "2026-07-24T12:00:00Z",
        "workspaceId": "ws_1",
        "payload": payload,
        **extra,
    }
