"""Appending to and replaying the per-workspace event log.

Append is the only way a sequence number is made: the workspace row's counter (and the time of
its latest event) is bumped with ``UPDATE … RETURNING`` in the same transaction as the event
and its projection, so the row lock serialises appenders (also across hub nodes on
PostgreSQL) and a rolled-back append leaves no gap.

On PostgreSQL the bump, the event row and its subject index rows are one statement (data-
modifying CTEs): one round trip where SQLite, in-process, takes three cheap calls. The
projection's statements follow — or, for an event whose projection is one update of its
task's row (a progress report), join the same statement.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BigInteger,
    Row,
    bindparam,
    case,
    insert,
    literal,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from sqlalchemy.sql.selectable import TextualSelect

from lineup.protocol.errors import Conflict, InvalidArgument, NotFound
from lineup.protocol.facts import FACTS, Fact, parse_fact
from lineup.store import (
    append_buffer,
    event_subjects,
    projections,
    retention,
    statements,
    task_rows,
)
from lineup.store.schema import events, tasks, workspaces

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
    fact: Fact | None = field(default=None, compare=False, repr=False)
    """The payload as its model, when the appender has it: projections then read that and
    the stored JSON is not parsed again."""


@dataclass(frozen=True, kw_only=True)
class StoredEvent(NewEvent):
    """An event as committed: it has its place in the workspace's order and the hub's time."""

    sequence: int
    recorded_at: int
    frame: str | None = field(default=None, compare=False, repr=False)
    """The text of its frame to people's apps, once made (``hub.client_gateway.encode_event``):
    every app following the workspace on a node writes this same string."""


def fact_of(event: StoredEvent) -> Fact:
    """The event's payload as its fact model, parsed from the stored JSON at most once per
    event object (the appender's model when it came with one). ``KeyError`` for a type that
    is no recorded fact; ``ValueError`` for a payload that does not fit its model."""
    fact = event.fact
    if fact is None:
        fact = parse_fact(event.type, event.payload)
        object.__setattr__(event, "fact", fact)  # a cache: the event itself stays as it was
    return fact


@dataclass(frozen=True)
class AppendResult:
    event: StoredEvent
    duplicate: bool


@dataclass(frozen=True, slots=True)
class Sent:
    """An event found by its sender's id, with the digest of what the sender sent then."""

    event: StoredEvent
    fingerprint: str | None


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


# Built once: the append path runs these for every event.
_FIND_EVENT = select(events).where(
    events.c.workspace_id == bindparam("workspace_id"),
    events.c.actor == bindparam("sender"),
    events.c.id == bindparam("event_id"),
)
_NOW = bindparam("now_ms", type_=BigInteger())
_BUMP = (
    update(workspaces)
    .where(workspaces.c.id == bindparam("workspace_id"))
    .values(
        last_sequence=workspaces.c.last_sequence + 1,
        # Never earlier than the previous event's, even if another node's clock is behind:
        # replay orders the whole log by recorded_at, and this keeps that order consistent
        # with each workspace's sequence. (CASE, not GREATEST/max: one spelling for both.)
        last_recorded_at=case(
            (workspaces.c.last_recorded_at > _NOW, workspaces.c.last_recorded_at), else_=_NOW
        ),
    )
    .returning(workspaces.c.last_sequence, workspaces.c.last_recorded_at)
)
_INSERT_EVENT = insert(events)
_APPEND_PG = """
WITH bumped AS (
    UPDATE workspaces
    SET last_sequence = last_sequence + 1,
        last_recorded_at = CASE WHEN last_recorded_at > CAST(:now_ms AS BIGINT)
                                THEN last_recorded_at ELSE CAST(:now_ms AS BIGINT) END
    WHERE id = CAST(:workspace_id AS VARCHAR)
    RETURNING last_sequence, last_recorded_at
), appended AS (
    INSERT INTO events (workspace_id, sequence, id, type, actor, conversation_id, task_id,
                        correlation_id, occurred_at, recorded_at, payload, fingerprint)
    SELECT CAST(:workspace_id AS VARCHAR), last_sequence, CAST(:id AS VARCHAR),
           CAST(:type AS VARCHAR), CAST(:actor AS VARCHAR), CAST(:conversation_id AS VARCHAR),
           CAST(:task_id AS VARCHAR), CAST(:correlation_id AS VARCHAR),
           CAST(:occurred_at AS BIGINT), last_recorded_at, CAST(:payload AS JSONB),
           CAST(:fingerprint AS VARCHAR)
    FROM bumped
    RETURNING sequence, recorded_at
), indexed AS (
    INSERT INTO event_subjects (workspace_id, subject_kind, subject_id, sequence)
    SELECT CAST(:workspace_id AS VARCHAR), s.kind, s.ident, appended.sequence
    FROM appended,
         unnest(CAST(:kinds AS VARCHAR[]), CAST(:idents AS VARCHAR[])) AS s(kind, ident)
){touched}
SELECT sequence AS last_sequence, recorded_at AS last_recorded_at FROM appended
"""
_TOUCH_PG = """, touched AS (
    UPDATE tasks
    SET {values}updated_at = appended.recorded_at, last_sequence = appended.sequence
    FROM appended
    WHERE tasks.id = CAST(:touch_task_id AS VARCHAR)
      AND tasks.workspace_id = CAST(:workspace_id AS VARCHAR)
)"""


@functools.cache
def _append_pg(touched: tuple[str, ...] | None) -> TextualSelect:
    """The bump, the event and its subjects in one statement — and, when the event's whole
    projection is a touch of its task (``projections.task_touch``), that update too, setting
    the ``touched`` columns. The workspace row is locked first (``bumped``), and the other
    parts see its new counter."""
    binds = [bindparam("payload", type_=events.c.payload.type)]
    sql = _APPEND_PG.format(touched="")
    if touched is not None:
        dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
        values = "".join(
            f"{name} = CAST(:set_{name} AS {tasks.c[name].type.compile(dialect=dialect)}), "
            for name in touched
        )
        sql = _APPEND_PG.format(touched=_TOUCH_PG.format(values=values))
        binds.extend(bindparam(f"set_{name}", type_=tasks.c[name].type) for name in touched)
    return (
        text(sql)
        .bindparams(*binds)
        .columns(last_sequence=BigInteger(), last_recorded_at=BigInteger())
    )


_WORKSPACE_EXISTS = select(workspaces.c.id).where(workspaces.c.id == bindparam("workspace_id"))


def find_event(conn: Connection, workspace_id: str, sender: str, event_id: str) -> Sent | None:
    """The event ``sender`` (an actor) recorded under ``event_id`` in the workspace."""
    params = {"workspace_id": workspace_id, "sender": sender, "event_id": event_id}
    row = statements.run(conn, _FIND_EVENT, params).first()
    return None if row is None else Sent(event_from_row(row), row["fingerprint"])


def append(
    conn: Connection,
    event: NewEvent,
    *,
    now_ms: int,
    check_duplicate: bool = True,
    fingerprint: str | None = None,
) -> AppendResult:
    """Append ``event`` and apply its projection; the caller owns the enclosing transaction.

    The id is the sender's (``event.actor``) idempotency key in its workspace: one it already
    used there returns that event as a duplicate — when it is the same event (the same type,
    and the same ``fingerprint`` of what was sent, where both have one); else it is a
    ``Conflict``. Other senders' and other workspaces' ids never meet it.
    With ``check_duplicate=False`` there is no SELECT by id first: the unique (workspace,
    sender, id) is the check, and a resent id fails the INSERT (``Conflict``). The writer
    appends so in its optimistic pass and, should anything fail, re-runs the batch with the
    check — which then answers the resend as the duplicate it is, as it does a lost race.

    No savepoint here: if this raises after it wrote, the caller must roll back (the writer
    does, and re-runs the job in a savepoint).
    """
    if not isinstance(event.payload, dict):
        raise InvalidArgument("event payload must be an object", details={"eventId": event.id})
    if check_duplicate:
        existing = find_event(conn, event.workspace_id, event.actor, event.id)
        if existing is not None:
            return _duplicate_of(existing, event, fingerprint)
    try:
        stored, indexed, projected = _insert(conn, event, now_ms, fingerprint)
        projections.apply_event(conn, stored, indexed=indexed, projected=projected)
    except IntegrityError as exc:
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


def _duplicate_of(existing: Sent, event: NewEvent, fingerprint: str | None) -> AppendResult:
    if existing.event.type != event.type or not same_content(existing.fingerprint, fingerprint):
        raise reused_id(event.id)
    return AppendResult(existing.event, duplicate=True)


def same_content(recorded: str | None, sent: str | None) -> bool:
    """Whether a resend matches what was recorded under its id (unknown on either side: yes)."""
    return recorded is None or sent is None or recorded == sent


def reused_id(event_id: str) -> Conflict:
    return Conflict(
        f"Event id {event_id!r} was already used for a different event; "
        "give every new event a new id (resend only what was not acknowledged).",
        details={"eventId": event_id, "reason": "id_reused"},
    )


def _insert(
    conn: Connection, event: NewEvent, now_ms: int, fingerprint: str | None
) -> tuple[StoredEvent, bool, bool]:
    """The stored event, whether its subjects were indexed with it, and whether its
    projection was made with it."""
    if event.type == WORKSPACE_CREATED:
        _create_workspace_row(conn, event, now_ms)
    fact = event.fact
    row = {
        "workspace_id": event.workspace_id,
        "id": event.id,
        "type": event.type,
        "actor": event.actor,
        "conversation_id": event.conversation_id,
        "task_id": event.task_id,
        "correlation_id": event.correlation_id,
        "occurred_at": event.occurred_at,
        "payload": event.payload,
        "fingerprint": fingerprint,
    }
    subjects = _subjects(event) if conn.dialect.name == "postgresql" else None
    touch: projections.TaskTouch | None = None
    held = append_buffer.held(conn)
    if held is not None and (subjects is None or event.type == WORKSPACE_CREATED):
        held.forget(conn, event.workspace_id)  # its counter moves by a statement of its own
        held = None
    if subjects is not None and held is not None:
        fact, named = subjects
        touch = None if fact is None else projections.task_touch(event, fact)
        try:
            sequence, recorded_at = held.next_sequence(conn, event.workspace_id, now_ms)
        except KeyError:
            raise NotFound(
                "workspace not found", details={"workspaceId": event.workspace_id}
            ) from None
        held.hold({**row, "sequence": sequence, "recorded_at": recorded_at}, named, touch)
        bumped: dict[str, Any] | None = {
            "last_sequence": sequence,
            "last_recorded_at": recorded_at,
        }
    elif subjects is not None:
        fact, named = subjects
        params = {
            **row,
            "now_ms": now_ms,
            "kinds": [kind for kind, _ in named],
            "idents": [ident for _, ident in named],
        }
        touch = None if fact is None else projections.task_touch(event, fact)
        if touch is not None:
            task_id, values = touch
            params["touch_task_id"] = task_id
            params.update((f"set_{name}", value) for name, value in values.items())
        statement = _append_pg(None if touch is None else tuple(touch[1]))
        bumped = statements.run(conn, statement, params).first()
    else:
        bumped = statements.run(
            conn, _BUMP, {"workspace_id": event.workspace_id, "now_ms": now_ms}
        ).first()
    if bumped is None:
        raise NotFound("workspace not found", details={"workspaceId": event.workspace_id})
    sequence, recorded_at = bumped["last_sequence"], bumped["last_recorded_at"]
    if touch is not None:
        task_id, values = touch
        values = {"updated_at": recorded_at, "last_sequence": sequence, **values}
        task_rows.touched(conn, event.workspace_id, task_id, values)
    if subjects is None:
        statements.run(
            conn, _INSERT_EVENT, {**row, "sequence": sequence, "recorded_at": recorded_at}
        )
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
        fact=fact,
        sequence=sequence,
        recorded_at=recorded_at,
    )
    return stored, subjects is not None, touch is not None


def _subjects(event: NewEvent) -> tuple[Fact | None, list[tuple[str, str]]] | None:
    """The event's fact and subjects, to index them in the append's statement; ``None`` when
    the payload does not parse (the projection then reports it, as for any append)."""
    if event.type not in FACTS:
        return None, []  # a newer hub's event: not projected, not indexed
    try:
        fact = event.fact if event.fact is not None else parse_fact(event.type, event.payload)
        return fact, event_subjects.subjects(event, fact)
    except (KeyError, TypeError, ValueError):
        return None


def _create_workspace_row(conn: Connection, event: NewEvent, now_ms: int) -> None:
    exists = conn.execute(_WORKSPACE_EXISTS, {"workspace_id": event.workspace_id}).first()
    if exists is not None:
        raise Conflict("workspace already exists", details={"workspaceId": event.workspace_id})
    conn.execute(
        insert(workspaces).values(
            id=event.workspace_id,
            name=str(event.payload.get("name", "")),
            last_sequence=0,
            last_recorded_at=0,
            created_at=now_ms,
        )
    )


REPLAY_PAGE = 500


def replay_all(conn: Connection) -> int:
    """Empty the projections and re-apply every event; returns how many were replayed.

    The order is (recorded_at, workspace_id, sequence): per workspace that is the sequence
    (see ``_BUMP``), and across workspaces it approximates commit order for the few
    rows that workspaces share (users).

    Refused once any workspace's log was compacted: a replay would then rebuild only what
    is left, and the projections hold what the deleted events made.
    """
    compacted = retention.any_compacted(conn)
    if compacted is not None:
        raise Conflict(
            f"The log of workspace {compacted} was compacted; its projections are the only "
            "full record of what came before the horizon and cannot be rebuilt from the log.",
            details={"workspaceId": compacted, "reason": "compacted"},
        )
    projections.clear(conn)
    order = (events.c.recorded_at, events.c.workspace_id, events.c.sequence)
    cursor: tuple[int, str, int] | None = None
    replayed = 0
    while True:
        stmt = select(events).order_by(*order).limit(REPLAY_PAGE)
        if cursor is not None:
            stmt = stmt.where(tuple_(*order) > tuple_(*(literal(v) for v in cursor)))
        page = [event_from_row(r) for r in conn.execute(stmt).all()]
        for event in page:
            projections.apply_event(conn, event)
        replayed += len(page)
        if len(page) < REPLAY_PAGE:
            return replayed
        last = page[-1]
        cursor = (last.recorded_at, last.workspace_id, last.sequence)
