"""Compacting a workspace's event log behind its horizon (see :mod:`lineup.domain.retention`).

The projections are the snapshot: compaction deletes events, never rows of the tables the
views read, so a client behind the horizon rebuilds the current state from those views. What
the horizon leaves behind is deleted unless a **keep rule** holds it, because something still
reads it back from the log:

* every event of an unfinished task (and of its children): the task's timeline, the agent's
  replay of its open work, resends of the task's reports recognised by their ids;
* the request of each pending interaction and tool call: a resent request is answered with it;
* people's messages to an agent after the cursor that agent last reported (``agent_cursors``):
  the agent may not have them yet;
* the outcomes of interactions and tool calls asked outside any task (a message handler's),
  after the oldest cursor of the workspace's agents: a waiting handler may not have them yet.

The audit chain is its own table (``audit_entries``) and is not touched. The horizon itself
moves in the same transaction as each chunk's deletion, so a reader that sees the horizon it
read sees every event at or after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, delete, func, insert, literal, or_, select, update
from sqlalchemy.engine import Connection

from lineup.protocol.events import TaskStatusName
from lineup.store import event_subjects
from lineup.store.schema import (
    agent_cursors,
    agents,
    events,
    interactions,
    log_horizons,
    messages,
    notification_cursors,
    tasks,
    tool_calls,
    workspaces,
)

CHUNK = 5000
"""Sequences per compaction transaction: a large backlog never holds the writer long."""

_TERMINAL = (
    TaskStatusName.SUCCEEDED.value,
    TaskStatusName.FAILED.value,
    TaskStatusName.CANCELLED.value,
)
_OUTCOMES = (
    "interaction.resolved",
    "interaction.expired",
    "interaction.cancelled",
    "tool.completed",
    "tool.cancelled",
)


@dataclass(frozen=True, slots=True)
class LogShape:
    """What the horizon rule needs to know of one workspace's log."""

    workspace_id: str
    last_sequence: int
    horizon: int
    first_recent: int | None
    notification_pin: int | None


def horizon_of(conn: Connection, workspace_id: str) -> int:
    """The earliest sequence from which the workspace's log is whole (1: never compacted)."""
    stmt = select(log_horizons.c.horizon).where(log_horizons.c.workspace_id == workspace_id)
    value: int | None = conn.execute(stmt).scalar_one_or_none()
    return value or 1


def workspace_ids(conn: Connection) -> list[str]:
    return list(conn.execute(select(workspaces.c.id).order_by(workspaces.c.id)).scalars())


def shape_of(
    conn: Connection, workspace_id: str, cutoff_ms: int | None, *, notifications: bool
) -> LogShape:
    """The log's latest sequence, its horizon, the first event recorded at or after
    ``cutoff_ms`` and, when the notification worker runs, the first event it has not read."""
    last = conn.execute(
        select(workspaces.c.last_sequence).where(workspaces.c.id == workspace_id)
    ).scalar_one_or_none()
    horizon = horizon_of(conn, workspace_id)
    first_recent = None
    if cutoff_ms is not None:
        first_recent = conn.execute(
            select(func.min(events.c.sequence)).where(
                events.c.workspace_id == workspace_id,
                events.c.sequence >= horizon,
                events.c.recorded_at >= cutoff_ms,
            )
        ).scalar_one_or_none()
    pin = None
    if notifications:
        read = conn.execute(
            select(notification_cursors.c.last_sequence).where(
                notification_cursors.c.workspace_id == workspace_id
            )
        ).scalar_one_or_none()
        pin = (read or 0) + 1
    return LogShape(workspace_id, last or 0, horizon, first_recent, pin)


def _kept(workspace_id: str) -> ColumnElement[bool]:
    """The keep rules (see the module docstring) as one condition on ``events`` rows."""
    open_tasks = select(tasks.c.id).where(
        tasks.c.workspace_id == workspace_id, tasks.c.status.not_in(_TERMINAL)
    )
    their_children = select(tasks.c.id).where(
        tasks.c.workspace_id == workspace_id, tasks.c.parent_task_id.in_(open_tasks)
    )
    pending_requests = (
        select(interactions.c.sequence)
        .where(interactions.c.workspace_id == workspace_id, interactions.c.status == "requested")
        .union_all(
            select(tool_calls.c.sequence).where(
                tool_calls.c.workspace_id == workspace_id, tool_calls.c.status == "pending"
            )
        )
    )
    reachable = and_(agents.c.workspace_id == workspace_id, agents.c.revoked_at.is_(None))
    cursor = func.coalesce(agent_cursors.c.last_sequence, literal(0))
    unread_messages = (
        select(messages.c.sequence)
        .select_from(
            messages.join(agents, agents.c.id == messages.c.target_agent_id).outerjoin(
                agent_cursors, agent_cursors.c.agent_id == agents.c.id
            )
        )
        .where(
            messages.c.workspace_id == workspace_id,
            messages.c.author_kind == "user",
            reachable,
            messages.c.sequence > cursor,
        )
    )
    oldest_cursor = (
        select(func.min(cursor))
        .select_from(agents.outerjoin(agent_cursors, agent_cursors.c.agent_id == agents.c.id))
        .where(reachable)
        .scalar_subquery()
    )
    return or_(
        and_(
            events.c.task_id.is_not(None),
            or_(events.c.task_id.in_(open_tasks), events.c.task_id.in_(their_children)),
        ),
        events.c.sequence.in_(pending_requests),
        events.c.sequence.in_(unread_messages),
        and_(
            events.c.task_id.is_(None),
            events.c.type.in_(_OUTCOMES),
            oldest_cursor.is_not(None),
            events.c.sequence > oldest_cursor,
        ),
    )


def _range(workspace_id: str, start: int, end: int) -> ColumnElement[bool]:
    return and_(
        events.c.workspace_id == workspace_id,
        events.c.sequence >= start,
        events.c.sequence < end,
    )


def first_stored(conn: Connection, workspace_id: str, before: int, *, since: int = 1) -> int | None:
    """The oldest event stored in ``[since, before)`` (a kept one, or one not compacted
    yet)."""
    stmt = select(func.min(events.c.sequence)).where(
        events.c.workspace_id == workspace_id,
        events.c.sequence >= since,
        events.c.sequence < before,
    )
    value: int | None = conn.execute(stmt).scalar_one_or_none()
    return value


def count_deletable(conn: Connection, workspace_id: str, start: int, end: int) -> tuple[int, int]:
    """(events a compaction of ``[start, end)`` would delete, events it would keep)."""
    in_range = _range(workspace_id, start, end)
    total = conn.execute(select(func.count()).where(in_range)).scalar_one()
    kept = conn.execute(select(func.count()).where(in_range, _kept(workspace_id))).scalar_one()
    return int(total) - int(kept), int(kept)


def compact_range(conn: Connection, workspace_id: str, start: int, end: int, now_ms: int) -> int:
    """Delete the events of ``[start, end)`` no keep rule holds and move the horizon to
    ``end`` (never back), in the caller's transaction, with their rows of the subject index;
    the number deleted."""
    deleted = conn.execute(
        delete(events).where(_range(workspace_id, start, end), ~_kept(workspace_id))
    ).rowcount
    deleted = max(deleted or 0, 0)
    event_subjects.forget_deleted(conn, workspace_id, start, end)
    stmt = select(log_horizons.c.horizon, log_horizons.c.compacted_events).where(
        log_horizons.c.workspace_id == workspace_id
    )
    row = conn.execute(stmt).first()
    if row is None:
        conn.execute(
            insert(log_horizons).values(
                workspace_id=workspace_id,
                horizon=end,
                compacted_events=deleted,
                compacted_at=now_ms,
            )
        )
    else:
        conn.execute(
            update(log_horizons)
            .where(log_horizons.c.workspace_id == workspace_id)
            .values(
                horizon=max(row.horizon, end),
                compacted_events=row.compacted_events + deleted,
                compacted_at=now_ms,
            )
        )
    return deleted


def any_compacted(conn: Connection) -> str | None:
    """A workspace whose log was compacted, if there is one."""
    stmt = select(log_horizons.c.workspace_id).where(log_horizons.c.horizon > 1).limit(1)
    value: str | None = conn.execute(stmt).scalar_one_or_none()
    return value


def record_cursor(
    conn: Connection, workspace_id: str, agent_id: str, last_sequence: int, now_ms: int
) -> None:
    """The ``lastSequence`` an agent said in its hello: what it surely has."""
    values = {"workspace_id": workspace_id, "last_sequence": last_sequence, "updated_at": now_ms}
    changed = conn.execute(
        update(agent_cursors).where(agent_cursors.c.agent_id == agent_id).values(**values)
    ).rowcount
    if not changed:
        conn.execute(insert(agent_cursors).values(agent_id=agent_id, **values))


__all__ = [
    "CHUNK",
    "LogShape",
    "any_compacted",
    "compact_range",
    "count_deletable",
    "first_stored",
    "horizon_of",
    "record_cursor",
    "shape_of",
    "workspace_ids",
]
