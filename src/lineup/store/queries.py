"""Reads of the log and the projections, scoped to a workspace wherever data belongs to one.

A ``Reader`` wraps one synchronous connection inside one transaction, so several reads see
one snapshot: ``await store.read(fn)`` calls ``fn(reader)`` on a reader connection (SQLite: in
a reader thread; PostgreSQL: via ``run_sync``). ``WriteTx`` extends it, so the same reads
inside a write job also see that write's uncommitted work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from json.scanner import make_scanner
from typing import Any, NamedTuple

from sqlalchemy import Select, Table, Text, and_, bindparam, cast, func, select
from sqlalchemy.engine import Connection

from lineup.protocol.subjects import Subject
from lineup.store import files, retention, statements
from lineup.store.eventlog import StoredEvent, event_from_row
from lineup.store.records import (
    Agent,
    Artifact,
    CanvasInstance,
    CanvasOpRecord,
    Conversation,
    Interaction,
    Member,
    Membership,
    Message,
    Task,
    TaskDetail,
    ToolCallRecord,
    ToolDevice,
    User,
    UserWorkspace,
    Workspace,
)
from lineup.store.schema import (
    agents,
    artifacts,
    canvas_instances,
    canvas_ops,
    conversations,
    event_subjects,
    events,
    interactions,
    memberships,
    messages,
    tasks,
    tool_calls,
    tool_devices,
    users,
    workspaces,
)

MAX_PAGE = 1000
"""No read returns more rows than this, whatever the caller asks for."""


def _limit(limit: int) -> int:
    return max(0, min(limit, MAX_PAGE))


def _by(table: Table, *columns: str) -> Select[Any]:
    """``SELECT * FROM table WHERE column = :column AND …``, built once.

    The lookups by key run on every command; a prebuilt statement skips building the
    expression and (memoised on the object) its cache key each time.
    """
    return select(table).where(*(table.c[c] == bindparam(c) for c in columns))


_EVENT_COLUMNS = (
    events.c.id,
    events.c.workspace_id,
    events.c.type,
    events.c.actor,
    cast(events.c.payload, Text).label("payload"),  # decoded by read_events
    events.c.occurred_at,
    events.c.conversation_id,
    events.c.task_id,
    events.c.correlation_id,
    events.c.sequence,
    events.c.recorded_at,
    select(workspaces.c.last_sequence)
    .where(workspaces.c.id == bindparam("workspace_id"))
    .scalar_subquery()
    .label("last_sequence"),
)
_READ_EVENTS = (
    select(*_EVENT_COLUMNS)
    .where(
        events.c.workspace_id == bindparam("workspace_id"), events.c.sequence > bindparam("after")
    )
    .order_by(events.c.sequence)
    .limit(bindparam("limit"))
)
_READ_EVENT_RANGE = (
    select(*_EVENT_COLUMNS)
    .where(
        events.c.workspace_id == bindparam("workspace_id"),
        events.c.sequence > bindparam("after"),
        events.c.sequence <= bindparam("until"),
    )
    .order_by(events.c.sequence)
)
"""``_READ_EVENTS`` for the sequences ``after + 1 … after + limit`` only (see read_events)."""
_GET_EVENT = _by(events, "workspace_id", "id")
_LAST_SEQUENCE = select(workspaces.c.last_sequence).where(workspaces.c.id == bindparam("id"))
_GET_WORKSPACE = _by(workspaces, "id")
_GET_USER = _by(users, "id")
_GET_USER_BY_EMAIL = _by(users, "email")
_GET_MEMBERSHIP = _by(memberships, "workspace_id", "user_id")
_GET_AGENT = _by(agents, "workspace_id", "id")
_GET_CONVERSATION = _by(conversations, "workspace_id", "id")
_GET_MESSAGE = _by(messages, "workspace_id", "id")
_GET_TASK = _by(tasks, "workspace_id", "id")
_GET_INTERACTION = _by(interactions, "workspace_id", "id")
_GET_ARTIFACT = _by(artifacts, "workspace_id", "id")


# what json.loads runs underneath (typeshed types make_scanner's argument as itself)
_scan_json = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _decode_payload(text: str) -> Any:
    """``json.loads(text)`` minus its wrapper: that skips whitespace around the document with
    two regular expression matches, which took longer than scanning a small payload. A
    document with whitespace or anything after it takes ``json.loads`` as before."""
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


_EVENT_FIELDS = (
    "id",
    "workspace_id",
    "type",
    "actor",
    "payload",
    "occurred_at",
    "conversation_id",
    "task_id",
    "correlation_id",
    "sequence",
    "recorded_at",
)
"""StoredEvent's fields in the order of ``_EVENT_COLUMNS``."""


def _event_of_row(row: Sequence[Any], _new: Any = object.__new__) -> StoredEvent:
    """The event without its frozen dataclass ``__init__``, which sets each of the eleven
    fields through ``object.__setattr__`` and took three times as long as this (a replay
    makes 100,000). The same object as ``StoredEvent(...)`` makes: tests compare every event
    read so with ``get_event``'s (test_store_read_events.py)."""
    event: StoredEvent = _new(StoredEvent)
    fields = event.__dict__
    fields.update(zip(_EVENT_FIELDS, row, strict=False))
    fields["payload"] = _decode_payload(fields["payload"])
    return event


class RawEvent(NamedTuple):
    """A committed event as its row holds it, the payload still JSON text: what a replay
    to people's apps needs to write a frame, which splices that text in rather than decode
    it and encode it again (``event_of_raw`` gives the :class:`StoredEvent`)."""

    id: str
    workspace_id: str
    type: str
    actor: str
    payload: str
    occurred_at: int
    conversation_id: str | None
    task_id: str | None
    correlation_id: str | None
    sequence: int
    recorded_at: int


def event_of_raw(raw: RawEvent) -> StoredEvent:
    """The :class:`StoredEvent` of ``raw``, its payload decoded."""
    return _event_of_row(raw)


_RAW_WIDTH = len(RawEvent._fields)


@dataclass(frozen=True, slots=True)
class SubjectPage:
    """A page of one subject's events (see :meth:`Reader.subject_events`)."""

    events: list[StoredEvent]
    """In log order."""
    has_more: bool
    """More of the subject's events lie beyond this page, in the direction it was read
    (older when read with ``before`` alone, newer otherwise)."""


_SUBJECT_EVENTS = (
    select(events)
    .select_from(
        event_subjects.join(
            events,
            and_(
                events.c.workspace_id == event_subjects.c.workspace_id,
                events.c.sequence == event_subjects.c.sequence,
            ),
        )
    )
    .where(
        event_subjects.c.workspace_id == bindparam("workspace_id"),
        event_subjects.c.subject_kind == bindparam("kind"),
        event_subjects.c.subject_id == bindparam("ident"),
    )
)


class Reader:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    @property
    def connection(self) -> Connection:
        """For the ``lineup.store.auth`` functions and anything not covered here."""
        return self._conn

    def file_info(self, workspace_id: str, file_id: str) -> files.FileInfo | None:
        """An uploaded file's facts (not its bytes), if it is ``workspace_id``'s."""
        return files.get_file_info(self._conn, workspace_id, file_id)

    def _rows(self, stmt: Select[Any], params: dict[str, Any] | None = None) -> Sequence[Any]:
        return self._conn.execute(stmt, params).all()

    def _first(self, stmt: Select[Any], params: dict[str, Any]) -> Any:
        """One row by key, as a mapping; ``stmt`` is a module constant (``statements.run``)."""
        return statements.run(self._conn, stmt, params).first()

    # --- the log ---------------------------------------------------------------------------

    def read_events(self, workspace_id: str, after: int = 0, limit: int = 500) -> list[StoredEvent]:
        """Events with sequence > ``after``, in order: a resume cursor is the last sequence seen.

        An app back after a long absence replays 100,000 of these, so each row
        becomes an event by position (``Row._mapping`` per row cost as much as the query) and
        the payload is read as text and decoded by the JSON scanner itself: the column type's
        decoding (SQLite: ``json.loads``; PostgreSQL: asyncpg's JSONB codec, ``json.loads`` of
        the same text) spent most of its time around the scan.
        """
        return [_event_of_row(row) for row in self._event_rows(workspace_id, after, limit)]

    def read_raw_events(
        self, workspace_id: str, after: int = 0, limit: int = 500
    ) -> list[RawEvent]:
        """:meth:`read_events` with each payload left as its stored JSON text."""
        make = RawEvent._make
        return [make(row[:_RAW_WIDTH]) for row in self._event_rows(workspace_id, after, limit)]

    def _event_rows(self, workspace_id: str, after: int, limit: int) -> Sequence[Any]:
        limit = _limit(limit)
        params = {"workspace_id": workspace_id, "after": after, "until": after + limit}
        rows = statements.tuples(self._conn, _READ_EVENT_RANGE, params)
        # The range holds the page whenever it is full (sequences are distinct integers) or
        # reaches the workspace's last sequence (no event is above it): then the plain query
        # would return the same rows. Otherwise (the log has a hole here) it is the plain one.
        # The range because PostgreSQL, without statistics on a fast-growing log (autovacuum
        # behind or off), planned the plain query as a scan of every event after ``after``
        # and a sort: 100 ms for each of an app's first pages after 100,000 missed events.
        if len(rows) < limit and not (rows and after + limit >= rows[0][-1]):
            rows = statements.tuples(self._conn, _READ_EVENTS, {**params, "limit": limit})
        return rows

    def subject_events(
        self,
        workspace_id: str,
        subject: Subject,
        *,
        after: int | None = None,
        before: int | None = None,
        limit: int = 100,
    ) -> SubjectPage:
        """A subject's events (``lineup.protocol.subjects``) with ``after < sequence <
        before``, at most ``limit``: the oldest of them, or the newest when only ``before``
        is given (scrolling back). Events compacted away are not among them."""
        kind, ident = subject
        limit = _limit(limit)
        stmt = _SUBJECT_EVENTS
        if after is not None:
            stmt = stmt.where(event_subjects.c.sequence > after)
        if before is not None:
            stmt = stmt.where(event_subjects.c.sequence < before)
        backwards = before is not None and after is None
        order = event_subjects.c.sequence.desc() if backwards else event_subjects.c.sequence
        params = {"workspace_id": workspace_id, "kind": kind, "ident": ident}
        stmt = stmt.order_by(order).limit(limit + 1)
        rows = [event_from_row(r) for r in self._rows(stmt, params)]
        page = rows[:limit]
        if backwards:
            page.reverse()
        return SubjectPage(page, has_more=len(rows) > limit)

    def task_timeline(
        self, workspace_id: str, task_id: str, limit: int = 1000
    ) -> list[StoredEvent]:
        """A task's timeline: its own events and its children's, in log order, and its agent
        going offline and connecting again while the task was open — a gap in the work often
        is one in the connection, and the person reading the timeline should see it."""
        children = select(tasks.c.id).where(
            tasks.c.workspace_id == workspace_id, tasks.c.parent_task_id == task_id
        )
        stmt = (
            select(events)
            .where(
                events.c.workspace_id == workspace_id,
                (events.c.task_id == task_id) | events.c.task_id.in_(children),
            )
            .order_by(events.c.sequence)
            .limit(limit)
        )
        own = [event_from_row(r) for r in self._rows(stmt)]
        task = self.get_task(workspace_id, task_id)
        if not own or task is None or task.target_agent_id is None:
            return own
        ended = task.status in ("succeeded", "failed", "cancelled")
        connection = self._agent_connection_events(
            workspace_id,
            task.target_agent_id,
            after=own[0].sequence,
            until=task.last_sequence if ended else None,
            limit=limit,
        )
        return sorted([*own, *connection], key=lambda e: e.sequence)[:limit]

    def _agent_connection_events(
        self, workspace_id: str, agent_id: str, *, after: int, until: int | None, limit: int
    ) -> list[StoredEvent]:
        """``agent.status_changed`` and ``agent.connected`` of one agent in a sequence range.

        Which agent an event is about is in its payload; the payload is filtered here, not in
        SQL, to keep the query the same on both databases.
        """
        stmt = select(events).where(
            events.c.workspace_id == workspace_id,
            events.c.type.in_(("agent.status_changed", "agent.connected")),
            events.c.sequence > after,
        )
        if until is not None:
            stmt = stmt.where(events.c.sequence <= until)
        # no LIMIT in SQL: other agents' events in the range must not use it up
        found = (event_from_row(r) for r in self._rows(stmt.order_by(events.c.sequence)))
        return list(islice((e for e in found if e.payload.get("agentId") == agent_id), limit))

    def read_events_of_types(
        self, workspace_id: str, types: Sequence[str], after: int = 0, limit: int = 500
    ) -> list[StoredEvent]:
        """Events of the given types after ``after``, in order (e.g. one agent's history)."""
        stmt = (
            select(events)
            .where(
                events.c.workspace_id == workspace_id,
                events.c.type.in_(list(types)),
                events.c.sequence > after,
            )
            .order_by(events.c.sequence)
            .limit(_limit(limit))
        )
        return [event_from_row(r) for r in self._conn.execute(stmt).all()]

    def get_event(self, workspace_id: str, event_id: str) -> StoredEvent | None:
        row = self._first(_GET_EVENT, {"workspace_id": workspace_id, "id": event_id})
        return None if row is None else event_from_row(row)

    def last_sequence(self, workspace_id: str) -> int:
        """0 for an unknown workspace, like one with no events."""
        value: int | None = self._conn.execute(
            _LAST_SEQUENCE, {"id": workspace_id}
        ).scalar_one_or_none()
        return value or 0

    def last_sequences(self, ids: list[str]) -> dict[str, int]:
        """Each known workspace's ``last_sequence``; unknown ids are left out."""
        stmt = select(workspaces.c.id, workspaces.c.last_sequence).where(workspaces.c.id.in_(ids))
        return {row.id: row.last_sequence for row in self._conn.execute(stmt)}

    def log_horizon(self, workspace_id: str) -> int:
        """The earliest sequence from which the log is whole (1 unless compacted): a cursor
        ``after`` with ``after + 1`` below it needs ``system.resync_required``. Events below
        it may still be stored (the keep rules of ``lineup.store.retention``) with holes."""
        return retention.horizon_of(self._conn, workspace_id)

    def first_sequence(self, workspace_id: str) -> int | None:
        """The oldest sequence still stored (see :meth:`log_horizon` for whether a cursor is
        behind what is kept)."""
        stmt = select(func.min(events.c.sequence)).where(events.c.workspace_id == workspace_id)
        value: int | None = self._conn.execute(stmt).scalar_one_or_none()
        return value

    # --- workspaces and people -------------------------------------------------------------

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        row = self._first(_GET_WORKSPACE, {"id": workspace_id})
        return None if row is None else Workspace.from_row(row)

    def get_user(self, user_id: str) -> User | None:
        row = self._first(_GET_USER, {"id": user_id})
        return None if row is None else User.from_row(row)

    def get_user_by_email(self, email: str) -> User | None:
        row = self._first(_GET_USER_BY_EMAIL, {"email": email})
        return None if row is None else User.from_row(row)

    def get_membership(self, workspace_id: str, user_id: str) -> Membership | None:
        row = self._first(_GET_MEMBERSHIP, {"workspace_id": workspace_id, "user_id": user_id})
        return None if row is None else Membership.from_row(row)

    def list_user_workspaces(self, user_id: str) -> list[UserWorkspace]:
        """The workspaces a user belongs to, oldest membership first."""
        stmt = (
            select(workspaces, memberships.c.role, memberships.c.created_at.label("joined_at"))
            .join(memberships, memberships.c.workspace_id == workspaces.c.id)
            .where(memberships.c.user_id == user_id)
            .order_by(memberships.c.created_at, workspaces.c.id)
        )
        return [UserWorkspace(Workspace.from_row(r), r.role, r.joined_at) for r in self._rows(stmt)]

    def list_members(self, workspace_id: str) -> list[Member]:
        stmt = (
            select(users, memberships.c.role, memberships.c.created_at.label("joined_at"))
            .join(memberships, memberships.c.user_id == users.c.id)
            .where(memberships.c.workspace_id == workspace_id)
            .order_by(memberships.c.created_at, users.c.id)
        )
        return [Member(User.from_row(r), r.role, r.joined_at) for r in self._rows(stmt)]

    # --- agents ----------------------------------------------------------------------------

    def get_agent(self, workspace_id: str, agent_id: str) -> Agent | None:
        row = self._first(_GET_AGENT, {"workspace_id": workspace_id, "id": agent_id})
        return None if row is None else Agent.from_row(row)

    def list_agents(self, workspace_id: str) -> list[Agent]:
        stmt = (
            select(agents)
            .where(agents.c.workspace_id == workspace_id)
            .order_by(agents.c.name, agents.c.id)
        )
        return [Agent.from_row(r) for r in self._rows(stmt)]

    # --- conversations and messages --------------------------------------------------------

    def get_conversation(self, workspace_id: str, conversation_id: str) -> Conversation | None:
        row = self._first(_GET_CONVERSATION, {"workspace_id": workspace_id, "id": conversation_id})
        return None if row is None else Conversation.from_row(row)

    def list_conversations(self, workspace_id: str, limit: int = 100) -> list[Conversation]:
        """Most recently active first (the last message or creation)."""
        stmt = (
            select(conversations)
            .where(conversations.c.workspace_id == workspace_id)
            .order_by(conversations.c.last_sequence.desc())
            .limit(_limit(limit))
        )
        return [Conversation.from_row(r) for r in self._rows(stmt)]

    def list_messages(
        self,
        workspace_id: str,
        conversation_id: str,
        *,
        before: int | None = None,
        after: int | None = None,
        limit: int = 50,
    ) -> list[Message]:
        """A page of messages in sequence order.

        ``after`` pages forward from a sequence; otherwise the page is the newest ``limit``
        messages below ``before`` (or overall), which is how a conversation scrolls back.
        """
        stmt = select(messages).where(
            messages.c.workspace_id == workspace_id,
            messages.c.conversation_id == conversation_id,
        )
        if before is not None:
            stmt = stmt.where(messages.c.sequence < before)
        if after is not None:
            stmt = stmt.where(messages.c.sequence > after)
            stmt = stmt.order_by(messages.c.sequence).limit(_limit(limit))
            return [Message.from_row(r) for r in self._rows(stmt)]
        stmt = stmt.order_by(messages.c.sequence.desc()).limit(_limit(limit))
        return [Message.from_row(r) for r in reversed(self._rows(stmt))]

    def get_message(self, workspace_id: str, message_id: str) -> Message | None:
        row = self._first(_GET_MESSAGE, {"workspace_id": workspace_id, "id": message_id})
        return None if row is None else Message.from_row(row)

    # --- tasks -----------------------------------------------------------------------------

    def get_task(self, workspace_id: str, task_id: str) -> Task | None:
        row = self._first(_GET_TASK, {"workspace_id": workspace_id, "id": task_id})
        return None if row is None else Task.from_row(row)

    def list_tasks(
        self,
        workspace_id: str,
        *,
        statuses: Sequence[str] | None = None,
        conversation_id: str | None = None,
        limit: int = 100,
    ) -> list[Task]:
        """Newest first."""
        stmt = select(tasks).where(tasks.c.workspace_id == workspace_id)
        if statuses is not None:
            stmt = stmt.where(tasks.c.status.in_(list(statuses)))
        if conversation_id is not None:
            stmt = stmt.where(tasks.c.conversation_id == conversation_id)
        stmt = stmt.order_by(tasks.c.created_at.desc(), tasks.c.id.desc()).limit(_limit(limit))
        return [Task.from_row(r) for r in self._rows(stmt)]

    def list_child_tasks(self, workspace_id: str, parent_task_id: str) -> list[Task]:
        """Oldest first: the order the agent split the work in."""
        stmt = (
            select(tasks)
            .where(tasks.c.workspace_id == workspace_id, tasks.c.parent_task_id == parent_task_id)
            .order_by(tasks.c.created_at, tasks.c.last_sequence, tasks.c.id)
        )
        return [Task.from_row(r) for r in self._rows(stmt)]

    def get_task_detail(self, workspace_id: str, task_id: str) -> TaskDetail | None:
        task = self.get_task(workspace_id, task_id)
        if task is None:
            return None
        return TaskDetail(
            task=task,
            children=self.list_child_tasks(workspace_id, task_id),
            interactions=self.list_interactions(workspace_id, task_id=task_id),
            artifacts=self.list_artifacts(workspace_id, task_id=task_id),
        )

    # --- interactions ----------------------------------------------------------------------

    def get_interaction(self, workspace_id: str, interaction_id: str) -> Interaction | None:
        row = self._first(_GET_INTERACTION, {"workspace_id": workspace_id, "id": interaction_id})
        return None if row is None else Interaction.from_row(row)

    def list_interactions(
        self,
        workspace_id: str,
        *,
        statuses: Sequence[str] | None = None,
        task_id: str | None = None,
        conversation_id: str | None = None,
        limit: int = 200,
    ) -> list[Interaction]:
        """In request order (oldest first), as an inbox works through them."""
        stmt = select(interactions).where(interactions.c.workspace_id == workspace_id)
        if statuses is not None:
            stmt = stmt.where(interactions.c.status.in_(list(statuses)))
        if task_id is not None:
            stmt = stmt.where(interactions.c.task_id == task_id)
        if conversation_id is not None:
            stmt = stmt.where(interactions.c.conversation_id == conversation_id)
        stmt = stmt.order_by(interactions.c.sequence).limit(_limit(limit))
        return [Interaction.from_row(r) for r in self._rows(stmt)]

    # --- artifacts -------------------------------------------------------------------------

    def list_artifacts(
        self,
        workspace_id: str,
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
        limit: int = 200,
    ) -> list[Artifact]:
        stmt = select(artifacts).where(artifacts.c.workspace_id == workspace_id)
        if task_id is not None:
            stmt = stmt.where(artifacts.c.task_id == task_id)
        if conversation_id is not None:
            stmt = stmt.where(artifacts.c.conversation_id == conversation_id)
        stmt = stmt.order_by(artifacts.c.created_at, artifacts.c.id).limit(_limit(limit))
        return [Artifact.from_row(r) for r in self._rows(stmt)]

    def get_artifact(self, workspace_id: str, artifact_id: str) -> Artifact | None:
        row = self._first(_GET_ARTIFACT, {"workspace_id": workspace_id, "id": artifact_id})
        return None if row is None else Artifact.from_row(row)

    def list_tool_devices(self, workspace_id: str) -> list[ToolDevice]:
        """The apps that registered tools, most recently registered first."""
        stmt = (
            select(tool_devices)
            .where(tool_devices.c.workspace_id == workspace_id)
            .order_by(tool_devices.c.last_sequence.desc())
        )
        return [ToolDevice.from_row(r) for r in self._rows(stmt)]

    def get_tool_device(self, workspace_id: str, device_id: str) -> ToolDevice | None:
        stmt = select(tool_devices).where(
            tool_devices.c.workspace_id == workspace_id, tool_devices.c.device_id == device_id
        )
        row = self._conn.execute(stmt).first()
        return None if row is None else ToolDevice.from_row(row)

    def get_tool_call(self, workspace_id: str, tool_call_id: str) -> ToolCallRecord | None:
        stmt = select(tool_calls).where(
            tool_calls.c.workspace_id == workspace_id, tool_calls.c.id == tool_call_id
        )
        row = self._conn.execute(stmt).first()
        return None if row is None else ToolCallRecord.from_row(row)

    def list_tool_calls(
        self,
        workspace_id: str,
        *,
        statuses: Sequence[str] | None = None,
        conversation_id: str | None = None,
        task_id: str | None = None,
        instance_id: str | None = None,
        limit: int = 200,
    ) -> list[ToolCallRecord]:
        """In call order (oldest first), as apps answer them."""
        stmt = select(tool_calls).where(tool_calls.c.workspace_id == workspace_id)
        if statuses is not None:
            stmt = stmt.where(tool_calls.c.status.in_(list(statuses)))
        if conversation_id is not None:
            stmt = stmt.where(tool_calls.c.conversation_id == conversation_id)
        if task_id is not None:
            stmt = stmt.where(tool_calls.c.task_id == task_id)
        if instance_id is not None:
            stmt = stmt.where(tool_calls.c.instance_id == instance_id)
        stmt = stmt.order_by(tool_calls.c.sequence).limit(_limit(limit))
        return [ToolCallRecord.from_row(r) for r in self._rows(stmt)]

    def earlier_pending_canvas_call(
        self, workspace_id: str, instance_id: str, before_sequence: int
    ) -> ToolCallRecord | None:
        """The oldest canvas call on ``instance_id`` still waiting, called before a sequence."""
        stmt = (
            select(tool_calls)
            .where(
                tool_calls.c.workspace_id == workspace_id,
                tool_calls.c.instance_id == instance_id,
                tool_calls.c.status == "pending",
                tool_calls.c.sequence < before_sequence,
            )
            .order_by(tool_calls.c.sequence)
            .limit(1)
        )
        row = self._conn.execute(stmt).first()
        return None if row is None else ToolCallRecord.from_row(row)

    def overdue_tool_calls(self, now_ms: int, limit: int = 1000) -> list[ToolCallRecord]:
        """Across workspaces (for the hub's monitor): pending calls past their timeout."""
        stmt = (
            select(tool_calls)
            .where(
                tool_calls.c.status == "pending",
                tool_calls.c.expires_at.is_not(None),
                tool_calls.c.expires_at <= now_ms,
            )
            .order_by(tool_calls.c.expires_at, tool_calls.c.id)
            .limit(_limit(limit))
        )
        return [ToolCallRecord.from_row(r) for r in self._rows(stmt)]

    def get_canvas(self, workspace_id: str, instance_id: str) -> CanvasInstance | None:
        stmt = select(canvas_instances).where(
            canvas_instances.c.workspace_id == workspace_id, canvas_instances.c.id == instance_id
        )
        row = self._conn.execute(stmt).first()
        return None if row is None else CanvasInstance.from_row(row)

    def list_canvases(
        self,
        workspace_id: str,
        *,
        conversation_id: str | None = None,
        statuses: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[CanvasInstance]:
        """In the order they were opened (the newest ``limit``)."""
        stmt = select(canvas_instances).where(canvas_instances.c.workspace_id == workspace_id)
        if conversation_id is not None:
            stmt = stmt.where(canvas_instances.c.conversation_id == conversation_id)
        if statuses is not None:
            stmt = stmt.where(canvas_instances.c.status.in_(list(statuses)))
        stmt = stmt.order_by(canvas_instances.c.sequence.desc()).limit(_limit(limit))
        return [CanvasInstance.from_row(r) for r in reversed(self._rows(stmt))]

    def list_canvas_ops(self, workspace_id: str, instance_id: str) -> list[CanvasOpRecord]:
        """A canvas's draws and clears in the order they took effect."""
        stmt = (
            select(canvas_ops)
            .where(
                canvas_ops.c.workspace_id == workspace_id,
                canvas_ops.c.instance_id == instance_id,
            )
            .order_by(canvas_ops.c.sequence)
        )
        return [CanvasOpRecord.from_row(r) for r in self._conn.execute(stmt).all()]
