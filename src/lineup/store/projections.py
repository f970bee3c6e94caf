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

from pydantic import BaseModel
from sqlalchemy import Insert, Table, Update, bindparam, delete, false, func, insert, select, update
from sqlalchemy.engine import Connection

from lineup.domain.tasks import TERMINAL_STATUSES
from lineup.protocol import facts as f
from lineup.protocol.builtin_tools import ASK_TOOLS
from lineup.protocol.errors import InvalidArgument
from lineup.protocol.events import TaskStatusName
from lineup.store import event_subjects, governance, session_files, statements, task_rows
from lineup.store import providers as provider_store
from lineup.store.handlers import Handler
from lineup.store.handlers import on as _on
from lineup.store.schema import (
    PROJECTION_TABLES,
    agents,
    approvals,
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
    from lineup.store.eventlog import NewEvent, StoredEvent


RUNNING = TaskStatusName.RUNNING.value
WAITING_FOR_HUMAN = TaskStatusName.WAITING_FOR_HUMAN.value
REQUESTED = "requested"
PENDING = "pending"


def apply_event(
    conn: Connection, event: StoredEvent, *, indexed: bool = False, projected: bool = False
) -> None:
    """Project one event and index it under its subjects (``event_subjects``), unless the
    append did either already (``projected``: its :func:`task_touch`; ``indexed``)."""
    handler = HANDLERS.get(event.type)
    if handler is None and event.type not in f.FACTS:
        return  # a newer hub's event: kept in the log, projected once this code knows it
    try:
        fact = event.fact if event.fact is not None else f.parse_fact(event.type, event.payload)
        if handler is not None and not projected:
            handler(conn, event, fact)
        if not indexed:
            event_subjects.index(conn, event, fact)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidArgument(
            f"{event.type} payload is malformed: {exc!r}",
            details={"eventId": event.id, "type": event.type},
        ) from exc


def clear(conn: Connection) -> None:
    task_rows.forget(conn)
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
_MS = timedelta(milliseconds=1)


TaskTouch = tuple[str, dict[str, Any]]
"""A task's id and the values an event sets on its row (besides ``updated_at`` and
``last_sequence``, which are the event's ``recorded_at`` and ``sequence``)."""


def task_touch(event: NewEvent, fact: f.Fact) -> TaskTouch | None:
    """The event's whole projection when that is one update of its task's row with values
    taken from the fact alone (a progress report, say), else ``None``.

    The append then makes that update in its own statement on PostgreSQL, and
    :func:`apply_event` is told so (``projected``) and does not make it again.
    """
    touch = _TASK_TOUCHES.get(event.type)
    return None if touch is None else touch(fact)


def _touch_task(conn: Connection, event: StoredEvent, task_id: str, **values: Any) -> None:
    values = {"updated_at": event.recorded_at, "last_sequence": event.sequence, **values}
    _update(conn, tasks, {"workspace_id": event.workspace_id, "id": task_id}, values)
    task_rows.touched(conn, event.workspace_id, task_id, values)


_TASK_STATUS = select(tasks.c.status).where(
    tasks.c.workspace_id == bindparam("workspace_id"), tasks.c.id == bindparam("id")
)


def _task_status(conn: Connection, event: StoredEvent, task_id: str) -> str | None:
    params = {"workspace_id": event.workspace_id, "id": task_id}
    status: str | None = statements.run(conn, _TASK_STATUS, params).scalar()
    return status


# --- workspace and members -----------------------------------------------------------------


def _workspace_created(
    conn: Connection, event: StoredEvent, fact: f.WorkspaceCreatedPayload
) -> None:
    # The row exists already (append made it to hold the counter); keep its last_sequence.
    _upsert(
        conn,
        workspaces,
        {"id": event.workspace_id},
        on_insert={"last_sequence": 0},
        always={"name": fact.name, "created_at": event.recorded_at},
    )


def _member_joined(conn: Connection, event: StoredEvent, fact: f.MemberJoinedPayload) -> None:
    _upsert(
        conn,
        users,
        {"id": fact.user_id},
        on_insert={"created_at": event.recorded_at},
        always={"email": fact.email, "display_name": fact.display_name or fact.email},
    )
    _upsert(
        conn,
        memberships,
        {"workspace_id": event.workspace_id, "user_id": fact.user_id},
        on_insert={"created_at": event.recorded_at},
        always={"role": fact.role or "member"},
    )


# --- agents --------------------------------------------------------------------------------


def _update_agent(conn: Connection, event: StoredEvent, agent_id: str, **values: Any) -> None:
    _update(
        conn,
        agents,
        {"workspace_id": event.workspace_id, "id": agent_id},
        {"updated_at": event.recorded_at, **values},
    )


def _agent_paired(conn: Connection, event: StoredEvent, fact: f.AgentPairedPayload) -> None:
    _upsert(
        conn,
        agents,
        {"id": fact.agent_id},
        on_insert={
            "workspace_id": event.workspace_id,
            "status": "never_connected",
            "capabilities": list(fact.capabilities or []),
            "tools": [],
            "created_at": event.recorded_at,
            "paired_sequence": event.sequence,
        },
        always={
            "name": fact.name,
            "runtime": fact.runtime,
            "agent_version": fact.agent_version,
            "updated_at": event.recorded_at,
            # older logs never asked: their agents were confirmed when they paired
            "confirmed_at": None if fact.awaiting_confirmation else event.recorded_at,
        },
    )


def _agent_connected(conn: Connection, event: StoredEvent, fact: f.AgentConnectedPayload) -> None:
    values: dict[str, Any] = {
        "status": "online",
        "last_heartbeat_at": event.occurred_at,
        "connected_at": event.occurred_at,
        "offline_at": None,
        "capabilities": list(fact.capabilities or []),
    }
    if fact.agent_version is not None:
        values["agent_version"] = fact.agent_version
    if fact.runtime is not None:
        values["runtime"] = fact.runtime
    if fact.tools is not None:
        values["tools"] = list(fact.tools)
    # each hello says the schema anew: an adapter that dropped its settings has none now
    values["settings_schema"] = fact.settings_schema
    _update_agent(conn, event, fact.agent_id, **values)


def _agent_status_changed(
    conn: Connection, event: StoredEvent, fact: f.AgentStatusChangedPayload
) -> None:
    values: dict[str, Any] = {"status": fact.status}
    if fact.status == "offline":
        # the hub records this event itself: it occurred when the hub found the agent gone
        values["offline_at"] = event.occurred_at
    if fact.last_heartbeat_at is not None:
        # null means "unknown now", not "never": keep the last one the UI can show.
        values["last_heartbeat_at"] = fact.last_heartbeat_at
    _update_agent(conn, event, fact.agent_id, **values)


def _agent_renamed(conn: Connection, event: StoredEvent, fact: f.AgentRenamedPayload) -> None:
    _update_agent(conn, event, fact.agent_id, name=fact.name)


def _agent_revoked(conn: Connection, event: StoredEvent, fact: f.AgentRevokedPayload) -> None:
    _update_agent(conn, event, fact.agent_id, status="revoked", revoked_at=event.recorded_at)


def _agent_confirmed(conn: Connection, event: StoredEvent, fact: f.AgentConfirmedPayload) -> None:
    _update_agent(conn, event, fact.agent_id, name=fact.name, confirmed_at=event.recorded_at)


def _agent_rejected(conn: Connection, event: StoredEvent, fact: f.AgentRejectedPayload) -> None:
    # never confirmed, so nothing refers to it: a person said it is not theirs
    statements.run(conn, _DELETE_AGENT, {"workspace_id": event.workspace_id, "id": fact.agent_id})


_DELETE_AGENT = delete(agents).where(
    agents.c.workspace_id == bindparam("workspace_id"), agents.c.id == bindparam("id")
)


def _agent_settings_changed(
    conn: Connection, event: StoredEvent, fact: f.AgentSettingsChangedPayload
) -> None:
    _update_agent(conn, event, fact.agent_id, settings=dict(fact.values))


# --- conversations and messages ------------------------------------------------------------


def _conversation_created(
    conn: Connection, event: StoredEvent, fact: f.ConversationCreatedPayload
) -> None:
    _insert(
        conn,
        conversations,
        id=fact.conversation_id or event.conversation_id,
        workspace_id=event.workspace_id,
        title=fact.title or "",
        agent_ids=list(fact.agent_ids or []),
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        last_sequence=event.sequence,
        project_id=fact.project_id,
        created_by=event.actor,
    )


def _conversation_agent_joined(
    conn: Connection, event: StoredEvent, fact: f.ConversationAgentJoinedPayload
) -> None:
    key = {"workspace_id": event.workspace_id, "id": fact.conversation_id}
    row = conn.execute(
        select(conversations.c.agent_ids).where(
            conversations.c.workspace_id == event.workspace_id,
            conversations.c.id == fact.conversation_id,
        )
    ).first()
    if row is None:
        raise ValueError("an agent joins a conversation that exists")
    agent_ids = list(row.agent_ids or [])
    if fact.agent_id not in agent_ids:
        agent_ids.append(fact.agent_id)
    _update(
        conn,
        conversations,
        key,
        {"agent_ids": agent_ids, "updated_at": event.recorded_at, "last_sequence": event.sequence},
    )


def _message_created(conn: Connection, event: StoredEvent, fact: f.MessageCreatedPayload) -> None:
    conversation_id = event.conversation_id or fact.conversation_id
    if conversation_id is None:
        raise ValueError("a message needs a conversation")
    _insert(
        conn,
        messages,
        id=fact.message_id,
        workspace_id=event.workspace_id,
        conversation_id=conversation_id,
        author_kind=fact.author.kind,
        author_id=fact.author.id,
        author_name=fact.author.name,
        content=fact.content or "",
        blocks=None if fact.blocks is None else [b.wire() for b in fact.blocks],
        attachments=None if fact.attachments is None else [a.wire() for a in fact.attachments],
        target_agent_id=fact.target_agent_id,
        task_id=fact.task_id or event.task_id,
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
        "cancel_deadline": None,
        "end_cause": None,
        "created_by": event.actor,
        "created_at": event.recorded_at,
        "updated_at": event.recorded_at,
        "last_sequence": event.sequence,
        **values,
    }


def _task_created(conn: Connection, event: StoredEvent, fact: f.TaskCreatedPayload) -> None:
    row = _new_task(
        event,
        id=fact.task_id or event.task_id,
        parent_task_id=fact.parent_task_id,
        title=fact.title,
        description=fact.description,
        target_agent_id=fact.target_agent_id,
        status="queued",
        created_by=fact.created_by or event.actor,
    )
    _insert(conn, tasks, **row)


def _task_child_created(
    conn: Connection, event: StoredEvent, fact: f.TaskChildCreatedPayload
) -> None:
    parent = conn.execute(
        select(tasks.c.conversation_id, tasks.c.target_agent_id).where(
            tasks.c.workspace_id == event.workspace_id, tasks.c.id == fact.parent_task_id
        )
    ).first()
    row = _new_task(
        event,
        id=fact.child_task_id,
        parent_task_id=fact.parent_task_id,
        title=fact.title,
        description=fact.description,
        status=fact.status or "queued",
        target_agent_id=fact.target_agent_id or (parent.target_agent_id if parent else None),
        conversation_id=event.conversation_id or (parent.conversation_id if parent else None),
    )
    _insert(conn, tasks, **row)


def _accepted_touch(fact: f.TaskAcceptedPayload) -> TaskTouch:
    return fact.task_id, {"status": RUNNING}


def _task_accepted(conn: Connection, event: StoredEvent, fact: f.TaskAcceptedPayload) -> None:
    task_id, values = _accepted_touch(fact)
    _touch_task(conn, event, task_id, **values)


def _status_changed_touch(fact: f.TaskStatusChangedPayload) -> TaskTouch:
    values: dict[str, Any] = {"status": fact.status}
    if fact.progress is not None:
        values["progress"] = fact.progress
    if fact.summary is not None:
        values["summary"] = fact.summary
    if fact.error is not None:
        values["error"] = fact.error
    if fact.status in TERMINAL_STATUSES:
        values["cancel_deadline"] = None  # nothing is left to wait for
        values["end_cause"] = fact.cause
    return fact.task_id, values


def _task_status_changed(
    conn: Connection, event: StoredEvent, fact: f.TaskStatusChangedPayload
) -> None:
    task_id, values = _status_changed_touch(fact)
    _touch_task(conn, event, task_id, **values)


def _cancel_requested_touch(fact: f.TaskCancelRequestedPayload) -> TaskTouch:
    return fact.task_id, {
        "cancel_requested": True,
        "cancel_reason": fact.reason,
        "cancel_deadline": fact.cancel_deadline,
    }


def _task_cancel_requested(
    conn: Connection, event: StoredEvent, fact: f.TaskCancelRequestedPayload
) -> None:
    task_id, values = _cancel_requested_touch(fact)
    _touch_task(conn, event, task_id, **values)


# --- interactions --------------------------------------------------------------------------


def _extra(model: BaseModel, key: str) -> Any:
    """A field an older agent put on a model that does not declare it."""
    return (model.model_extra or {}).get(key)


def _interaction_requested(
    conn: Connection, event: StoredEvent, fact: f.InteractionRequestedPayload
) -> None:
    request = fact.interaction
    task_id = event.task_id or _extra(request, "taskId")
    expires_at = request.expires_at
    _insert(
        conn,
        interactions,
        id=request.id,
        workspace_id=event.workspace_id,
        task_id=task_id,
        conversation_id=event.conversation_id or _extra(request, "conversationId"),
        agent_id=_agent_id_of(event.actor),
        kind=request.type.value,
        status=REQUESTED,
        request=event.payload["interaction"],  # the card as the agent sent it, kept whole
        response=None,
        expires_at=None if expires_at is None else (expires_at - _EPOCH) // _MS,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )
    if task_id and _task_status(conn, event, task_id) == RUNNING:
        _touch_task(conn, event, task_id, status=WAITING_FOR_HUMAN)


def _close_interaction(
    conn: Connection, event: StoredEvent, interaction_id: str, **values: Any
) -> None:
    """Close one request; a task blocked only on requests goes back to running when none remain."""
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
    cards = conn.execute(
        select(func.count())
        .select_from(approvals)
        .where(
            approvals.c.workspace_id == ws,
            approvals.c.task_id == task_id,
            approvals.c.status == PENDING,
        )
    ).scalar_one()
    if requests == 0 and questions == 0 and cards == 0:
        _touch_task(conn, event, task_id, status=RUNNING)


def _interaction_resolved(
    conn: Connection, event: StoredEvent, fact: f.InteractionResolvedPayload
) -> None:
    _close_interaction(
        conn,
        event,
        fact.interaction_id,
        status="resolved",
        response=fact.response.wire(),
        responded_by=fact.responded_by,
        responded_by_name=fact.responded_by_name,
        responded_at=fact.responded_at,
    )


def _interaction_expired(
    conn: Connection, event: StoredEvent, fact: f.InteractionExpiredPayload
) -> None:
    _close_interaction(conn, event, fact.interaction_id, status="expired")


def _interaction_cancelled(
    conn: Connection, event: StoredEvent, fact: f.InteractionCancelledPayload
) -> None:
    _close_interaction(
        conn, event, fact.interaction_id, status="cancelled", cancel_reason=fact.reason
    )


def _tool_registered(conn: Connection, event: StoredEvent, fact: f.ToolRegisteredPayload) -> None:
    _upsert(
        conn,
        tool_devices,
        {"workspace_id": event.workspace_id, "device_id": fact.device_id},
        on_insert={"created_at": event.recorded_at},
        always={
            "user_id": fact.user_id,
            "name": fact.name,
            "tools": list(fact.tools or []),
            "updated_at": event.recorded_at,
            "last_sequence": event.sequence,
        },
    )


def _tool_called(conn: Connection, event: StoredEvent, fact: f.ToolCalledPayload) -> None:
    _insert(
        conn,
        tool_calls,
        id=fact.tool_call_id,
        workspace_id=event.workspace_id,
        agent_id=fact.agent_id,
        call_id=fact.call_id,
        name=fact.name,
        action=fact.action,
        arguments=dict(fact.arguments or {}),
        status="pending",
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        instance_id=fact.instance_id,
        result=None,
        error=None,
        timeout_ms=fact.timeout_ms,
        expires_at=fact.expires_at,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )
    # A question for the person (choice, confirm, input) blocks its task as a request does.
    task_id = event.task_id
    if task_id and fact.name in ASK_TOOLS and _task_status(conn, event, task_id) == RUNNING:
        _touch_task(conn, event, task_id, status=WAITING_FOR_HUMAN)


_GET_TOOL_CALL = select(tool_calls).where(
    tool_calls.c.workspace_id == bindparam("workspace_id"), tool_calls.c.id == bindparam("id")
)


def _tool_completed(conn: Connection, event: StoredEvent, fact: f.ToolCompletedPayload) -> None:
    key = {"workspace_id": event.workspace_id, "id": fact.tool_call_id}
    status = "failed" if fact.error is not None else "completed"
    if fact.expired:
        status = "expired"
    _update(
        conn,
        tool_calls,
        key,
        {
            "status": status,
            "result": fact.result,
            "error": fact.error,
            "answered_by": fact.answered_by or event.actor,
            "answered_by_name": fact.answered_by_name,
            "answered_at": event.recorded_at if fact.answered_at is None else fact.answered_at,
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


def _tool_cancelled(conn: Connection, event: StoredEvent, fact: f.ToolCancelledPayload) -> None:
    key = {"workspace_id": event.workspace_id, "id": fact.tool_call_id}
    _update(
        conn,
        tool_calls,
        key,
        {"status": "cancelled", "cancel_reason": fact.reason, "updated_at": event.recorded_at},
    )
    _question_closed(conn, event, conn.execute(_GET_TOOL_CALL, key).first())


# --- artifacts -----------------------------------------------------------------------------


def _artifact_created(conn: Connection, event: StoredEvent, fact: f.ArtifactCreatedPayload) -> None:
    _insert(
        conn,
        artifacts,
        id=fact.artifact_id,
        workspace_id=event.workspace_id,
        task_id=fact.task_id or event.task_id,
        conversation_id=event.conversation_id,
        name=fact.name,
        url=fact.url,
        mime_type=fact.mime_type,
        summary=fact.summary,
        created_by=event.actor,
        created_at=event.recorded_at,
    )


# --- approvals: a task waits for a person while one of its confirm cards is open -----------


def _approval_requested(
    conn: Connection, event: StoredEvent, fact: f.ApprovalRequestedPayload
) -> None:
    governance.HANDLERS[fact.fact_type](conn, event, fact)
    if event.task_id and _task_status(conn, event, event.task_id) == RUNNING:
        _touch_task(conn, event, event.task_id, status=WAITING_FOR_HUMAN)


def _approval_decided(conn: Connection, event: StoredEvent, fact: f.ApprovalDecidedPayload) -> None:
    governance.HANDLERS[fact.fact_type](conn, event, fact)
    if event.task_id:
        _resume_if_nothing_waits(conn, event, event.task_id)


HANDLERS: Mapping[str, Handler] = dict(
    [
        _on(f.WorkspaceCreatedPayload, _workspace_created),
        _on(f.MemberJoinedPayload, _member_joined),
        _on(f.AgentPairedPayload, _agent_paired),
        _on(f.AgentConnectedPayload, _agent_connected),
        _on(f.AgentStatusChangedPayload, _agent_status_changed),
        _on(f.AgentRenamedPayload, _agent_renamed),
        _on(f.AgentRevokedPayload, _agent_revoked),
        _on(f.AgentConfirmedPayload, _agent_confirmed),
        _on(f.AgentRejectedPayload, _agent_rejected),
        _on(f.AgentSettingsChangedPayload, _agent_settings_changed),
        _on(f.ConversationCreatedPayload, _conversation_created),
        _on(f.ConversationAgentJoinedPayload, _conversation_agent_joined),
        _on(f.MessageCreatedPayload, _message_created),
        _on(f.TaskCreatedPayload, _task_created),
        _on(f.TaskChildCreatedPayload, _task_child_created),
        _on(f.TaskAcceptedPayload, _task_accepted),
        _on(f.TaskStatusChangedPayload, _task_status_changed),
        _on(f.TaskCancelRequestedPayload, _task_cancel_requested),
        _on(f.InteractionRequestedPayload, _interaction_requested),
        _on(f.InteractionResolvedPayload, _interaction_resolved),
        _on(f.InteractionExpiredPayload, _interaction_expired),
        _on(f.InteractionCancelledPayload, _interaction_cancelled),
        _on(f.ArtifactCreatedPayload, _artifact_created),
        _on(f.ToolRegisteredPayload, _tool_registered),
        _on(f.ToolCalledPayload, _tool_called),
        _on(f.ToolCompletedPayload, _tool_completed),
        _on(f.ToolCancelledPayload, _tool_cancelled),
        *governance.HANDLERS.items(),
        *provider_store.HANDLERS.items(),
        *session_files.HANDLERS.items(),
        _on(f.ApprovalRequestedPayload, _approval_requested),
        _on(f.ApprovalDecidedPayload, _approval_decided),
    ]
)
"""Which facts change which projections; a type not here is stored but not projected."""

_TASK_TOUCHES: Mapping[str, Callable[[Any], TaskTouch]] = {
    f.TaskAcceptedPayload.fact_type: _accepted_touch,
    f.TaskStatusChangedPayload.fact_type: _status_changed_touch,
    f.TaskCancelRequestedPayload.fact_type: _cancel_requested_touch,
}
"""The facts whose handler is exactly :func:`_touch_task` with these values (see
:func:`task_touch`)."""

NOT_PROJECTED: frozenset[str] = frozenset(
    {
        "binding.bound",
        "binding.expired",
        "binding.removed",
        "activity.started",
        "activity.output",
        "activity.finished",
        "activity.usage",
    }
)
"""Facts recorded for the log's readers only: no table follows them (a binding's row holds a
secret the log never sees, so it is written beside its fact, not from it; a transcript entry
is read back from the log itself, by its task or conversation, and touching the task's row
for every chunk of output would only add writes). Every fact of
``lineup.protocol.facts.FACTS`` is either here or in :data:`HANDLERS` (a test checks)."""
