"""Appending to and replaying the per-workspace event log.

Append is the only way a sequence number is made: the workspace row's counter (and the time of
its latest event) is bumped with ``UPDATE … RETURNING`` in the same transaction as the event
and its projection, so the row lock serialises appenders (also across hub nodes on
PostgreSQL) and a rolled-back append leaves no gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import BigInteger, Row, bindparam, case, insert, literal, select, tuple_, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from lineup.protocol.errors import Conflict, InvalidArgument, NotFound
from lineup.protocol.facts import Fact, parse_fact
from lineup.store import projections, retention, statements
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
    fact: Fact | None = field(default=None, compare=False, repr=False)
    """The payload as its model, when the appender has it: projections then read that and
    the stored JSON is not parsed again."""


@dataclass(frozen=True, kw_only=True)
class StoredEvent(NewEvent):
    """An event as committed: it has its place in the workspace's order and the hub's time."""

    sequence: int
    recorded_at: int


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
        stored = _insert(conn, event, now_ms, fingerprint)
        projections.apply_event(conn, stored)
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


def _insert(conn: Connection, event: NewEvent, now_ms: int, fingerprint: str | None) -> StoredEvent:
    if event.type == WORKSPACE_CREATED:
        _create_workspace_row(conn, event, now_ms)
    bumped = statements.run(
        conn, _BUMP, {"workspace_id": event.workspace_id, "now_ms": now_ms}
    ).first()
    if bumped is None:
        raise NotFound("workspace not found", details={"workspaceId": event.workspace_id})
    sequence, recorded_at = bumped["last_sequence"], bumped["last_recorded_at"]
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
        fact=event.fact,
        sequence=sequence,
        recorded_at=recorded_at,
    )
    statements.run(
        conn,
        _INSERT_EVENT,
        {
            "workspace_id": stored.workspace_id,
            "sequence": stored.sequence,
            "id": stored.id,
            "type": stored.type,
            "actor": stored.actor,
            "conversation_id": stored.conversation_id,
            "task_id": stored.task_id,
            "correlation_id": stored.correlation_id,
            "occurred_at": stored.occurred_at,
            "recorded_at": stored.recorded_at,
            "payload": stored.payload,
            "fingerprint": fingerprint,
        },
    )
    return stored


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
