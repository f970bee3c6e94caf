"""Projections: the tables the UI reads, each a pure function of the event log.

A handler sees only the event and the rows earlier events made, and takes every time from the
event (``recorded_at``, the hub's clock, for created/updated times), so replaying the log
rebuilds the same rows. Handlers do not enforce business rules — the hub checks those with
``lineup.domain`` before appending — and tolerate missing optional keys; a missing required
key fails the append as ``invalid_argument``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert, Table, Update, bindparam, delete, false, func, insert, select, update
from sqlalchemy.engine import Connection

from lineup.protocol.builtin_tools import ASK_TOOLS
from lineup.protocol.errors import InvalidArgument
from lineup.protocol.events import TaskStatusName
from lineup.store import statements
from lineup.store.schema import (
    PROJECTION_TABLES,
    agents,
    artifacts,
    canvas_instances,
    canvas_ops,
    conversations,
    interactions,
    memberships,
    messages,
    tasks,
    tool_calls,
    tool_devices,
    users,
    workspaces,
)

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent

Handler = Callable[[Connection, "StoredEvent"], None]

RUNNING = TaskStatusName.RUNNING.value
WAITING_FOR_HUMAN = TaskStatusName.WAITING_FOR_HUMAN.value
REQUESTED = "requested"
PENDING = "pending"


def apply_event(conn: Connection, event: StoredEvent) -> None:
    handler = HANDLERS.get(event.type)
    if handler is None:
        return  # a newer hub's event: kept in the log, projected once this code knows it
    try:
        handler(conn, event)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidArgument(
            f"{event.type} payload is malformed: {exc!r}",
            details={"eventId": event.id, "type": event.type},
        ) from exc


def clear(conn: Connection) -> None:
    for table in PROJECTION_TABLES:
        conn.execute(delete(table))


# --- helpers -------------------------------------------------------------------------------


@functools.cache
def _update_where(table: Table, *key: str) -> Update:
    """``UPDATE table SET … WHERE k = :where_k …``, built once per table and key.

    Without ``.values()`` the SET clause comes from each execution's parameters (the names
    that are columns), so one prebuilt statement serves every handler; that skips building
    the expression and its cache key on every event.
    """
    return update(table).where(*(table.c[k] == bindparam(f"where_{k}") for k in key))


def _update(
    conn: Connection, table: Table, key: Mapping[str, Any], values: Mapping[str, Any]
) -> int:
    """Set ``values`` on the rows matching ``key``; returns how many rows matched."""
    params = {f"where_{k}": v for k, v in key.items()}
    params.update(values)
    return statements.run(conn, _update_where(table, *key), params).rowcount


def _insert(conn: Connection, table: Table, **values: Any) -> None:
    statements.run(conn, _insert_into(table), values)


@functools.cache
def _insert_into(table: Table) -> Insert:
    return insert(table)


def _upsert(
    conn: Connection,
    table: Table,
    key: Mapping[str, Any],
    *,
    on_insert: Mapping[str, Any],
    always: Mapping[str, Any],
) -> None:
    """Update-then-insert: portable, and replay-safe because a handler runs alone in its tx."""
    if _update(conn, table, key, always) == 0:
        _insert(conn, table, **key, **on_insert, **always)


def _agent_id_of(actor: str) -> str | None:
    kind, _, ident = actor.partition(":")
    return ident if kind == "agent" and ident else None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _to_ms(value: Any) -> int | None:
    """Wire times are ISO 8601 strings; the database keeps milliseconds."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError("a time cannot be a boolean")
    if isinstance(value, int):
        return value
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def _touch_task(conn: Connection, event: StoredEvent, task_id: str, **values: Any) -> None:
    _update(
        conn,
        tasks,
        {"workspace_id": event.workspace_id, "id": task_id},
        {"updated_at": event.recorded_at, "last_sequence": event.sequence, **values},
    )


_TASK_STATUS = select(tasks.c.status).where(
    tasks.c.workspace_id == bindparam("workspace_id"), tasks.c.id == bindparam("id")
)


def _task_status(conn: Connection, event: StoredEvent, task_id: str) -> str | None:
    params = {"workspace_id": event.workspace_id, "id": task_id}
    status: str | None = statements.run(conn, _TASK_STATUS, params).scalar()
    return status


# --- workspace and members -----------------------------------------------------------------


def _workspace_created(conn: Connection, event: StoredEvent) -> None:
    # The row exists already (append made it to hold the counter); keep its last_sequence.
    _upsert(
        conn,
        workspaces,
        {"id": event.workspace_id},
        on_insert={"last_sequence": 0},
        always={"name": event.payload["name"], "created_at": event.recorded_at},
    )


def _member_joined(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    user_id = p["userId"]
    _upsert(
        conn,
        users,
        {"id": user_id},
        on_insert={"created_at": event.recorded_at},
        always={"email": p["email"], "display_name": p.get("displayName") or p["email"]},
    )
    _upsert(
        conn,
        memberships,
        {"workspace_id": event.workspace_id, "user_id": user_id},
        on_insert={"created_at": event.recorded_at},
        always={"role": p.get("role", "member")},
    )


# --- agents --------------------------------------------------------------------------------


def _update_agent(conn: Connection, event: StoredEvent, **values: Any) -> None:
    _update(
        conn,
        agents,
        {"workspace_id": event.workspace_id, "id": event.payload["agentId"]},
        {"updated_at": event.recorded_at, **values},
    )


def _agent_paired(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _upsert(
        conn,
        agents,
        {"id": p["agentId"]},
        on_insert={
            "workspace_id": event.workspace_id,
            "status": "never_connected",
            "capabilities": [],
            "tools": [],
            "created_at": event.recorded_at,
        },
        always={
            "name": p["name"],
            "runtime": p.get("runtime"),
            "agent_version": p.get("agentVersion"),
            "updated_at": event.recorded_at,
        },
    )


def _agent_connected(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    values: dict[str, Any] = {
        "status": "online",
        "last_heartbeat_at": event.occurred_at,
        "connected_at": event.occurred_at,
        "offline_at": None,
        "capabilities": list(p.get("capabilities") or []),
    }
    if "agentVersion" in p:
        values["agent_version"] = p["agentVersion"]
    if "runtime" in p:
        values["runtime"] = p["runtime"]
    if p.get("tools") is not None:
        values["tools"] = list(p["tools"])
    _update_agent(conn, event, **values)


def _agent_status_changed(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    values: dict[str, Any] = {"status": p["status"]}
    if p.get("status") == "offline":
        # the hub records this event itself: it occurred when the hub found the agent gone
        values["offline_at"] = event.occurred_at
    if p.get("lastHeartbeatAt") is not None:
        # null means "unknown now", not "never": keep the last one the UI can show.
        values["last_heartbeat_at"] = p["lastHeartbeatAt"]
    _update_agent(conn, event, **values)


def _agent_renamed(conn: Connection, event: StoredEvent) -> None:
    _update_agent(conn, event, name=event.payload["name"])


def _agent_revoked(conn: Connection, event: StoredEvent) -> None:
    _update_agent(conn, event, status="revoked", revoked_at=event.recorded_at)


# --- conversations and messages ------------------------------------------------------------


def _conversation_created(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _insert(
        conn,
        conversations,
        id=p.get("conversationId") or event.conversation_id,
        workspace_id=event.workspace_id,
        title=p.get("title") or "",
        agent_ids=list(p.get("agentIds") or []),
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        last_sequence=event.sequence,
    )


def _message_created(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    conversation_id = event.conversation_id or p["conversationId"]
    author = p["author"]
    _insert(
        conn,
        messages,
        id=p["messageId"],
        workspace_id=event.workspace_id,
        conversation_id=conversation_id,
        author_kind=author["kind"],
        author_id=author.get("id"),
        content=p.get("content") or "",
        blocks=p.get("blocks"),
        attachments=p.get("attachments"),
        target_agent_id=p.get("targetAgentId"),
        task_id=p.get("taskId") or event.task_id,
        created_at=event.recorded_at,
        sequence=event.sequence,
    )
    _update(
        conn,
        conversations,
        {"workspace_id": event.workspace_id, "id": conversation_id},
        {"updated_at": event.recorded_at, "last_sequence": event.sequence},
    )


# --- tasks ---------------------------------------------------------------------------------


def _new_task(event: StoredEvent, **values: Any) -> dict[str, Any]:
    return {
        "workspace_id": event.workspace_id,
        "conversation_id": event.conversation_id,
        "description": None,
        "progress": 0,
        "summary": None,
        "error": None,
        "cancel_requested": False,
        "cancel_reason": None,
        "created_by": event.actor,
        "created_at": event.recorded_at,
        "updated_at": event.recorded_at,
        "last_sequence": event.sequence,
        **values,
    }


def _task_created(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    row = _new_task(
        event,
        id=p.get("taskId") or event.task_id,
        parent_task_id=p.get("parentTaskId"),
        title=p["title"],
        description=p.get("description"),
        target_agent_id=p.get("targetAgentId"),
        status="queued",
        created_by=p.get("createdBy") or event.actor,
    )
    _insert(conn, tasks, **row)


def _task_child_created(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    parent = conn.execute(
        select(tasks.c.conversation_id, tasks.c.target_agent_id).where(
            tasks.c.workspace_id == event.workspace_id, tasks.c.id == p["parentTaskId"]
        )
    ).first()
    row = _new_task(
        event,
        id=p["childTaskId"],
        parent_task_id=p["parentTaskId"],
        title=p["title"],
        description=p.get("description"),
        status=p.get("status") or "queued",
        target_agent_id=p.get("targetAgentId") or (parent.target_agent_id if parent else None),
        conversation_id=event.conversation_id or (parent.conversation_id if parent else None),
    )
    _insert(conn, tasks, **row)


def _task_accepted(conn: Connection, event: StoredEvent) -> None:
    _touch_task(conn, event, event.payload["taskId"], status=RUNNING)


def _task_status_changed(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    values: dict[str, Any] = {"status": p["status"]}
    if p.get("progress") is not None:
        values["progress"] = int(p["progress"])
    for key in ("summary", "error"):
        if key in p:
            values[key] = p[key]
    _touch_task(conn, event, p["taskId"], **values)


def _task_cancel_requested(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _touch_task(conn, event, p["taskId"], cancel_requested=True, cancel_reason=p.get("reason"))


# --- interactions --------------------------------------------------------------------------


def _interaction_requested(conn: Connection, event: StoredEvent) -> None:
    request = event.payload["interaction"]
    task_id = event.task_id or request.get("taskId")
    _insert(
        conn,
        interactions,
        id=request["id"],
        workspace_id=event.workspace_id,
        task_id=task_id,
        conversation_id=event.conversation_id or request.get("conversationId"),
        agent_id=_agent_id_of(event.actor),
        kind=request["type"],
        status=REQUESTED,
        request=request,
        response=None,
        expires_at=_to_ms(request.get("expiresAt")),
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )
    if task_id and _task_status(conn, event, task_id) == RUNNING:
        _touch_task(conn, event, task_id, status=WAITING_FOR_HUMAN)


def _close_interaction(conn: Connection, event: StoredEvent, **values: Any) -> None:
    """Close one request; a task blocked only on requests goes back to running when none remain."""
    interaction_id = event.payload["interactionId"]
    key = {"workspace_id": event.workspace_id, "id": interaction_id}
    _update(conn, interactions, key, {"updated_at": event.recorded_at, **values})
    task_id = conn.execute(
        select(interactions.c.task_id).where(
            interactions.c.workspace_id == event.workspace_id,
            interactions.c.id == interaction_id,
        )
    ).scalar()
    if task_id:
        _resume_if_nothing_waits(conn, event, task_id)


def _resume_if_nothing_waits(conn: Connection, event: StoredEvent, task_id: str) -> None:
    """A task waiting for a person runs again once no request and no question tool is open."""
    if _task_status(conn, event, task_id) != WAITING_FOR_HUMAN:
        return
    ws = event.workspace_id
    requests = conn.execute(
        select(func.count())
        .select_from(interactions)
        .where(
            interactions.c.workspace_id == ws,
            interactions.c.task_id == task_id,
            interactions.c.status == REQUESTED,
        )
    ).scalar_one()
    questions = conn.execute(
        select(func.count())
        .select_from(tool_calls)
        .where(
            tool_calls.c.workspace_id == ws,
            tool_calls.c.task_id == task_id,
            tool_calls.c.status == PENDING,
            tool_calls.c.name.in_(sorted(ASK_TOOLS)),
        )
    ).scalar_one()
    if requests == 0 and questions == 0:
        _touch_task(conn, event, task_id, status=RUNNING)


def _interaction_resolved(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    responded_at = _to_ms(p.get("respondedAt"))
    _close_interaction(
        conn,
        event,
        status="resolved",
        response=p.get("response"),
        responded_by=p.get("respondedBy") or event.actor,
        responded_by_name=p.get("respondedByName"),
        responded_at=event.recorded_at if responded_at is None else responded_at,
    )


def _interaction_expired(conn: Connection, event: StoredEvent) -> None:
    _close_interaction(conn, event, status="expired")


def _interaction_cancelled(conn: Connection, event: StoredEvent) -> None:
    _close_interaction(conn, event, status="cancelled", cancel_reason=event.payload.get("reason"))


def _tool_registered(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _upsert(
        conn,
        tool_devices,
        {"workspace_id": event.workspace_id, "device_id": p["deviceId"]},
        on_insert={"created_at": event.recorded_at},
        always={
            "user_id": p.get("userId"),
            "name": p.get("name"),
            "tools": list(p.get("tools") or []),
            "updated_at": event.recorded_at,
            "last_sequence": event.sequence,
        },
    )


def _tool_called(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _insert(
        conn,
        tool_calls,
        id=p["toolCallId"],
        workspace_id=event.workspace_id,
        agent_id=p["agentId"],
        call_id=p["callId"],
        name=p["name"],
        action=p.get("action"),
        arguments=dict(p.get("arguments") or {}),
        status="pending",
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        instance_id=p.get("instanceId"),
        result=None,
        error=None,
        timeout_ms=p.get("timeoutMs"),
        expires_at=p.get("expiresAt"),
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )
    # A question for the person (choice, confirm, input) blocks its task as a request does.
    task_id = event.task_id
    if task_id and p["name"] in ASK_TOOLS and _task_status(conn, event, task_id) == RUNNING:
        _touch_task(conn, event, task_id, status=WAITING_FOR_HUMAN)


_GET_TOOL_CALL = select(tool_calls).where(
    tool_calls.c.workspace_id == bindparam("workspace_id"), tool_calls.c.id == bindparam("id")
)


def _tool_completed(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    key = {"workspace_id": event.workspace_id, "id": p["toolCallId"]}
    if p.get("expired"):
        status = "expired"
    else:
        status = "failed" if p.get("error") is not None else "completed"
    answered_at = _to_ms(p.get("answeredAt"))
    _update(
        conn,
        tool_calls,
        key,
        {
            "status": status,
            "result": p.get("result"),
            "error": p.get("error"),
            "answered_by": p.get("answeredBy") or event.actor,
            "answered_by_name": p.get("answeredByName"),
            "answered_at": event.recorded_at if answered_at is None else answered_at,
            "updated_at": event.recorded_at,
        },
    )
    call = conn.execute(_GET_TOOL_CALL, key).first()
    if call is not None and call.name == "canvas" and status == "completed" and call.instance_id:
        _canvas_applied(conn, event, call)
    _question_closed(conn, event, call)


def _question_closed(conn: Connection, event: StoredEvent, call: Any) -> None:
    if call is not None and call.task_id and call.name in ASK_TOOLS:
        _resume_if_nothing_waits(conn, event, call.task_id)


def _canvas_applied(conn: Connection, event: StoredEvent, call: Any) -> None:
    """A canvas call an app answered: its effect on the instance (seed 000 §5.2)."""
    instance = {"workspace_id": event.workspace_id, "id": call.instance_id}
    touched: dict[str, Any] = {"updated_at": event.recorded_at, "last_sequence": event.sequence}
    if call.action == "open":
        _insert(
            conn,
            canvas_instances,
            **instance,
            agent_id=call.agent_id,
            tool_call_id=call.id,
            conversation_id=call.conversation_id,
            task_id=call.task_id,
            width=int(call.arguments["width"]),
            height=int(call.arguments["height"]),
            status="open",
            draws=0,
            created_at=event.recorded_at,
            sequence=event.sequence,
            **touched,
        )
        return
    if call.action in ("draw", "clear"):
        args = call.arguments
        _insert(
            conn,
            canvas_ops,
            tool_call_id=call.id,
            workspace_id=event.workspace_id,
            instance_id=call.instance_id,
            sequence=event.sequence,
            kind=call.action,
            path=args.get("path") if call.action == "draw" else None,
            color=args.get("color") if call.action == "draw" else None,
            width=args.get("width") if call.action == "draw" else None,
            undone=False,
            created_at=event.recorded_at,
        )
        if call.action == "draw":
            conn.execute(
                update(canvas_instances)
                .where(
                    canvas_instances.c.workspace_id == event.workspace_id,
                    canvas_instances.c.id == call.instance_id,
                )
                .values(draws=canvas_instances.c.draws + 1)
            )
    elif call.action == "undo":
        latest = conn.execute(
            select(canvas_ops.c.tool_call_id)
            .where(
                canvas_ops.c.workspace_id == event.workspace_id,
                canvas_ops.c.instance_id == call.instance_id,
                canvas_ops.c.undone == false(),
            )
            .order_by(canvas_ops.c.sequence.desc())
            .limit(1)
        ).scalar()
        if latest is not None:
            _update(conn, canvas_ops, {"tool_call_id": latest}, {"undone": True})
    elif call.action == "close":
        touched["status"] = "closed"
    _update(conn, canvas_instances, instance, touched)


def _tool_cancelled(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    key = {"workspace_id": event.workspace_id, "id": p["toolCallId"]}
    _update(
        conn,
        tool_calls,
        key,
        {"status": "cancelled", "cancel_reason": p.get("reason"), "updated_at": event.recorded_at},
    )
    _question_closed(conn, event, conn.execute(_GET_TOOL_CALL, key).first())


# --- artifacts -----------------------------------------------------------------------------


def _artifact_created(conn: Connection, event: StoredEvent) -> None:
    p = event.payload
    _insert(
        conn,
        artifacts,
        id=p["artifactId"],
        workspace_id=event.workspace_id,
        task_id=p.get("taskId") or event.task_id,
        conversation_id=event.conversation_id,
        name=p["name"],
        url=p["url"],
        mime_type=p.get("mimeType"),
        summary=p.get("summary"),
        created_by=event.actor,
        created_at=event.recorded_at,
    )


HANDLERS: Mapping[str, Handler] = {
    "workspace.created": _workspace_created,
    "member.joined": _member_joined,
    "agent.paired": _agent_paired,
    "agent.connected": _agent_connected,
    "agent.status_changed": _agent_status_changed,
    "agent.renamed": _agent_renamed,
    "agent.revoked": _agent_revoked,
    "conversation.created": _conversation_created,
    "message.created": _message_created,
    "task.created": _task_created,
    "task.child_created": _task_child_created,
    "task.accepted": _task_accepted,
    "task.status_changed": _task_status_changed,
    "task.cancel_requested": _task_cancel_requested,
    "interaction.requested": _interaction_requested,
    "interaction.resolved": _interaction_resolved,
    "interaction.expired": _interaction_expired,
    "interaction.cancelled": _interaction_cancelled,
    "artifact.created": _artifact_created,
    "tool.registered": _tool_registered,
    "tool.called": _tool_called,
    "tool.completed": _tool_completed,
    "tool.cancelled": _tool_cancelled,
}
"""Which event types change which projections; any other type is stored but not projected."""
