"""Small builders for store tests: events as the hub would append them."""

from __future__ import annotations

from typing import Any

from lineup.protocol.ids import new_ulid
from lineup.store import NewEvent, Store

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def event(
    workspace_id: str,
    type: str,
    payload: dict[str, Any] | None = None,
    *,
    actor: str = "system",
    conversation_id: str | None = None,
    task_id: str | None = None,
    correlation_id: str | None = None,
    occurred_at: int = T0,
    event_id: str | None = None,
) -> NewEvent:
    return NewEvent(
        id=event_id or new_ulid(),
        workspace_id=workspace_id,
        type=type,
        actor=actor,
        payload=payload or {},
        occurred_at=occurred_at,
        conversation_id=conversation_id,
        task_id=task_id,
        correlation_id=correlation_id,
    )


def workspace_created(workspace_id: str, name: str = "Acme", owner: str = "u1") -> NewEvent:
    return event(
        workspace_id,
        "workspace.created",
        {"workspaceId": workspace_id, "name": name, "ownerUserId": owner},
        actor=f"user:{owner}",
    )


async def create_workspace(store: Store, name: str = "Acme") -> str:
    workspace_id = new_ulid()
    await store.append(workspace_created(workspace_id, name))
    return workspace_id


def note(workspace_id: str, n: int = 0) -> NewEvent:
    """An event no projection knows: stored and sequenced, nothing else."""
    return event(workspace_id, "test.note", {"n": n})
