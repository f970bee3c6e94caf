"""Brief reads: a lookup or two by key, run where it costs least under load — on SQLite on
the event loop's thread (no hop to a reader thread), on PostgreSQL outside a transaction (no
round trips for BEGIN and COMMIT). They see what was committed, and they cannot write."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from lineup.store import Reader, Store

from .factory import create_workspace, note


async def test_a_brief_read_sees_what_was_committed(store: Store) -> None:
    ws = await create_workspace(store)
    for i in range(3):
        await store.append(note(ws, i))
        assert await store.read(lambda r: r.last_sequence(ws), brief=True) == i + 2
    assert await store.read(lambda r: r.last_sequence("no-such-workspace"), brief=True) == 0


async def test_a_brief_read_cannot_write(store: Store) -> None:
    ws = await create_workspace(store)

    def writes(r: Reader) -> None:
        r.connection.execute(
            text("UPDATE workspaces SET last_sequence = 99 WHERE id = :w"), {"w": ws}
        )

    with pytest.raises(DBAPIError):
        await store.read(writes, brief=True)
    assert await store.last_sequence(ws) == 1
    # the connection it used reads on as before
    assert await store.read(lambda r: r.last_sequence(ws), brief=True) == 1


async def test_where_brief_and_other_reads_run(store: Store) -> None:
    """SQLite: a brief read on the loop's thread, any other in a reader thread. PostgreSQL:
    both on the loop (the driver), a brief one outside any transaction, another inside one
    (its snapshot)."""

    def where(r: Reader) -> tuple[str, bool]:
        r.connection.execute(text("SELECT 1"))  # the adapter begins before a first statement
        driver = r.connection.connection.driver_connection
        in_transaction = (
            driver.in_transaction if store.dialect == "sqlite" else driver.is_in_transaction()  # type: ignore[union-attr]
        )
        return threading.current_thread().name, bool(in_transaction)

    here = threading.current_thread().name
    thread, began = await store.read(where)
    brief_thread, brief_began = await store.read(where, brief=True)
    assert brief_thread == here
    if store.dialect == "sqlite":
        assert thread.startswith("lineup-sqlite-reader")
        assert began and brief_began  # SQLite's BEGIN costs no round trip
    else:
        assert thread == here
        assert began and not brief_began
