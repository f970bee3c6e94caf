"""The single writer: every write job runs here, many jobs per transaction (group commit).

SQLite allows one writer at a time and pays for durability per commit, so jobs that queue up
while a transaction runs share the next one. A job is a plain synchronous function of a
``WriteTx``; the writer hands a whole batch to the database side in one call (SQLite: one hop
to the writer thread; PostgreSQL: one ``run_sync``), and resolves the callers' futures and
calls the commit listeners back on the event loop, after COMMIT.

Batches are optimistic. Jobs run one after another with no savepoint between them; a job that
raises before it wrote anything simply fails alone. If a job raises after writing (or leaves
an append half done), or the database reports any error (on PostgreSQL an error aborts the
whole transaction), the transaction is rolled back and the batch runs again with a savepoint
per job: the failing job then fails alone and the others commit. Jobs must therefore be
re-runnable: a pure function of the transaction, with no effects outside it. (The optimistic
pass also appends without first looking the event id up: a resent id fails the INSERT on the
unique id, and the re-run, which does look, answers it as the duplicate it is.)

A caller's future resolves only after COMMIT succeeded; if COMMIT fails, every job that had
succeeded gets ``Unavailable`` (retryable — nothing was written). PostgreSQL uses the same
writer per process; across processes (hub nodes) each transaction first takes the
``write_lock`` row, so writer transactions never deadlock, and the workspace row lock keeps
sequences gap-free.

Jobs queue in lanes — one per agent connection, say — and each batch takes at most
``lane_share`` jobs from a lane, lanes in turn. An agent with hundreds of frames in flight
thus fills the batches only when nobody else is waiting: a request that arrives behind its
burst rides in the next (short) batch instead of after the whole burst. Jobs of one lane keep
their order.

A job must not call ``Store.write`` itself (refused: it could only wait for its own batch),
and should do no I/O besides the database: it runs while the transaction holds the write lock.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import Executable, bindparam, update
from sqlalchemy.engine import Connection, Result
from sqlalchemy.exc import DBAPIError, OperationalError

from lineup.protocol.errors import Unavailable
from lineup.store import eventlog, statements
from lineup.store.engines import db_errors
from lineup.store.eventlog import AppendResult, NewEvent, Sent, StoredEvent
from lineup.store.queries import Reader
from lineup.store.schema import WRITE_LOCK_ID, write_lock

log = logging.getLogger(__name__)

T = TypeVar("T")
Clock = Callable[[], int]
CommitListener = Callable[[Sequence[StoredEvent]], None]
Job = Callable[["WriteTx"], T]


class RunOnWriter(Protocol):
    """Runs a synchronous function on the writer's connection (``engines.Backend.run_writer``)."""

    def __call__(self, fn: Callable[[Connection], T], /) -> Awaitable[T]: ...


DEFAULT_MAX_BATCH = 256
DEFAULT_LANE_SHARE = 32
"""A lane's most jobs per batch: small enough that a batch of one agent's burst commits in a
few milliseconds, large enough that eight busy agents still fill a batch."""

_in_job: contextvars.ContextVar[bool] = contextvars.ContextVar("lineup_store_in_job", default=False)


class WriteTx(Reader):
    """What a write job gets: append, the reads the hub needs while deciding, and raw SQL.

    The reads see the transaction's own uncommitted work. ``append``, ``execute`` and
    ``connection`` count as writing (see the module docstring for why that matters).
    """

    def __init__(self, conn: Connection, clock: Clock, *, isolated: bool = False) -> None:
        super().__init__(conn)
        self._clock = clock
        self._isolated = isolated
        self._appended: list[StoredEvent] = []
        self._open = True
        self.wrote = False
        """The job may have changed something: its failure needs a rollback."""
        self.torn = False
        """An append failed part-way: even if the job carries on, only a rollback undoes it."""

    @property
    def optimistic(self) -> bool:
        """True in a batch's first pass, where a resent event id surfaces as a failed INSERT
        (``Conflict``) rather than as a duplicate; a job that looks the id up itself can skip
        that lookup here and do it only when its command fails."""
        return not self._isolated

    @property
    def connection(self) -> Connection:
        """For ``lineup.store.auth`` and anything else not covered here; counts as writing."""
        self._check_open()
        self.wrote = True
        return self._conn

    def append(self, event: NewEvent, *, fingerprint: str | None = None) -> AppendResult:
        """Append ``event`` (idempotent by its sender's id) and apply its projection;
        ``fingerprint`` digests what the sender sent (see ``eventlog.append``)."""
        self._check_open()
        self.wrote = True
        if self._isolated:
            # In a job's own savepoint already; this one makes the append all-or-nothing
            # even for a job that catches its error and carries on.
            with self._conn.begin_nested():
                result = eventlog.append(
                    self._conn, event, now_ms=self._clock(), fingerprint=fingerprint
                )
        else:
            # Optimistic: a resent id fails the INSERT, and the isolated re-run answers it.
            try:
                result = eventlog.append(
                    self._conn,
                    event,
                    now_ms=self._clock(),
                    check_duplicate=False,
                    fingerprint=fingerprint,
                )
            except BaseException:
                self.torn = True
                raise
        if not result.duplicate:
            self._appended.append(result.event)
        return result

    def find_event(self, workspace_id: str, sender: str, event_id: str) -> Sent | None:
        """The event ``sender`` recorded under this id: the idempotency check before a command."""
        self._check_open()
        return eventlog.find_event(self._conn, workspace_id, sender, event_id)

    def execute(self, stmt: Executable, params: Any = None) -> Result[Any]:
        self._check_open()
        self.wrote = True
        return self._conn.execute(stmt, params)

    def close(self) -> None:
        self._open = False

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("a WriteTx is only valid inside its job")


@dataclass
class WriterStats:
    """Counters for tests and metrics; ``transactions_committed < jobs_committed`` is batching.

    ``batches_isolated`` counts batches that ran a second time with a savepoint per job.
    """

    transactions_committed: int = 0
    jobs_committed: int = 0
    jobs_failed: int = 0
    batches_failed: int = 0
    batches_isolated: int = 0
    largest_batch: int = 0


@dataclass(eq=False)
class _Job(Generic[T]):
    fn: Job[T]
    future: asyncio.Future[T]
    ok: bool = False
    result: Any = None
    error: Exception | None = None
    events: list[StoredEvent] = field(default_factory=list)

    def reset(self) -> None:
        self.ok = False
        self.result = None
        self.error = None
        self.events = []


class _Isolate(Exception):
    """Roll back the optimistic attempt and run the batch again, a savepoint per job."""


class Writer:
    def __init__(
        self,
        run_on_writer: RunOnWriter,
        *,
        clock: Clock,
        max_batch: int = DEFAULT_MAX_BATCH,
        lane_share: int = DEFAULT_LANE_SHARE,
    ) -> None:
        self._run_on_writer = run_on_writer
        self._clock = clock
        self._max_batch = max_batch
        self._lane_share = max(1, lane_share)
        self._lanes: dict[Hashable, deque[_Job[Any]]] = {}
        """Queued jobs by lane, in the order lanes are served next (a dict keeps it)."""
        self._running: list[_Job[Any]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._listeners: list[CommitListener] = []
        self.stats = WriterStats()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="lineup-store-writer"
            )

    def submit(self, fn: Job[T], lane: Hashable | None = None) -> Awaitable[T]:
        """Queue ``fn`` in ``lane`` (its own if none); refused at once (not when awaited) from
        inside a write job."""
        if _in_job.get():
            raise RuntimeError("Store.write called from inside a write job; use its WriteTx")
        return self._enqueue(fn, lane)

    async def flush(self) -> None:
        """Wait until everything queued before this call has committed (or failed)."""
        waiting = [j.future for j in self._running]
        waiting.extend(j.future for lane in self._lanes.values() for j in lane)
        if waiting:
            await asyncio.wait(waiting)

    async def close(self) -> None:
        """Refuse new work, finish what is queued, stop."""
        if not self._closed:
            self._closed = True
            self._wake.set()
        if self._task is not None:
            await self._task

    @property
    def queued(self) -> int:
        """Jobs waiting for a batch (not counting the one running)."""
        return sum(len(queued) for queued in self._lanes.values())

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        """Call ``listener`` after each COMMIT with the new events in commit order (fan-out).

        Listeners run on the event loop, in the writer task, before callers resume: keep them
        quick and non-blocking (e.g. put onto a queue). Exceptions are logged, not raised.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def _enqueue(self, fn: Job[T], lane: Hashable | None) -> T:
        if self._closed:
            raise Unavailable("the store is closed")
        if self._task is not None and self._task.done():
            raise Unavailable("the store writer stopped")
        self.start()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        job: _Job[T] = _Job(fn, future)
        key: Hashable = job if lane is None else lane
        queued = self._lanes.get(key)
        if queued is None:
            self._lanes[key] = deque((job,))
        else:
            queued.append(job)
        self._wake.set()
        return await future

    # --- the writer task (event loop) ------------------------------------------------------

    def _next_batch(self) -> list[_Job[Any]]:
        """Up to ``lane_share`` jobs of each lane in turn; a lane served goes to the back."""
        batch: list[_Job[Any]] = []
        for key in list(self._lanes):
            room = self._max_batch - len(batch)
            if room <= 0:
                break
            queued = self._lanes.pop(key)
            for _ in range(min(room, self._lane_share, len(queued))):
                batch.append(queued.popleft())
            if queued:
                self._lanes[key] = queued
        return batch

    async def _run(self) -> None:
        try:
            while True:
                if not self._lanes:
                    if self._closed:
                        return
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                self._running = self._next_batch()
                await self._run_batch(self._running)
                self._running = []
        finally:
            # Cancelled or crashed: no caller may wait forever.
            leftovers = list(self._running)
            for queued in self._lanes.values():
                leftovers.extend(queued)
            self._lanes.clear()
            for job in leftovers:
                if not job.future.done():
                    job.future.set_exception(Unavailable("the store writer stopped"))

    async def _run_batch(self, batch: list[_Job[Any]]) -> None:
        work = [j for j in batch if not j.future.cancelled()]
        if work:
            try:
                isolated = await self._run_on_writer(lambda conn: self._execute(conn, work))
            except Exception as exc:
                self._fail_batch(work, exc)
            else:
                self._committed(work, isolated=isolated)

    def _committed(self, work: list[_Job[Any]], *, isolated: bool) -> None:
        stats = self.stats
        stats.transactions_committed += 1
        stats.batches_isolated += isolated
        stats.largest_batch = max(stats.largest_batch, len(work))
        new_events = [e for j in work if j.ok for e in j.events]
        if new_events:
            for listener in list(self._listeners):
                try:
                    listener(new_events)
                except Exception:
                    log.exception("store commit listener failed")
        for job in work:
            if job.ok:
                stats.jobs_committed += 1
                if not job.future.done():
                    job.future.set_result(job.result)
            else:
                stats.jobs_failed += 1
                if not job.future.done():
                    assert job.error is not None
                    job.future.set_exception(job.error)

    def _fail_batch(self, work: list[_Job[Any]], exc: Exception) -> None:
        log.warning("store batch of %d jobs failed: %r", len(work), exc)
        self.stats.batches_failed += 1
        for job in work:
            if not job.future.done():
                if job.ok or job.error is None:
                    error = Unavailable("the database did not commit; nothing was written, retry")
                    error.__cause__ = exc
                    job.future.set_exception(error)
                else:
                    job.future.set_exception(job.error)

    # --- the batch (database side: the writer thread, or a greenlet on PostgreSQL) ---------

    def _execute(self, conn: Connection, work: list[_Job[Any]]) -> bool:
        """Run and commit the batch; returns whether it had to run isolated.

        Touches only the jobs' own fields, never their futures: on SQLite this runs in the
        writer thread.
        """
        token = _in_job.set(True)
        try:
            try:
                self._attempt(conn, work, isolated=False)
                return False
            except _Isolate:
                pass  # rolled back; run again, each job in its own savepoint
            self._attempt(conn, work, isolated=True)
            return True
        finally:
            _in_job.reset(token)

    def _attempt(self, conn: Connection, work: list[_Job[Any]], *, isolated: bool) -> None:
        for job in work:
            job.reset()
        with conn.begin():
            _take_write_lock(conn)
            for job in work:
                self._run_job(conn, job, isolated=isolated)

    def _run_job(self, conn: Connection, job: _Job[Any], *, isolated: bool) -> None:
        assert job.fn is not None
        tx = WriteTx(conn, self._clock, isolated=isolated)
        errors_before = db_errors(conn)
        savepoint = conn.begin_nested() if isolated else None
        try:
            result = job.fn(tx)
        except Exception as exc:
            if savepoint is not None:
                # If the savepoint cannot be rolled back the connection is broken; that
                # ends the batch (raises out), and the whole transaction is rolled back.
                savepoint.rollback()
            elif tx.wrote or db_errors(conn) != errors_before:
                raise _Isolate from exc
            job.error = _translate(exc)
        else:
            if savepoint is not None:
                savepoint.commit()
            elif tx.torn or db_errors(conn) != errors_before:
                raise _Isolate
            job.ok = True
            job.result = result
            job.events = tx._appended
        finally:
            tx.close()


_TAKE_WRITE_LOCK = (
    update(write_lock)
    .where(write_lock.c.id == bindparam("lock_id"))
    .values(batches=write_lock.c.batches + 1)
)


def _take_write_lock(conn: Connection) -> None:
    """Serialise writer transactions across processes (see ``schema.write_lock``)."""
    result = statements.run(conn, _TAKE_WRITE_LOCK, {"lock_id": WRITE_LOCK_ID})
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
