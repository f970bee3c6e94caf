"""A pooled PostgreSQL connection left inside a transaction is never handed out again.

A task cancelled while its BEGIN is in flight (a dropped request, an agent's socket closed
mid-replay) leaves asyncpg's transaction begun and SQLAlchemy's adapter unaware of it, so
nothing ends it at check-in. Handed out again, the next read's BEGIN became a savepoint
inside it: the reader saw the database as it was then, and a task or a message the person
had just created was "not found"."""

from __future__ import annotations

import pytest
from sqlalchemy import make_url

from lineup.store import Reader, Store
from lineup.store.engines import PostgresBackend

from .factory import create_workspace, note


async def test_a_reader_left_inside_a_transaction_is_replaced_and_sees_new_writes(
    store: Store, database_url: str
) -> None:
    if store.dialect != "postgresql":
        pytest.skip("SQLite's readers begin their transactions in the reader thread itself")
    ws = await create_workspace(store)
    await store.append(note(ws))
    # one pooled reader, so the next read checks out the connection left behind below
    backend = PostgresBackend(make_url(database_url), read_pool_size=1)
    try:
        async with backend.reader.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            # the state a read cancelled during its BEGIN leaves: the transaction begun on
            # the driver, its snapshot taken, and the adapter not knowing
            await driver.transaction(isolation="repeatable_read", readonly=True).start()
            await driver.fetchval("SELECT last_sequence FROM workspaces WHERE id = $1", ws)
        before = await backend.run_reader(lambda c: Reader(c).last_sequence(ws))
        await store.append(note(ws))
        after = await backend.run_reader(lambda c: Reader(c).last_sequence(ws))
        assert after == before + 1, "a read after a commit sees it"
        raw_after = await _pooled_driver(backend)
        assert raw_after is not driver, "the connection left in a transaction was replaced"
    finally:
        await backend.dispose()


async def _pooled_driver(backend: PostgresBackend) -> object:
    async with backend.reader.connect() as conn:
        raw = await conn.get_raw_connection()
        return raw.driver_connection
