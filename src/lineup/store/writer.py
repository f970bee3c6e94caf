"""The single writer: every write job runs here, many jobs per transaction (group commit).

SQLite allows one writer at a time and pays for durability per commit, so jobs that queue up
while a transaction commits share the next one. Each job runs in its own savepoint: a job
that raises rolls back only its own work and its caller gets that exception. A caller's
future resolves only after COMMIT succeeded; if COMMIT fails, every job that had succeeded
gets ``Unavailable`` (retryable — nothing was written). PostgreSQL uses the same writer per
process; across processes (hub nodes) each transaction first takes the ``write_lock`` row,
so writer transactions never deadlock, and the workspace row lock keeps sequences gap-free.

A job must not call ``Store.write`` itself (it would wait for its own batch), and should do
no I/O besides the database: it runs while the transaction holds the write lock.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sqlalchemy import Executable, update
from sqlalchemy.engine import Result
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from lineup.protocol.errors import Unavailable
from lineup.store import eventlog
from lineup.store.eventlog import AppendResult, NewEvent, StoredEvent
from lineup.store.queries import Reader
from lineup.store.schema import WRITE_LOCK_ID, write_lock

log = logging.getLogger(__name__)

T = TypeVar("T")
Clock = Callable[[], int]
CommitListener = Callable[[Sequence[StoredEvent]], None]

DEFAULT_MAX_BATCH = 256

_in_job: contextvars.ContextVar[bool] = contextvars.ContextVar("lineup_store_in_job", default=False)


class WriteTx(Reader):
    """What a write job gets: append, the reads the hub needs while deciding, and raw SQL."""

    def __init__(self, conn: AsyncConnection, clock: Clock) -> None:
        super().__init__(conn)
        self._clock = clock
        self._appended: list[StoredEvent] = []
        self._open = True

    async def append(self, event: NewEvent) -> AppendResult:
        self._check_open()
        result = await eventlog.append(self._conn, event, now_ms=self._clock())
        if not result.duplicate:
            self._appended.append(result.event)
        return result

    async def execute(self, stmt: Executable, params: Any = None) -> Result[Any]:
        self._check_open()
        return await self._conn.execute(stmt, params)

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("a WriteTx is only valid inside its job")


@dataclass
class WriterStats:
    """Counters for tests and metrics; ``transactions_committed < jobs_committed`` is batching."""

    transactions_committed: int = 0
    jobs_committed: int = 0
    jobs_failed: int = 0
    batches_failed: int = 0
    largest_batch: int = 0


@dataclass
class _Job(Generic[T]):
    fn: Callable[[WriteTx], Awaitable[T]] | None  # None: a flush marker
    future: asyncio.Future[T]
    ok: bool = False
    result: Any = None
    events: list[StoredEvent] = field(default_factory=list)


_STOP = object()


class Writer:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        clock: Clock,
        max_batch: int = DEFAULT_MAX_BATCH,
    ) -> None:
        self._engine = engine
        self._clock = clock
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Job[Any] | object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._listeners: list[CommitListener] = []
        self.stats = WriterStats()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="lineup-store-writer"
            )

    async def submit(self, fn: Callable[[WriteTx], Awaitable[T]]) -> T:
        if _in_job.get():
            raise RuntimeError("Store.write called from inside a write job; use its WriteTx")
        return await self._enqueue(fn)

    async def flush(self) -> None:
        """Wait until everything queued before this call has committed (or failed)."""
        await self._enqueue(None)

    async def close(self) -> None:
        """Refuse new work, finish what is queued, stop."""
        if not self._closed:
            self._closed = True
            if self._task is not None:
                self._queue.put_nowait(_STOP)
        if self._task is not None:
            await self._task

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        """Call ``listener`` after each COMMIT with the new events in commit order (fan-out).

        Listeners run on the writer task before callers resume: keep them quick and
        non-blocking (e.g. put onto a queue). Exceptions are logged, not raised.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def _enqueue(self, fn: Callable[[WriteTx], Awaitable[T]] | None) -> T:
        if self._closed:
            raise Unavailable("the store is closed")
        if self._task is not None and self._task.done():
            raise Unavailable("the store writer stopped")
        self.start()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Job(fn, future))
        return await future

    # --- the writer task -------------------------------------------------------------------

    async def _run(self) -> None:
        batch: list[_Job[Any]] = []
        try:
            stopping = False
            while not stopping:
                item = await self._queue.get()
                batch = []
                while True:
                    if item is _STOP:
                        stopping = True
                        break
                    assert isinstance(item, _Job)
                    batch.append(item)
                    if len(batch) >= self._max_batch or self._queue.empty():
                        break
                    item = self._queue.get_nowait()
                if batch:
                    await self._run_batch(batch)
                batch = []
        finally:
            # Cancelled or crashed: no caller may wait forever.
            leftovers = list(batch)
            while not self._queue.empty():
                item = self._queue.get_nowait()
                if isinstance(item, _Job):
                    leftovers.append(item)
            for job in leftovers:
                if not job.future.done():
                    job.future.set_exception(Unavailable("the store writer stopped"))

    async def _run_batch(self, batch: list[_Job[Any]]) -> None:
        work = [j for j in batch if j.fn is not None and not j.future.cancelled()]
        if work:
            try:
                async with self._engine.connect() as conn, conn.begin():
                    await _take_write_lock(conn)
                    for job in work:
                        await self._run_job(conn, job)
            except Exception as exc:
                self._fail_batch(work, exc)
            else:
                self._committed(work)
        for job in batch:
            if job.fn is None and not job.future.done():
                job.future.set_result(None)

    async def _run_job(self, conn: AsyncConnection, job: _Job[Any]) -> None:
        assert job.fn is not None
        tx = WriteTx(conn, self._clock)
        savepoint = await conn.begin_nested()
        token = _in_job.set(True)
        try:
            job.result = await job.fn(tx)
        except Exception as exc:
            # If the savepoint cannot be rolled back the connection is broken; that ends
            # the batch (raises out), and the whole transaction is rolled back.
            await savepoint.rollback()
            self.stats.jobs_failed += 1
            if not job.future.done():
                job.future.set_exception(_translate(exc))
        else:
            await savepoint.commit()
            job.ok = True
            job.events = tx._appended
        finally:
            _in_job.reset(token)
            tx._open = False

    def _committed(self, work: list[_Job[Any]]) -> None:
        succeeded = [j for j in work if j.ok]
        self.stats.transactions_committed += 1
        self.stats.jobs_committed += len(succeeded)
        self.stats.largest_batch = max(self.stats.largest_batch, len(work))
        new_events = [e for j in succeeded for e in j.events]
        if new_events:
            for listener in list(self._listeners):
                try:
                    listener(new_events)
                except Exception:
                    log.exception("store commit listener failed")
        for job in succeeded:
            if not job.future.done():
                job.future.set_result(job.result)

    def _fail_batch(self, work: list[_Job[Any]], exc: Exception) -> None:
        log.warning("store batch of %d jobs failed: %r", len(work), exc)
        self.stats.batches_failed += 1
        error = Unavailable("the database did not commit; nothing was written, retry")
        error.__cause__ = exc
        for job in work:
            if not job.future.done():
                job.future.set_exception(error)


async def _take_write_lock(conn: AsyncConnection) -> None:
    """Serialise writer transactions across processes (see ``schema.write_lock``)."""
    result = await conn.execute(
        update(write_lock)
        .where(write_lock.c.id == WRITE_LOCK_ID)
        .values(batches=write_lock.c.batches + 1)
    )
    if result.rowcount != 1:
        raise Unavailable("the database schema is not migrated (no write_lock row)")


def _translate(exc: Exception) -> Exception:
    """Transient database trouble (lost connection, lock timeout, deadlock) is retryable."""
    if isinstance(exc, OperationalError):
        return _unavailable(exc)
    if isinstance(exc, DBAPIError):
        sqlstate = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
        if exc.connection_invalidated or (isinstance(sqlstate, str) and sqlstate[:2] == "40"):
            return _unavailable(exc)
    return exc


def _unavailable(exc: Exception) -> Unavailable:
    error = Unavailable("the database is busy or unreachable; retry")
    error.__cause__ = exc
    return error
