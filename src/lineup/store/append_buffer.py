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
held writes are made in one statement — one round trip however many events the batch holds:
each table's rows travel as one array per column, unnested by data-modifying ``WITH``
parts. (asyncpg's ``executemany``, one per table, cost the writer more CPU than all its
other statements together when batches are small.)

What the held writes would have refused — a resent event id, a value the column cannot
hold — fails there instead, and the writer then runs the batch again isolated, a savepoint
per job and no holding: the same path as any failure of the optimistic pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import BigInteger, Column, String, Table, bindparam, event, select, text
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.sql.elements import TextClause

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
        if not self._events:
            return
        moved, self._moved = self._moved, set()
        held_events, self._events = self._events, []
        held_subjects, self._subjects = self._subjects, []
        touches, self._touches = self._touches, {}
        counters = self._counters
        by_columns: dict[tuple[str, ...], list[tuple[tuple[str, str], dict[str, Any]]]] = {}
        for key, values in touches.items():
            by_columns.setdefault(tuple(sorted(values)), []).append((key, values))
        shapes = tuple(by_columns)
        params: dict[str, Any] = {
            "moved_id": list(moved),
            "moved_seq": [counters[ws][0] for ws in moved],
            "moved_rec": [counters[ws][1] for ws in moved],
        }
        for name, column in _EVENT_ARRAYS:
            params[f"e_{name}"] = column([row[name] for row in held_events])
        for name, column in _SUBJECT_ARRAYS:
            params[f"s_{name}"] = column([row[name] for row in held_subjects])
        for n, (shape, rows) in enumerate(by_columns.items()):
            params[f"t{n}_workspace_id"] = [key[0] for key, _ in rows]
            params[f"t{n}_id"] = [key[1] for key, _ in rows]
            for name in shape:
                params[f"t{n}_{name}"] = _TASK_ARRAYS[name]([values[name] for _, values in rows])
        statements.run(conn, _flush_statement(shapes), params)


_PG: Dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
_Convert = Callable[[list[Any]], list[Any]]


def _as_json(values: list[Any]) -> list[Any]:
    return [None if v is None else json.dumps(v, separators=(",", ":")) for v in values]


def _element(column: Column[Any]) -> tuple[str, str, _Convert]:
    """How a column's values travel in an array parameter: the element's SQL type, the
    expression that makes an element the column's type again, and the values' conversion
    (JSON goes as text and is cast back per element, so no array parameter needs a JSON
    codec)."""
    impl = column.type.dialect_impl(_PG)
    name = _PG.identifier_preparer.quote(column.name)
    if isinstance(impl, sqltypes.JSON):
        return "TEXT", f"CAST(u.{name} AS {impl.compile(dialect=_PG)})", _as_json
    if isinstance(impl, sqltypes.String):
        # not VARCHAR(n): an explicit cast would cut a long value short, where the column's
        # own (assignment) cast refuses it
        return "TEXT", f"u.{name}", list
    return impl.compile(dialect=_PG), f"u.{name}", list


def _arrays(table: Table, names: Iterable[str]) -> tuple[tuple[str, _Convert], ...]:
    return tuple((name, _element(table.c[name])[2]) for name in names)


_EVENT_ARRAYS = _arrays(events, (c.name for c in events.columns))
_SUBJECT_ARRAYS = _arrays(event_subjects, (c.name for c in event_subjects.columns))
_TASK_ARRAYS = {c.name: _element(c)[2] for c in tasks.columns}
_FLUSHES_LIMIT = 256
_flushes: dict[tuple[tuple[str, ...], ...], TextClause] = {}


def _from_arrays(table: Table, prefix: str, names: Sequence[str]) -> tuple[str, list[str]]:
    """``unnest(…) AS u(…)`` over one array parameter per column (``:<prefix><name>``), and
    the select list that reads the rows back as the table's types."""
    quote = _PG.identifier_preparer.quote
    arrays, values = [], []
    for name in names:
        element, value, _ = _element(table.c[name])
        arrays.append(f"CAST(:{prefix}{name} AS {element}[])")
        values.append(value)
    return f"unnest({', '.join(arrays)}) AS u({', '.join(quote(n) for n in names)})", values


def _insert_sql(table: Table, prefix: str) -> str:
    names = [c.name for c in table.columns]
    source, values = _from_arrays(table, prefix, names)
    quote = _PG.identifier_preparer.quote
    columns = ", ".join(quote(n) for n in names)
    # identifiers of the schema's own tables and columns, quoted; values go as parameters
    return f"INSERT INTO {table.name} ({columns}) SELECT {', '.join(values)} FROM {source}"  # noqa: S608


def _touch_sql(prefix: str, shape: tuple[str, ...]) -> str:
    quote = _PG.identifier_preparer.quote
    source, values = _from_arrays(tasks, prefix, ("workspace_id", "id", *shape))
    sets = ", ".join(f"{quote(n)} = {v}" for n, v in zip(shape, values[2:], strict=True))
    return (
        f"UPDATE tasks SET {sets} FROM {source} "  # noqa: S608 - the schema's identifiers
        "WHERE tasks.workspace_id = u.workspace_id AND tasks.id = u.id"
    )


def _flush_statement(shapes: tuple[tuple[str, ...], ...]) -> TextClause:
    """The held writes' one statement for tasks' touches of these column sets: the counters,
    the events and the tasks in data-modifying ``WITH`` parts, the subjects last (every part
    runs once and to completion, on one snapshot; they touch different rows)."""
    stmt = _flushes.get(shapes)
    if stmt is None:
        parts = [
            "moved AS (UPDATE workspaces SET last_sequence = u.seq, last_recorded_at = u.rec "
            "FROM unnest(CAST(:moved_id AS VARCHAR[]), CAST(:moved_seq AS BIGINT[]), "
            "CAST(:moved_rec AS BIGINT[])) AS u(id, seq, rec) WHERE workspaces.id = u.id)",
            f"appended AS ({_insert_sql(events, 'e_')})",
            *(f"touched{n} AS ({_touch_sql(f't{n}_', shape)})" for n, shape in enumerate(shapes)),
        ]
        sql = f"WITH {', '.join(parts)} {_insert_sql(event_subjects, 's_')}"
        if len(_flushes) >= _FLUSHES_LIMIT:
            _flushes.clear()
        stmt = _flushes[shapes] = text(sql)
    return stmt


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
