"""Appending to and replaying the per-workspace event log.

Append is the only way a sequence number is made: the workspace row's counter is bumped with
``UPDATE … RETURNING`` in the same transaction as the event and its projection, so the row
lock serialises appenders (also across hub nodes on PostgreSQL) and a rolled-back append
leaves no gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, insert, literal, select, tuple_, update
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from lineup.protocol.errors import Conflict, InvalidArgument, NotFound
from lineup.store import projections
from lineup.store.schema import events, workspaces

WORKSPACE_CREATED = "workspace.created"


@dataclass(frozen=True)
class NewEvent:
    """An event as the hub wants it appended; ``id`` is the sender's idempotency key."""

    id: str
    workspace_id: str
    type: str
    actor: str
    payload: dict[str, Any]
    occurred_at: int
    conversation_id: str | None = None
    task_id: str | None = None
    correlation_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class StoredEvent(NewEvent):
    """An event as committed: it has its place in the workspace's order and the hub's time."""

    sequence: int
    recorded_at: int


@dataclass(frozen=True)
class AppendResult:
    event: StoredEvent
    duplicate: bool


def event_from_row(row: Row[Any] | Mapping[str, Any]) -> StoredEvent:
    m = row._mapping if isinstance(row, Row) else row
    return StoredEvent(
        id=m["id"],
        workspace_id=m["workspace_id"],
        type=m["type"],
        actor=m["actor"],
        payload=m["payload"],
        occurred_at=m["occurred_at"],
        conversation_id=m["conversation_id"],
        task_id=m["task_id"],
        correlation_id=m["correlation_id"],
        sequence=m["sequence"],
        recorded_at=m["recorded_at"],
    )


async def find_event(conn: AsyncConnection, event_id: str) -> StoredEvent | None:
    row = (await conn.execute(select(events).where(events.c.id == event_id))).first()
    return None if row is None else event_from_row(row)


async def append(conn: AsyncConnection, event: NewEvent, *, now_ms: int) -> AppendResult:
    """Append ``event`` and apply its projection; the caller owns the enclosing transaction.

    The work runs in a savepoint so that losing a race for the same envelope id to another
    hub node (a unique violation) can be answered as the duplicate it is.
    """
    if not isinstance(event.payload, dict):
        raise InvalidArgument("event payload must be an object", details={"eventId": event.id})
    existing = await find_event(conn, event.id)
    if existing is not None:
        return _duplicate_of(existing, event)
    try:
        async with conn.begin_nested():
            stored = await _insert(conn, event, now_ms)
            await projections.apply_event(conn, stored)
    except IntegrityError as exc:
        existing = await find_event(conn, event.id)
        if existing is not None:
            return _duplicate_of(existing, event)
        raise Conflict(
            "the event conflicts with existing state", details={"eventId": event.id}
        ) from exc
    except DBAPIError as exc:
        if not _is_data_error(exc):
            raise
        raise InvalidArgument(
            "the event holds a value the database cannot store", details={"eventId": event.id}
        ) from exc
    return AppendResult(stored, duplicate=False)


def _is_data_error(exc: DBAPIError) -> bool:
    """A value the database rejects (SQLSTATE class 22), e.g. NUL, which JSONB cannot hold."""
    sqlstate = getattr(exc.orig, "sqlstate", None)
    return isinstance(exc, DataError) or (isinstance(sqlstate, str) and sqlstate[:2] == "22")


def _duplicate_of(existing: StoredEvent, event: NewEvent) -> AppendResult:
    if existing.workspace_id != event.workspace_id:
        # Say no more: the id's owner is another tenant.
        raise Conflict("event id already used", details={"eventId": event.id})
    return AppendResult(existing, duplicate=True)


async def _insert(conn: AsyncConnection, event: NewEvent, now_ms: int) -> StoredEvent:
    if event.type == WORKSPACE_CREATED:
        await _create_workspace_row(conn, event, now_ms)
    bump = (
        update(workspaces)
        .where(workspaces.c.id == event.workspace_id)
        .values(last_sequence=workspaces.c.last_sequence + 1)
        .returning(workspaces.c.last_sequence)
    )
    sequence = (await conn.execute(bump)).scalar_one_or_none()
    if sequence is None:
        raise NotFound("workspace not found", details={"workspaceId": event.workspace_id})
    stored = StoredEvent(
        id=event.id,
        workspace_id=event.workspace_id,
        type=event.type,
        actor=event.actor,
        payload=event.payload,
        occurred_at=event.occurred_at,
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        correlation_id=event.correlation_id,
        sequence=sequence,
        recorded_at=await _recorded_at(conn, event.workspace_id, sequence, now_ms),
    )
    await conn.execute(
        insert(events).values(
            workspace_id=stored.workspace_id,
            sequence=stored.sequence,
            id=stored.id,
            type=stored.type,
            actor=stored.actor,
            conversation_id=stored.conversation_id,
            task_id=stored.task_id,
            correlation_id=stored.correlation_id,
            occurred_at=stored.occurred_at,
            recorded_at=stored.recorded_at,
            payload=stored.payload,
        )
    )
    return stored


async def _recorded_at(conn: AsyncConnection, workspace_id: str, sequence: int, now_ms: int) -> int:
    """Never earlier than the previous event's, even if another node's clock is ahead.

    Replay orders the whole log by ``recorded_at``; this keeps that order consistent with
    each workspace's sequence.
    """
    if sequence <= 1:
        return now_ms
    previous = (
        await conn.execute(
            select(events.c.recorded_at).where(
                events.c.workspace_id == workspace_id, events.c.sequence == sequence - 1
            )
        )
    ).scalar_one_or_none()
    return now_ms if previous is None else max(now_ms, previous)


async def _create_workspace_row(conn: AsyncConnection, event: NewEvent, now_ms: int) -> None:
    exists = (
        await conn.execute(select(workspaces.c.id).where(workspaces.c.id == event.workspace_id))
    ).first()
    if exists is not None:
        raise Conflict("workspace already exists", details={"workspaceId": event.workspace_id})
    await conn.execute(
        insert(workspaces).values(
            id=event.workspace_id,
            name=str(event.payload.get("name", "")),
            last_sequence=0,
            created_at=now_ms,
        )
    )


REPLAY_PAGE = 500


async def replay_all(conn: AsyncConnection) -> int:
    """Empty the projections and re-apply every event; returns how many were replayed.

    The order is (recorded_at, workspace_id, sequence): per workspace that is the sequence
    (see ``_recorded_at``), and across workspaces it approximates commit order for the few
    rows that workspaces share (users).
    """
    await projections.clear(conn)
    order = (events.c.recorded_at, events.c.workspace_id, events.c.sequence)
    cursor: tuple[int, str, int] | None = None
    replayed = 0
    while True:
        stmt = select(events).order_by(*order).limit(REPLAY_PAGE)
        if cursor is not None:
            stmt = stmt.where(tuple_(*order) > tuple_(*(literal(v) for v in cursor)))
        page = [event_from_row(r) for r in (await conn.execute(stmt)).all()]
        for event in page:
            await projections.apply_event(conn, event)
        replayed += len(page)
        if len(page) < REPLAY_PAGE:
            return replayed
        last = page[-1]
        cursor = (last.recorded_at, last.workspace_id, last.sequence)
