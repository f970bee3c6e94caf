"""SQLite's writer thread keeps one connection across calls, and never hands a later call a
connection that an earlier one left broken or inside a transaction."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import Connection, make_url, text

from lineup.store import engines
from lineup.store.engines import SQLiteBackend
from tests.support.waiting import until_async


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SQLiteBackend]:
    made = SQLiteBackend(make_url(f"sqlite:///{tmp_path / 'w.db'}"), read_pool_size=1)
    await made.run_writer(_create_table)
    yield made
    await made.dispose()


def _create_table(conn: Connection) -> None:
    with conn.begin():
        conn.execute(text("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"))


def _driver(conn: Connection) -> int:
    return id(conn.connection.driver_connection)


def _insert(body: str) -> Callable[[Connection], None]:
    def write(conn: Connection) -> None:
        with conn.begin():
            conn.execute(text("INSERT INTO notes (body) VALUES (:b)"), {"b": body})

    return write


def _bodies(conn: Connection) -> list[str]:
    return [row[0] for row in conn.execute(text("SELECT body FROM notes ORDER BY id"))]


async def test_calls_share_one_connection_in_order(backend: SQLiteBackend) -> None:
    first = await backend.run_writer(_driver)
    await asyncio.gather(*(backend.run_writer(_insert(f"n{i}")) for i in range(20)))
    assert await backend.run_writer(_driver) == first
    assert await backend.run_writer(_bodies) == [f"n{i}" for i in range(20)]


async def test_a_call_that_raises_reaches_its_caller_and_the_next_call_starts_clean(
    backend: SQLiteBackend,
) -> None:
    def fails_inside_a_transaction(conn: Connection) -> None:
        conn.begin()
        conn.execute(text("INSERT INTO notes (body) VALUES ('never committed')"))
        raise LookupError("the job's own error")

    with pytest.raises(LookupError, match="the job's own error"):
        await backend.run_writer(fails_inside_a_transaction)
    await backend.run_writer(_insert("after"))
    assert await backend.run_writer(_bodies) == ["after"]
    assert await backend.run_writer(lambda c: c.in_transaction()) is False


async def test_a_call_that_leaves_a_transaction_open_does_not_lend_it_to_the_next(
    backend: SQLiteBackend,
) -> None:
    def leaves_it_open(conn: Connection) -> None:
        conn.begin()
        conn.execute(text("INSERT INTO notes (body) VALUES ('left open')"))

    await backend.run_writer(leaves_it_open)
    assert await backend.run_writer(lambda c: c.in_transaction()) is False
    assert await backend.run_writer(_bodies) == []


async def test_a_cancelled_caller_does_not_stop_the_thread(backend: SQLiteBackend) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def slow(conn: Connection) -> None:
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result(timeout=10)
        _insert("slow")(conn)

    waiting = asyncio.ensure_future(backend.run_writer(slow))
    await started.wait()
    waiting.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await backend.run_writer(_bodies) == ["slow"]


async def test_dispose_finishes_what_was_queued(tmp_path: Path) -> None:
    made = SQLiteBackend(make_url(f"sqlite:///{tmp_path / 'q.db'}"), read_pool_size=1)
    await made.run_writer(_create_table)
    queued = [asyncio.ensure_future(made.run_writer(_insert(f"q{i}"))) for i in range(5)]
    await asyncio.sleep(0)  # every call on the thread's queue before it is told to stop
    await made.dispose()
    await asyncio.gather(*queued)
    again = SQLiteBackend(make_url(f"sqlite:///{tmp_path / 'q.db'}"), read_pool_size=1)
    try:
        assert await again.run_writer(_bodies) == [f"q{i}" for i in range(5)]
    finally:
        await again.dispose()


def _thread_name(conn: Connection) -> str:
    return threading.current_thread().name


async def test_a_brief_call_runs_on_the_loop_only_while_the_thread_has_nothing(
    backend: SQLiteBackend,
) -> None:
    assert await backend.run_writer(_thread_name, brief=True) == threading.current_thread().name
    assert await backend.run_writer(_thread_name) == "lineup-sqlite-writer"

    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow(conn: Connection) -> str:
        started.set()
        release.wait(10)
        _insert("slow")(conn)
        order.append("slow")
        return threading.current_thread().name

    def brief(conn: Connection) -> str:
        _insert("brief")(conn)
        order.append("brief")
        return threading.current_thread().name

    slow_call = asyncio.ensure_future(backend.run_writer(slow))
    await asyncio.to_thread(started.wait, 10)
    brief_call = asyncio.ensure_future(backend.run_writer(brief, brief=True))
    await asyncio.sleep(0)
    assert order == []  # queued behind the slow call, not run beside it on the loop
    release.set()
    assert await slow_call == await brief_call == "lineup-sqlite-writer"
    assert order == ["slow", "brief"]
    assert await backend.run_writer(_bodies, brief=True) == ["slow", "brief"]


async def test_the_wal_is_copied_back_beside_a_busy_writer_and_stays_bounded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    made = SQLiteBackend(make_url(f"sqlite:///{path}"), read_pool_size=1)
    try:
        await made.run_writer(_create_table)
        started, release = threading.Event(), threading.Event()

        def hold(conn: Connection) -> None:
            started.set()
            release.wait(10)

        held = asyncio.ensure_future(made.run_writer(hold))
        await asyncio.to_thread(started.wait, 10)
        passes = made._checkpointer.passes
        queued = [
            asyncio.ensure_future(made.run_writer(_insert(f"q{i}")))
            for i in range(engines.CHECKPOINT_CALLS)
        ]
        # the pass runs on a connection of its own, while the writer is still held
        await until_async(lambda: made._checkpointer.passes > passes, "a checkpoint pass")
        assert not held.done()
        release.set()
        await asyncio.gather(held, *queued)

        for i in range(600):  # a page or more each: 600 pages of WAL if nothing copied back
            await made.run_writer(_insert(f"{i:05d}" + "x" * 5000), brief=i % 2 == 0)
        wal_pages = path.with_name("c.db-wal").stat().st_size // 4096
        assert wal_pages < 1_500  # the writer's checkpoint, at 1,000 pages, starts it over
        assert len(await made.run_writer(_bodies)) == 600 + engines.CHECKPOINT_CALLS
    finally:
        await made.dispose()
