"""Appends a writer transaction holds back on PostgreSQL, then writes together.

Every statement is a round trip to PostgreSQL, and a writer shard's transactions run one
after another: one agent's reports, all in one workspace and so on one shard, commit no
faster than one round trip each. In a batch's first (optimistic) pass the writer therefore
gives the connection an :class:`AppendBuffer`. An append then makes no statement: its
sequence is the workspace's counter, read once per transaction and counted on here (the
transaction holds the workspace's advisory lock, so no one else moves it), and its event
row, its subject index rows, the workspace's counter and — for a progress report — the
task's touch (``projections.task_touch``) are held. Before any other statement runs on the
connection (``statements``, and a listener for everything else), and before COMMIT, the
held writes are made: one ``executemany`` per table, each a single round trip however many
events the batch holds.

What the held writes would have refused — a resent event id, a value the column cannot
hold — fails there instead, and the writer then runs the batch again isolated, a savepoint
per job and no holding: the same path as any failure of the optimistic pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import BigInteger, String, bindparam, event, insert, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection, Engine

from lineup.store import projections, statements, task_rows
from lineup.store.schema import event_subjects, events, tasks, workspaces

_COUNTER = select(workspaces.c.last_sequence, workspaces.c.last_recorded_at).where(
    workspaces.c.id == bindparam("id")
)
_COUNTERS = (
    text(
        "SELECT id, last_sequence, last_recorded_at FROM workspaces "
        "WHERE id = ANY(CAST(:ids AS VARCHAR[]))"
    )
    .bindparams(bindparam("ids", type_=ARRAY(String)))
    .columns(id=String(), last_sequence=BigInteger(), last_recorded_at=BigInteger())
)
_SET_COUNTER = (
    update(workspaces)
    .where(workspaces.c.id == bindparam("w_id"))
    .values(last_sequence=bindparam("seq"), last_recorded_at=bindparam("rec"))
)
T = TypeVar("T")

_INSERT_EVENT = insert(events)
_INSERT_SUBJECT = insert(event_subjects)


class AppendBuffer:
    """The appends held in one attempt of one batch (see the module docstring)."""

    __slots__ = ("_counters", "_events", "_moved", "_subjects", "_touches")

    def __init__(self) -> None:
        self._counters: dict[str, tuple[int, int]] = {}
        self._moved: set[str] = set()
        self._events: list[dict[str, Any]] = []
        self._subjects: list[dict[str, Any]] = []
        self._touches: dict[tuple[str, str], dict[str, Any]] = {}

    def __bool__(self) -> bool:
        return bool(self._events)

    def read_counters(self, conn: Connection, workspace_ids: frozenset[str]) -> None:
        """Read the counters of the workspaces a batch writes, all in one statement, once it
        holds their locks (so they stay the batch's until it commits)."""
        params = {"ids": sorted(workspace_ids)}
        for row in self.unheld(conn, lambda: statements.run(conn, _COUNTERS, params)):
            self._counters[row["id"]] = (row["last_sequence"], row["last_recorded_at"])

    def unheld(self, conn: Connection, read: Callable[[], T]) -> T:
        """``read()`` without making the held writes first: for a read they cannot change."""
        conn.info.pop(statements.HELD, None)
        try:
            return read()
        finally:
            conn.info[statements.HELD] = self

    def touches(self, workspace_id: str, task_id: str) -> bool:
        """Whether an update of this task's row is held."""
        return (workspace_id, task_id) in self._touches

    def next_sequence(self, conn: Connection, workspace_id: str, now_ms: int) -> tuple[int, int]:
        """The sequence and recorded time of the workspace's next event, as the append's
        statement would make them (never before the previous event's time); ``KeyError``
        for a workspace that does not exist."""
        counter = self._counters.get(workspace_id)
        if counter is None:
            # another workspace's held writes do not change this one's row: no flush first
            params = {"id": workspace_id}
            row = self.unheld(conn, lambda: statements.run(conn, _COUNTER, params).first())
            if row is None:
                raise KeyError(workspace_id)
            counter = (row["last_sequence"], row["last_recorded_at"])
        sequence, recorded_at = counter[0] + 1, max(counter[1], now_ms)
        self._counters[workspace_id] = (sequence, recorded_at)
        self._moved.add(workspace_id)
        return sequence, recorded_at

    def forget(self, conn: Connection, workspace_id: str) -> None:
        """The workspace's counter is about to move by a statement (an append not held):
        what is held is written first, and its counter is read again when next needed."""
        self.flush(conn)
        self._counters.pop(workspace_id, None)

    def forget_all(self, conn: Connection) -> None:
        """As :meth:`forget`, for every workspace."""
        self.flush(conn)
        self._counters.clear()

    def hold(
        self,
        row: dict[str, Any],
        subjects: list[tuple[str, str]],
        touch: projections.TaskTouch | None,
    ) -> None:
        """An event's row (with its sequence and recorded time), its subjects, its touch."""
        self._events.append(row)
        workspace_id, sequence = row["workspace_id"], row["sequence"]
        self._subjects.extend(
            {
                "workspace_id": workspace_id,
                "subject_kind": kind,
                "subject_id": ident,
                "sequence": sequence,
            }
            for kind, ident in subjects
        )
        if touch is not None:
            task_id, values = touch
            merged = self._touches.setdefault((workspace_id, task_id), {})
            merged.update(values)  # later reports of the task win, as their updates would
            merged["updated_at"] = row["recorded_at"]
            merged["last_sequence"] = sequence

    def flush(self, conn: Connection) -> None:
        """Make the held writes now; what fails raises as the statement would have."""
        if not self._events:
            return
        moved, self._moved = self._moved, set()
        held_events, self._events = self._events, []
        held_subjects, self._subjects = self._subjects, []
        touches, self._touches = self._touches, {}
        counters = self._counters
        statements.run_many(
            conn,
            _SET_COUNTER,
            [{"w_id": ws, "seq": counters[ws][0], "rec": counters[ws][1]} for ws in moved],
        )
        statements.run_many(conn, _INSERT_EVENT, held_events)
        statements.run_many(conn, _INSERT_SUBJECT, held_subjects)
        by_columns: dict[frozenset[str], list[dict[str, Any]]] = {}
        for (workspace_id, task_id), values in touches.items():
            params = {"where_workspace_id": workspace_id, "where_id": task_id, **values}
            by_columns.setdefault(frozenset(values), []).append(params)
        update_task = projections.update_statement(tasks, "workspace_id", "id")
        for same in by_columns.values():
            statements.run_many(conn, update_task, same)


def hold(conn: Connection) -> AppendBuffer:
    """Hold appends on ``conn`` from now on (a writer's transaction on asyncpg)."""
    buffer = AppendBuffer()
    conn.info[statements.HELD] = buffer
    return buffer


def release(conn: Connection) -> None:
    """Stop holding (what is still held is dropped: the transaction is ending)."""
    conn.info.pop(statements.HELD, None)


def held(conn: Connection) -> AppendBuffer | None:
    found = conn.info.get(statements.HELD)
    return found if isinstance(found, AppendBuffer) else None


def flush_before_statements(engine: Engine) -> None:
    """Make held writes before any statement run through SQLAlchemy on ``engine``'s
    connections (``statements`` makes them before its own), and forget what a rolled-back
    savepoint may have undone."""

    @event.listens_for(engine, "before_cursor_execute")
    def _flush(conn: Connection, *_: Any) -> None:
        buffer = conn.info.get(statements.HELD)
        if buffer:
            buffer.flush(conn)

    @event.listens_for(engine, "rollback_savepoint")
    def _undone(conn: Connection, *_: Any) -> None:
        # what a savepoint undoes may include counters and tasks' rows this batch moved:
        # write what is held (the rollback undoes it as it should), then read them afresh
        buffer = held(conn)
        if buffer is not None:
            buffer.forget_all(conn)
        task_rows.forget(conn)


__all__ = ["AppendBuffer", "flush_before_statements", "held", "hold", "release"]
