"""Appends a writer transaction holds back on PostgreSQL, then writes together.

Every statement is a round trip to PostgreSQL, and a writer shard's transactions run one
after another: one agent's reports, all in one workspace and so on one shard, commit no
faster than one round trip each. In a batch's first (optimistic) pass the writer therefore
gives the connection an :class:`AppendBuffer`. An append then makes no statement: its
sequence is the workspace's counter, read once per transaction and counted on here (the
transaction holds the workspace's advisory lock, so no one else moves it), and its event
row, its subject index rows, the workspace's counter and — for a progress report — the
task's touch (``projections.task_touch``) are held. The held writes are one statement,
however many events the batch holds: the batch's rows go as one JSON document, which
data-modifying ``WITH`` parts read with ``jsonb_to_recordset`` (asyncpg's ``executemany``,
one per table, had cost the writer more CPU than all its other statements together when
batches are small). Before any other statement runs on the connection (``statements``, and
a listener for everything else) they are made as a statement of their own; at the end of
the batch they ride with its COMMIT, in the same round trip (:meth:`flush_at_commit`).

What the held writes would have refused — a resent event id, a value the column cannot
hold — fails there instead (at COMMIT, the COMMIT fails), and the writer then runs the
batch again isolated, a savepoint per job and no holding: the same path as any failure of
the optimistic pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import BigInteger, Column, String, Table, bindparam, event, select, text
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.sql.elements import TextClause
from sqlalchemy.util import await_only

from lineup.store import projections, statements, task_rows
from lineup.store.engines import writer_connection
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
T = TypeVar("T")


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

    def know_counters(self, counters: Mapping[str, tuple[int, int]]) -> None:
        """Count on from these counters, which the batch checked once it held the locks."""
        self._counters.update(counters)

    def counters_of(self, workspace_ids: frozenset[str]) -> dict[str, tuple[int, int]]:
        """The counters of these workspaces that the batch knows, as its writes leave them
        (once flushed); one moved by a statement of its own it does not know any more."""
        return {w: self._counters[w] for w in workspace_ids if w in self._counters}

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
        """Make the held writes now, in one statement; what fails raises as the statement
        would have."""
        if self._events:
            shapes, doc = self._take()
            statements.run(conn, _flush_statement(shapes), {"doc": doc})

    def flush_at_commit(self, conn: Connection) -> bool:
        """Have the held writes go with the transaction's COMMIT, in its round trip (the
        writer's connection on PostgreSQL, ``WriterConnection``): ``EXECUTE`` of the flush
        statement, prepared once per connection and shape (planning it each time cost the
        server more than the round trip saved), its JSON document written in, quoted so
        that nothing in it can end the quote. Returns whether they did; a COMMIT that fails
        then failed on them too."""
        driver = writer_connection(conn)
        if not self._events or driver is None:
            self.flush(conn)
            return False
        shapes, doc = self._take()
        name = driver.flushes.get(shapes)
        if name is None:
            if len(driver.flushes) >= _FLUSHES_LIMIT:
                statements.run(conn, _flush_statement(shapes), {"doc": doc})
                return False
            name = f"lineup_flush_{len(driver.flushes)}"
            sql = _flush_sql(shapes, "$1")
            # kept by the session whatever becomes of this transaction
            await_only(driver.execute(f"PREPARE {name} (jsonb) AS {sql}"))
            driver.flushes[shapes] = name
        driver.commit_with = f"EXECUTE {name}({_dollar_quoted(doc)});"
        return True

    def _take(self) -> tuple[tuple[tuple[str, ...], ...], str]:
        """What is held, as the flush statement's shapes and its JSON document; held no more."""
        moved, self._moved = self._moved, set()
        held_events, self._events = self._events, []
        held_subjects, self._subjects = self._subjects, []
        touches, self._touches = self._touches, {}
        counters = self._counters
        by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for (workspace_id, task_id), values in touches.items():
            row = {"workspace_id": workspace_id, "id": task_id, **values}
            by_columns.setdefault(tuple(sorted(values)), []).append(row)
        doc: dict[str, Any] = {
            "m": [{"id": ws, "seq": counters[ws][0], "rec": counters[ws][1]} for ws in moved],
            "e": held_events,
            "s": held_subjects,
        }
        for n, rows in enumerate(by_columns.values()):
            doc[f"t{n}"] = rows
        return tuple(by_columns), json.dumps(doc, separators=(",", ":"))


_PG: Dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
_FLUSHES_LIMIT = 256
_flushes: dict[tuple[tuple[str, ...], ...], TextClause] = {}


def _record_type(column: Column[Any]) -> str:
    """The column's type in ``jsonb_to_recordset``'s row: TEXT for strings, not VARCHAR(n),
    so that a value too long for the column is refused by the column's own (assignment)
    cast instead of cut short."""
    impl = column.type.dialect_impl(_PG)
    if isinstance(impl, sqltypes.String) and not isinstance(impl, sqltypes.JSON):
        return "TEXT"
    return str(impl.compile(dialect=_PG))


def _rows(doc: str, key: str, table: Table, names: Sequence[str]) -> str:
    """``jsonb_to_recordset`` over the document's ``key``: rows with these columns, typed as
    the table's."""
    quote = _PG.identifier_preparer.quote
    columns = ", ".join(f"{quote(n)} {_record_type(table.c[n])}" for n in names)
    return f"jsonb_to_recordset({doc} -> '{key}') AS u({columns})"


def _insert_sql(doc: str, key: str, table: Table) -> str:
    names = [c.name for c in table.columns]
    quote = _PG.identifier_preparer.quote
    columns = ", ".join(quote(n) for n in names)
    values = ", ".join(f"u.{quote(n)}" for n in names)
    source = _rows(doc, key, table, names)
    # the schema's own identifiers, quoted; the values come from the document
    return f"INSERT INTO {table.name} ({columns}) SELECT {values} FROM {source}"  # noqa: S608


def _touch_sql(doc: str, key: str, shape: tuple[str, ...]) -> str:
    quote = _PG.identifier_preparer.quote
    sets = ", ".join(f"{quote(n)} = u.{quote(n)}" for n in shape)
    source = _rows(doc, key, tasks, ("workspace_id", "id", *shape))
    return (
        f"UPDATE tasks SET {sets} FROM {source} "  # noqa: S608 - the schema's identifiers
        "WHERE tasks.workspace_id = u.workspace_id AND tasks.id = u.id"
    )


def _flush_sql(shapes: tuple[tuple[str, ...], ...], doc: str) -> str:
    """The held writes' one statement, for tasks' touches of these column sets, reading the
    JSON document ``doc`` (an SQL expression): the counters, the events and the tasks in
    data-modifying ``WITH`` parts, the subjects last (every part runs once and to
    completion, on one snapshot; they touch different rows)."""
    moved = f"jsonb_to_recordset({doc} -> 'm') AS u(id TEXT, seq BIGINT, rec BIGINT)"
    parts = [
        "moved AS (UPDATE workspaces SET last_sequence = u.seq, last_recorded_at = u.rec "  # noqa: S608
        f"FROM {moved} WHERE workspaces.id = u.id)",
        f"appended AS ({_insert_sql(doc, 'e', events)})",
        *(f"touched{n} AS ({_touch_sql(doc, f't{n}', shape)})" for n, shape in enumerate(shapes)),
    ]
    return f"WITH {', '.join(parts)} {_insert_sql(doc, 's', event_subjects)}"


def _flush_statement(shapes: tuple[tuple[str, ...], ...]) -> TextClause:
    """:func:`_flush_sql` with the document as a parameter, ``:doc`` (JSON text)."""
    stmt = _flushes.get(shapes)
    if stmt is None:
        if len(_flushes) >= _FLUSHES_LIMIT:
            _flushes.clear()
        stmt = _flushes[shapes] = text(_flush_sql(shapes, "CAST(CAST(:doc AS TEXT) AS JSONB)"))
    return stmt


def _dollar_quoted(doc: str) -> str:
    """``doc`` as a JSONB literal: dollar-quoted with a tag that does not occur in it, so the
    text between the tags is taken as it is, whatever it holds."""
    n = 0
    while f"$j{n}$" in doc:
        n += 1
    return f"CAST($j{n}${doc}$j{n}$ AS JSONB)"


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
