"""Where the store's synchronous database code runs: the writer's connections, a pool of readers.

Every query in the store is plain synchronous SQLAlchemy over a ``Connection``; a backend
runs such a function for the event loop and hands back its result:

- SQLite (pysqlite): the writer is a dedicated thread owning the one writer connection, so a
  whole batch of write jobs costs one hop between the event loop and that thread (a batch of
  a few brief jobs runs on the event loop's thread instead, while that thread is idle), and
  a second thread copies the WAL back beside it (``_Checkpointer``); readers are a small
  pool of connections used from a thread pool of the same size (WAL lets them read while
  the writer writes). The driver's own transaction handling is switched off (it cannot
  do savepoints reliably) and we emit BEGIN ourselves: ``BEGIN IMMEDIATE`` for the writer,
  so it takes the write lock up front instead of failing on upgrade, and a deferred
  ``BEGIN`` for readers, which in WAL mode gives each read transaction a snapshot. A brief
  read (a few indexed lookups) runs on the event loop's thread, on a connection of its own:
  under load the hop to a reader thread and back (a turn at the interpreter lock, then one
  of the loop's) took several times what the lookups do.
- PostgreSQL (asyncpg): the same synchronous code runs on the event loop's thread through
  ``AsyncConnection.run_sync`` (greenlets); the writer has ``writer_connections`` of its own,
  one per shard (``lineup.store.writer``), so batches of different workspaces are in the
  database at once; readers use REPEATABLE READ read-only transactions, again for one
  snapshot per read transaction. A brief read runs without a transaction (autocommit, each
  statement on a snapshot of its own), a round trip per statement and none for BEGIN and
  COMMIT: a round trip is a turn of a busy event loop.

``sqlite:///path``, ``sqlite+pysqlite:///path`` and ``sqlite+aiosqlite:///path`` all name
the same thing: a SQLite file used through the standard library's driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import SimpleQueue
from typing import Any, Protocol, TypeVar

import asyncpg
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import URL, Connection, Engine, ExceptionContext, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from lineup.protocol.errors import InvalidArgument

T = TypeVar("T")

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 5000
CHECKPOINT_CALLS = 32
"""Writer calls between two of the checkpointer's passes: a progress report adds some 15
pages to the WAL, so the writer's own checkpoint, at SQLite's usual 1,000 pages, finds
nearly all of them copied already."""
SUPPORTED_DRIVERS = ("sqlite", "sqlite+pysqlite", "sqlite+aiosqlite", "postgresql+asyncpg")
_SQLITE_DRIVER = "sqlite+pysqlite"

DB_ERRORS = "lineup_db_errors"
"""Key in ``Connection.info``: how many database errors that connection has raised.

A write job may catch a database error itself; on PostgreSQL the transaction is aborted all
the same, so the writer compares this count before and after each job (see ``writer``)."""


def parse_url(url: str | URL) -> URL:
    """The URL the store will use; SQLite URLs are normalised to the pysqlite driver."""
    parsed = make_url(url)
    if parsed.drivername not in SUPPORTED_DRIVERS:
        raise InvalidArgument(
            f"unsupported database URL scheme {parsed.drivername!r}; "
            f"use one of {', '.join(SUPPORTED_DRIVERS)}"
        )
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            # The writer and the readers hold separate connections: they must share a file.
            raise InvalidArgument(
                "SQLite needs a database file; in-memory databases are not shared"
            )
        parsed = parsed.set(drivername=_SQLITE_DRIVER)
    return parsed


def db_errors(conn: Connection) -> int:
    count: int = conn.info.get(DB_ERRORS, 0)
    return count


class Backend(Protocol):
    """Runs synchronous database code for the event loop."""

    @property
    def writer_connections(self) -> int:
        """How many ``run_writer`` calls may be in the database at once."""
        ...

    async def run_writer(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        """``fn`` on a writer connection, outside any transaction (``fn`` begins its own).

        ``brief``: ``fn`` is short (a few statements), so a backend that would hand it to
        a thread may run it on the event loop's thread instead."""
        ...

    async def run_reader(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        """``fn`` on a reader connection inside one read-only transaction (one snapshot).

        ``brief``: ``fn`` is a few indexed lookups that need no snapshot in common (each may
        see a later moment than the one before), run as cheaply as the backend can."""
        ...

    async def dispose(self) -> None: ...


def create_backend(url: URL, *, read_pool_size: int = 4, writer_connections: int = 1) -> Backend:
    """``writer_connections`` counts on PostgreSQL only: SQLite has one writer."""
    if url.get_backend_name() == "sqlite":
        return SQLiteBackend(url, read_pool_size=read_pool_size)
    return PostgresBackend(
        url, read_pool_size=read_pool_size, writer_connections=writer_connections
    )


def _count_errors(engine: Engine) -> None:
    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        if context.connection is not None:
            info = context.connection.info
            info[DB_ERRORS] = info.get(DB_ERRORS, 0) + 1


# --- SQLite --------------------------------------------------------------------------------


class SQLiteBackend:
    def __init__(self, url: URL, *, read_pool_size: int) -> None:
        assert url.database is not None
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        self.writer = sqlite_engine(url, writer=True, pool_size=1)
        self.reader = sqlite_engine(url, writer=False, pool_size=read_pool_size)
        # the loop's thread runs one brief read at a time: one connection, never waited for
        self.loop_reader = sqlite_engine(url, writer=False, pool_size=1)
        self._write_thread = _WriterThread(self.writer)
        self._checkpointer = _Checkpointer(url.database)
        self._read_threads = ThreadPoolExecutor(
            read_pool_size, thread_name_prefix="lineup-sqlite-reader"
        )

    @property
    def writer_connections(self) -> int:
        return 1

    async def run_writer(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        self._checkpointer.wrote()
        if brief and self._write_thread.idle:
            return self._write_thread.run_here(fn)
        return await self._write_thread.submit(fn)

    async def run_reader(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        if brief:
            with self.loop_reader.connect() as conn, conn.begin():
                return fn(conn)

        def call() -> T:
            with self.reader.connect() as conn, conn.begin():
                return fn(conn)

        return await asyncio.get_running_loop().run_in_executor(self._read_threads, call)

    async def dispose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._write_thread.stop)
        await loop.run_in_executor(None, self._checkpointer.stop)
        self.writer.dispose()
        self.loop_reader.dispose()
        await loop.run_in_executor(self._read_threads, self.reader.dispose)
        self._read_threads.shutdown(wait=True)


class _WriterThread:
    """The one thread that writes a SQLite file, and the writer's connection it holds.

    A call costs a hand-over each way — onto a queue, and back through
    ``call_soon_threadsafe`` — and nothing else: no pool checkout and check-in (whose reset
    is a ROLLBACK) and no ``concurrent.futures`` future per call, which at one commit per
    report were a tenth of this thread's time. After a call that raised, or one that left a
    transaction open, the connection goes back to the pool (which rolls it back) and the next
    call checks out a fresh one.

    A brief call may instead run on the event loop's thread (``run_here``) while the thread
    has nothing to do — every call handed to it has been answered, so it is waiting for the
    next and not touching the connection. At one report per batch that is a fifth less CPU
    than the hand-over, and half the latency: no thread switches, no turns at the
    interpreter lock between the two threads. Only brief calls: a long one would stop the
    loop.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: Connection | None = None
        self._handed = 0  # calls given to the thread and not yet answered on the loop
        self._calls: SimpleQueue[_WriterCall[Any] | None] = SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, name="lineup-sqlite-writer", daemon=True
        )
        self._thread.start()

    @property
    def idle(self) -> bool:
        return self._handed == 0

    def submit(self, fn: Callable[[Connection], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._handed += 1
        self._calls.put((fn, loop, future))
        return future

    def run_here(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` on this (the loop's) thread; only while ``idle``."""
        assert self._handed == 0, "the writer thread holds the connection"
        ok, value = self._call(fn)
        if not ok:
            raise value
        result: T = value
        return result

    def stop(self) -> None:
        """Finish the calls queued, close the connection, end the thread (blocks)."""
        self._calls.put(None)
        self._thread.join()

    def _call(self, fn: Callable[[Connection], Any]) -> tuple[bool, Any]:
        conn = self._conn
        try:
            if conn is None:
                conn = self._conn = self._engine.connect()
            outcome: tuple[bool, Any] = (True, fn(conn))
            if conn.in_transaction():
                self._let_go()
        except BaseException as exc:  # handed to the caller, as run_in_executor would
            outcome = (False, exc)
            self._let_go()
        return outcome

    def _let_go(self) -> None:
        """Back to the pool, which rolls it back; never raises (the thread must go on)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                log.warning("SQLite writer connection did not close cleanly", exc_info=True)

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            fn, loop, future = call
            outcome = self._call(fn)
            # a loop closed while the call ran has nobody waiting
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._settle, future, outcome)
        self._let_go()

    def _settle(self, future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
        self._handed -= 1
        if future.cancelled():
            return
        ok, value = outcome
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class _Checkpointer:
    """Copies SQLite's WAL back into the database beside the writer, on a connection and a
    thread of its own.

    SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that commit
    copies the pages back and syncs the files, some 7 ms on this project's machine, every
    60-odd progress reports at 1,000 a second, and every report behind it waits. This
    checkpointer copies them a little at a time as the writer goes (a PASSIVE checkpoint
    waits for nobody and holds up no writer), so that when the writer's own checkpoint
    comes it finds almost nothing left to copy (about 3 ms). The writer keeps that
    checkpoint because it alone lets the WAL start over: a checkpointer beside a writer that
    never pauses never sees the whole WAL copied at a moment when nothing is being added.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._since_pass = 0  # writer calls
        self._due = threading.Event()
        self._stopping = False
        self.passes = 0
        self._thread = threading.Thread(
            target=self._serve, name="lineup-sqlite-checkpoint", daemon=True
        )
        self._thread.start()

    def wrote(self) -> None:
        """The writer is given a call (event loop); every ``CHECKPOINT_CALLS``, a pass."""
        self._since_pass += 1
        if self._since_pass >= CHECKPOINT_CALLS:
            self._since_pass = 0
            self._due.set()

    def stop(self) -> None:
        """End the thread (blocks until a pass under way is done)."""
        self._stopping = True
        self._due.set()
        self._thread.join()

    def _serve(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._due.wait()
                self._due.clear()
                if self._stopping:
                    return
                try:
                    if conn is None:  # once the writer has made the file
                        conn = sqlite3.connect(self._path, isolation_level=None)
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error:
                    log.warning("SQLite WAL checkpoint failed", exc_info=True)
                self.passes += 1
        finally:
            if conn is not None:
                conn.close()


_WriterCall = tuple[Callable[[Connection], T], asyncio.AbstractEventLoop, "asyncio.Future[T]"]


def sqlite_engine(url: URL, *, writer: bool, pool_size: int) -> Engine:
    engine = create_engine(
        url.set(drivername=_SQLITE_DRIVER),
        pool_size=pool_size,
        max_overflow=0,
        # Connections move between the threads of a pool; each is used by one at a time.
        connect_args={"check_same_thread": False},
    )
    begin = "BEGIN IMMEDIATE" if writer else "BEGIN"

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            if not writer:
                cursor.execute("PRAGMA query_only = ON")
        finally:
            cursor.close()

    def do_begin(dbapi_connection: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(begin)
        finally:
            cursor.close()

    # Our BEGIN whenever SQLAlchemy begins a transaction. This dialect hook rather than a
    # "begin" event listener: any connection event listener makes every statement dispatch
    # the execute events, which costs some 10% of the append path. Each engine has its own
    # dialect object, so this changes only this engine.
    engine.dialect.do_begin = do_begin  # type: ignore[method-assign]
    _count_errors(engine)
    return engine


# --- PostgreSQL ----------------------------------------------------------------------------


class PostgresBackend:
    def __init__(self, url: URL, *, read_pool_size: int, writer_connections: int = 1) -> None:
        self._writer_connections = max(1, writer_connections)
        # one more than the shards: migrations and the odd maintenance call need not wait
        # No pre-ping: the adapter's costs three round trips (BEGIN, a query, ROLLBACK) per
        # checkout, once per writer batch and per read; a connection the server closed is
        # seen closed on our side once its socket reports it, and replaced at checkout
        # (_fresh_at_checkout).
        self.writer: AsyncEngine = create_async_engine(
            url,
            pool_size=self._writer_connections + 1,
            max_overflow=0,
            connect_args={"connection_class": WriterConnection},
        )
        _fresh_at_checkout(self.writer.sync_engine)
        self.reader: AsyncEngine = create_async_engine(
            url,
            pool_size=read_pool_size,
            max_overflow=read_pool_size,
            isolation_level="REPEATABLE READ",
            execution_options={"postgresql_readonly": True},
        )
        _fresh_at_checkout(self.reader.sync_engine)
        self.lookups: AsyncEngine = create_async_engine(
            url,
            pool_size=max(1, read_pool_size // 2),
            max_overflow=read_pool_size,
            isolation_level="AUTOCOMMIT",
            # what no transaction can mark read-only, the session does
            connect_args={"server_settings": {"default_transaction_read_only": "on"}},
        )
        _fresh_at_checkout(self.lookups.sync_engine)
        _count_errors(self.writer.sync_engine)

    @property
    def writer_connections(self) -> int:
        return self._writer_connections

    async def run_writer(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        async with self.writer.connect() as conn:
            return await conn.run_sync(fn)

    async def run_reader(self, fn: Callable[[Connection], T], *, brief: bool = False) -> T:
        if brief:
            async with self.lookups.connect() as conn:
                return await conn.run_sync(fn)
        async with self.reader.connect() as conn, conn.begin():
            return await conn.run_sync(fn)

    async def dispose(self) -> None:
        await self.writer.dispose()
        await self.reader.dispose()
        await self.lookups.dispose()


class WriterConnection(asyncpg.Connection):  # type: ignore[misc]
    """The writer's asyncpg connection: what a transaction does first (take its locks,
    check what it knows) can go with its BEGIN, in one round trip (``write_locks.take``),
    and what it does last (its held writes) with its COMMIT (``append_buffer``).

    SQLAlchemy's adapter begins a transaction lazily, before its first statement, through
    asyncpg's ``Transaction.start``, which sends ``BEGIN`` as a simple query. A simple query
    may hold several statements, each on a snapshot of its own under READ COMMITTED: set
    ``begin_with`` and the next ``BEGIN`` carries them, and ``began`` is the status of the
    last one (``SELECT <rows>``)."""

    begin_with: str | None = None
    began: str = ""
    commit_with: str | None = None
    """Statements that go before the transaction's COMMIT, in its round trip (a batch's held
    writes): dropped by anything else sent first (a ROLLBACK)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.flushes: dict[Any, str] = {}
        """The held writes' statements this session has prepared, by shape (``PREPARE``
        outlives any transaction; ``append_buffer.flush_at_commit``)."""

    async def execute(
        self,
        query: str,
        *args: Any,
        timeout: float | None = None,  # noqa: ASYNC109 - asyncpg's own signature
    ) -> str:
        then, first = self.begin_with, self.commit_with
        self.commit_with = None
        if then is not None and not args and query.startswith("BEGIN"):
            self.begin_with = None
            self.began = await super().execute(f"{query} {then}", timeout=timeout)
            return self.began
        if first is not None and not args and query == "COMMIT;":
            query = f"{first} {query}"
        status: str = await super().execute(query, *args, timeout=timeout)
        return status


def writer_connection(conn: Connection) -> WriterConnection | None:
    """The writer's asyncpg connection beneath ``conn``, or ``None`` (SQLite, a reader)."""
    driver = getattr(conn.connection.dbapi_connection, "driver_connection", None)
    return driver if isinstance(driver, WriterConnection) else None


def _fresh_at_checkout(engine: Engine) -> None:
    """Replace a pooled asyncpg connection before handing it out, as a pre-ping would but
    without a round trip, when its socket closed (the server restarted or ended the session)
    or when it was left inside a transaction.

    The second happens when a task is cancelled while its BEGIN is in flight (a request
    dropped, an agent's socket closed mid-replay): asyncpg's transaction has begun but
    SQLAlchemy's adapter never learnt so, and nothing ends it at check-in. The next user's
    BEGIN would then be a savepoint inside it — a reader held on an old snapshot, a writer
    whose commits never reach the database. Replacing the connection closes it, and the
    server rolls that transaction back."""

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        driver = dbapi_connection.driver_connection
        if driver.is_closed():
            raise DisconnectionError("the database closed this connection")
        if driver._top_xact is not None or driver.is_in_transaction():
            raise DisconnectionError("the connection was left inside a transaction")


def ping(conn: Connection) -> None:
    conn.execute(text("SELECT 1"))
