"""Statements run straight on the driver give what Connection.execute gives, errors included."""

from __future__ import annotations

import pytest
from sqlalchemy import bindparam, create_engine, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from lineup.store import Store, WriteTx, statements
from lineup.store.engines import db_errors
from lineup.store.schema import events, workspaces

from .factory import create_workspace, note

_EVENT = select(events).where(events.c.id == bindparam("id"))
_RENAME = (
    update(workspaces)
    .where(workspaces.c.id == bindparam("ws"))
    .values(name=bindparam("name"), last_sequence=workspaces.c.last_sequence + 0)
    .returning(workspaces.c.name, workspaces.c.last_sequence)
)
_INSERT = insert(events)


async def test_rows_and_counts_match_connection_execute(store: Store) -> None:
    ws = await create_workspace(store)
    stored = (await store.append(note(ws, 7))).event

    def job(tx: WriteTx) -> None:
        conn: Connection = tx.connection
        fast = statements.run(conn, _EVENT, {"id": stored.id})
        core = conn.execute(_EVENT, {"id": stored.id}).first()
        assert core is not None
        assert fast.rows == [dict(core._mapping)]
        assert fast.first() == dict(core._mapping)
        assert fast.first()["payload"] == {"n": 7}  # JSON decoded, as Core decodes it
        renamed = statements.run(conn, _RENAME, {"ws": ws, "name": "Renamed"})
        assert (renamed.rowcount, renamed.first()) == (
            1,
            {"name": "Renamed", "last_sequence": stored.sequence},
        )
        missing = statements.run(conn, _RENAME, {"ws": "nope", "name": "x"})
        assert (missing.rowcount, missing.first(), missing.scalar()) == (0, None, None)

    await store.write(job)
    workspace = await store.read(lambda r: r.get_workspace(ws))
    assert workspace is not None and workspace.name == "Renamed"


async def test_a_driver_error_is_raised_and_counted_as_connection_execute_would(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    stored = (await store.append(note(ws))).event
    row = {
        "workspace_id": ws,
        "sequence": stored.sequence + 1,
        "id": stored.id,  # taken: the events' id is unique
        "type": "test.note",
        "actor": "system",
        "conversation_id": None,
        "task_id": None,
        "correlation_id": None,
        "occurred_at": 0,
        "recorded_at": 0,
        "payload": {},
    }

    seen: list[int] = []

    class Done(Exception):
        pass

    def job(tx: WriteTx) -> None:
        conn = tx.connection
        before = db_errors(conn)
        try:
            statements.run(conn, _INSERT, row)
        except IntegrityError:
            seen.append(db_errors(conn) - before)
        raise Done  # roll back: on PostgreSQL the failed statement aborted the transaction

    with pytest.raises(Done):
        await store.write(job)
    # counted once per run (the writer re-runs a job that failed after writing, isolated)
    assert seen and set(seen) == {1}


def test_a_missing_parameter_is_named() -> None:
    engine = create_engine("sqlite://")
    with engine.connect() as conn, conn.begin(), pytest.raises(KeyError, match="'id'"):
        statements.run(conn, _EVENT, {})
