"""The writer: every write job runs here, many jobs per transaction (group commit), in shards.

A database pays for durability per commit, so jobs that queue up while a transaction runs
share the next one. A job is a plain synchronous function of a ``WriteTx``; the writer hands a
whole batch to the database side in one call (SQLite: one hop to the writer thread;
PostgreSQL: one ``run_sync``), and resolves the callers' futures and calls the commit
listeners back on the event loop, after COMMIT.

**Shards.** A job names the workspaces it writes (``lineup.store.write_locks``), or none and
then may write anything. The writer keeps ``shards`` queues, each with its own task and, on
PostgreSQL, its own connection: a job goes to the shard of its (lowest) workspace, so
transactions of different workspaces run at once and their commits share the log's flush.
Each transaction first takes advisory locks on what its batch writes (shared global key, then
each workspace's key in one order; the global key alone, exclusive, when a job named no
workspace): sequences stay gap-free per workspace with any number of shards and hub nodes,
and nothing deadlocks on those keys. A job that writes anything outside its workspaces —
users, sessions, notification state, leases — must not name them, so it runs alone in the
cluster, which is what every read-then-write on those rows relies on. ``WriteTx.append``
refuses an event for a workspace the job did not name, and facts that write rows workspaces
share (``member.joined``) outside a global job. SQLite has one shard:
it has one writer anyway.

**Batches are optimistic.** Jobs run one after another with no savepoint between them; a job
that raises before it wrote anything simply fails alone. If a job raises after writing (or
leaves an append half done), or the database reports any error (on PostgreSQL an error aborts
the whole transaction), the transaction is rolled back and the batch runs again with a
savepoint per job: the failing job then fails alone and the others commit. Jobs must therefore
be re-runnable: a pure function of the transaction, with no effects outside it. (The
optimistic pass also appends without first looking the event id up: a resent id fails the
INSERT on the unique id, and the re-run, which does look, answers it as the duplicate it is.)

**Round trips (PostgreSQL).** A batch's BEGIN carries its locks and a check of the counters
its shard's last commit left (``write_locks.take``); when they still hold, the batch counts
on from them and from the task rows that commit left (``lineup.store.shard_memory``). Its
held appends ride with its COMMIT (``append_buffer``): a lone agent report is two round
trips.

A caller's future resolves only after COMMIT succeeded; if COMMIT fails, every job that had
succeeded gets ``Unavailable`` (retryable — nothing was written).

**Fairness.** Within a shard jobs queue in lanes — one per agent connection, say — grouped by
the workspace they write. A batch takes the workspaces in turn, each at most its share of the
batch (``max_batch`` over the workspaces waiting, and never less than ``lane_share``), and
within a workspace at most ``lane_share`` jobs of a lane, lanes in turn; the workspaces' jobs
are then interleaved, one of each in turn, so every workspace's first jobs come first.
Whatever was served goes to the back.

A batch commits when its last job has run, so a request waits for the batch running when it
arrived and then for its own: a batch of a flood's frames is what it would wait for. Two
rules keep both short for a quiet workspace — one with fewer than ``lane_share`` jobs
waiting. **Slices**: while a quiet workspace with no job in the running batch has jobs
waiting (it arrived meanwhile, or did not fit), a batch that has run for ``batch_slice``
seconds stops before its next job and commits what ran; the jobs it did not reach go back
to the front of their lanes and their workspaces to the front of the turn, so they open the
next batch. **Short shares**: when one workspace waiting has fewer than ``lane_share`` jobs
and another more, each takes at most ``lane_share`` of the next batch.
A lone flood, or many workspaces equally busy, still commit in full batches (group commit is
what makes them fast); a quiet workspace's single request waits for about one slice and one
lane share of a flood. One lane alone in its shard (one agent's stream) may fill a whole
batch; a job of any other lane arriving meanwhile slices it as above. A lane stays on one
shard and one group while it has jobs queued, so jobs of one lane keep their order.

**Turns of the event loop.** On PostgreSQL a batch's jobs run on the event loop's thread
(through the driver's greenlets), and held writes leave them nothing to wait for: a batch of a
flood would hold the loop for tens of milliseconds, and every request on the node with it.
So a batch gives the loop a turn every ``loop_turn_every`` seconds between two jobs, inside
its transaction; a quiet workspace's job that arrived meanwhile slices the batch there.

A job must not call ``Store.write`` itself (refused: it could only wait for its own batch),
and should do no I/O besides the database: it runs while the transaction holds its locks.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import Executable
from sqlalchemy.engine import Connection, Result
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.util import await_only

from lineup.protocol.errors import Unavailable
from lineup.store import append_buffer, eventlog, task_rows, write_locks
from lineup.store.engines import db_errors, writer_connection
from lineup.store.eventlog import AppendResult, NewEvent, Sent, StoredEvent
from lineup.store.queries import Reader
from lineup.store.records import Task
from lineup.store.shard_memory import ShardMemory, TaskKey
from lineup.store.write_locks import GLOBAL, Scope

log = logging.getLogger(__name__)

T = TypeVar("T")
Clock = Callable[[], int]
CommitListener = Callable[[Sequence[StoredEvent]], None]
Job = Callable[["WriteTx"], T]


class RunOnWriter(Protocol):
    """Runs a synchronous function on the writer's connection (``engines.Backend.run_writer``)."""

    def __call__(
        self, fn: Callable[[Connection], T], /, *, brief: bool = False
    ) -> Awaitable[T]: ...


DEFAULT_MAX_BATCH = 256
DEFAULT_SHARDS = 4
"""Writer connections per node on PostgreSQL: enough for commits of different workspaces to
overlap and share the log's flush, few enough to leave the database's connections to readers
and other nodes."""
DEFAULT_BATCH_SLICE = 0.005
"""Seconds a batch runs before it commits early while another workspace waits on its shard:
a few dozen progress reports on this project's machine, short against a person's request
(tens of milliseconds) and long against a commit, so a flood that shares its shard still
commits in batches."""
BRIEF_BATCH = 4
"""The most jobs in a batch of brief jobs that the backend may run on the event loop's thread
(``engines.Backend.run_writer``): a steady agent's reports come a job or two per batch, and
for those the hand-over to SQLite's writer thread and back, and the two threads' turns at
the interpreter lock, cost more than the jobs."""
LOOP_TURN_EVERY = 0.001
"""Seconds of a batch's jobs between two turns it gives the event loop, when the batch runs
on the loop's thread (PostgreSQL): about a person's request's own work, a few progress
reports' worth, so what waits behind a batch waits at most about this long for each of its
steps."""
DEFAULT_LANE_SHARE = 32
"""A lane's most jobs per batch beside other lanes: small enough that a batch of one agent's
burst commits in a few milliseconds, large enough that eight busy agents still fill a batch.
(A lane alone in its shard may fill the batch: nobody waits behind it.)"""

SHARED_FACTS = frozenset({"member.joined"})
"""Facts whose projection writes rows that workspaces share (users): only a global job may
record them."""

_in_job: contextvars.ContextVar[bool] = contextvars.ContextVar("lineup_store_in_job", default=False)


class WriteTx(Reader):
    """What a write job gets: append, the reads the hub needs while deciding, and raw SQL.

    The reads see the transaction's own uncommitted work. ``append``, ``execute`` and
    ``connection`` count as writing (see the module docstring for why that matters).
    """

    def __init__(
        self, conn: Connection, clock: Clock, *, isolated: bool = False, scope: Scope = GLOBAL
    ) -> None:
        super().__init__(conn)
        self._clock = clock
        self._scope = scope
        self._isolated = isolated
        self._appended: list[StoredEvent] = []
        self._open = True
        self.raw = False
        """The job used the connection itself: what it did to tasks' rows is unknown."""
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
        self.wrote = self.raw = True
        return self._conn

    def get_task(self, workspace_id: str, task_id: str) -> Task | None:
        """As ``Reader.get_task``; a task read earlier in the batch is not read again
        (``lineup.store.task_rows``)."""

        def read() -> Task | None:
            return super(WriteTx, self).get_task(workspace_id, task_id)

        held = append_buffer.held(self._conn)
        if held is not None and not held.touches(workspace_id, task_id):
            return task_rows.get(
                self._conn, workspace_id, task_id, lambda: held.unheld(self._conn, read)
            )
        return task_rows.get(self._conn, workspace_id, task_id, read)

    def append(self, event: NewEvent, *, fingerprint: str | None = None) -> AppendResult:
        """Append ``event`` (idempotent by its sender's id) and apply its projection;
        ``fingerprint`` digests what the sender sent (see ``eventlog.append``)."""
        self._check_open()
        self._check_scope(event)
        self.wrote = True
        if self._isolated:
            # In a job's own savepoint already; this one makes the append all-or-nothing
            # even for a job that catches its error and carries on.
            try:
                with self._conn.begin_nested():
                    result = eventlog.append(
                        self._conn, event, now_ms=self._clock(), fingerprint=fingerprint
                    )
            except BaseException:
                task_rows.forget(self._conn)  # the savepoint undid what it touched
                raise
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
        self.wrote = self.raw = True
        return self._conn.execute(stmt, params)

    def close(self) -> None:
        self._open = False

    def _check_scope(self, event: NewEvent) -> None:
        scope = self._scope
        if scope is None:
            return
        if event.workspace_id not in scope:
            raise RuntimeError(
                f"a write job for {sorted(scope)} appended to workspace {event.workspace_id!r}; "
                "name every workspace a job writes (Store.write(..., workspaces=...))"
            )
        if event.type in SHARED_FACTS:
            raise RuntimeError(
                f"{event.type} writes rows that workspaces share; "
                "record it in a job that names no workspace"
            )

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("a WriteTx is only valid inside its job")


@dataclass
class WriterStats:
    """Counters for tests and metrics; ``transactions_committed < jobs_committed`` is batching.

    ``batches_isolated`` counts batches that ran a second time with a savepoint per job;
    ``global_batches`` those that took the global key exclusive (a job named no workspace);
    ``batches_sliced`` those that committed early (see the module docstring on slices).
    """

    transactions_committed: int = 0
    jobs_committed: int = 0
    jobs_failed: int = 0
    batches_failed: int = 0
    batches_isolated: int = 0
    largest_batch: int = 0
    global_batches: int = 0
    batches_sliced: int = 0
    """Batches that committed early, before all their jobs ran, for another workspace."""


@dataclass(eq=False)
class _Job(Generic[T]):
    fn: Job[T]
    future: asyncio.Future[T]
    scope: Scope = GLOBAL
    lane: Hashable | None = None
    group: Hashable = None
    brief: bool = False
    ok: bool = False
    result: Any = None
    error: Exception | None = None
    events: list[StoredEvent] = field(default_factory=list)

    def reset(self) -> None:
        self.ok = False
        self.result = None
        self.error = None
        self.events = []


def _lane_key(job: _Job[Any]) -> Hashable:
    return job if job.lane is None else job.lane


class _Isolate(Exception):
    """Roll back the optimistic attempt and run the batch again, a savepoint per job."""


@dataclass
class _Route:
    """Where a lane's jobs go while it has any in the writer, so they keep their order."""

    shard: _Shard
    group: Hashable
    jobs: int = 0


_GLOBAL_GROUP = object()
"""The group of jobs that named no workspace."""


@dataclass(eq=False)
class _Shard:
    index: int
    groups: dict[Hashable, dict[Hashable, deque[_Job[Any]]]] = field(default_factory=dict)
    """Queued jobs by group (workspace) then lane, each in the order served next."""
    running: list[_Job[Any]] = field(default_factory=list)
    running_groups: frozenset[Hashable] = frozenset()
    lone_lane: Hashable | None = None
    """The lane of a running batch that took one lane alone, beyond ``lane_share``."""
    quiet_served: bool = False
    """The last batch was quiet workspaces' alone: the next one serves the busy ones."""
    shared: bool = False
    """A quiet group with no job in the running batch has jobs waiting: the batch may be
    sliced. Set on the event loop, read by the batch (on SQLite in the writer thread: a plain
    flag)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    memory: ShardMemory = field(default_factory=ShardMemory)
    """Counters and task rows as this shard's last commits left them (PostgreSQL)."""

    @property
    def queued(self) -> int:
        return sum(len(q) for lanes in self.groups.values() for q in lanes.values())

    def jobs(self) -> list[_Job[Any]]:
        found = list(self.running)
        found.extend(j for lanes in self.groups.values() for q in lanes.values() for j in q)
        return found


class Writer:
    def __init__(
        self,
        run_on_writer: RunOnWriter,
        *,
        clock: Clock,
        max_batch: int = DEFAULT_MAX_BATCH,
        lane_share: int = DEFAULT_LANE_SHARE,
        shards: int = 1,
        batch_slice: float = DEFAULT_BATCH_SLICE,
        loop_turn_every: float = LOOP_TURN_EVERY,
    ) -> None:
        """``run_on_writer`` must allow ``shards`` calls at once (a connection each)."""
        self._run_on_writer = run_on_writer
        self._clock = clock
        self._max_batch = max_batch
        self._lane_share = max(1, lane_share)
        self._batch_slice = max(0.0, batch_slice)
        self._loop_turn_every = max(0.0, loop_turn_every)
        self._shards = [_Shard(i) for i in range(max(1, shards))]
        self._generation = 0  # moves whenever a global batch starts or ends (_global_turn)
        self._globals_running = 0
        self._routes: dict[Hashable, _Route] = {}
        self._closed = False
        self._listeners: list[CommitListener] = []
        self.stats = WriterStats()

    @property
    def shards(self) -> int:
        return len(self._shards)

    def start(self) -> None:
        if self._shards[-1].task is not None:
            return  # started (every enqueue asks)
        loop = asyncio.get_running_loop()
        for shard in self._shards:
            if shard.task is None:
                shard.task = loop.create_task(
                    self._run(shard), name=f"lineup-store-writer-{shard.index}"
                )

    def submit(
        self,
        fn: Job[T],
        lane: Hashable | None = None,
        scope: Scope = GLOBAL,
        *,
        brief: bool = False,
    ) -> Awaitable[T]:
        """Queue ``fn`` in ``lane`` (its own if none) for the workspaces of ``scope`` (all, if
        ``GLOBAL``); refused at once (not when awaited) from inside a write job. ``brief``:
        ``fn`` does a few statements' work, bounded by what one frame can carry (see
        ``BRIEF_BATCH``)."""
        if _in_job.get():
            raise RuntimeError("Store.write called from inside a write job; use its WriteTx")
        return self._enqueue(fn, lane, scope, brief)

    async def flush(self) -> None:
        """Wait until everything queued before this call has committed (or failed)."""
        waiting = [j.future for shard in self._shards for j in shard.jobs()]
        if waiting:
            await asyncio.wait(waiting)

    async def close(self) -> None:
        """Refuse new work, finish what is queued, stop."""
        if not self._closed:
            self._closed = True
            for shard in self._shards:
                shard.wake.set()
        tasks = [shard.task for shard in self._shards if shard.task is not None]
        if tasks:
            await asyncio.gather(*tasks)

    @property
    def queued(self) -> int:
        """Jobs waiting for a batch (not counting the ones running)."""
        return sum(shard.queued for shard in self._shards)

    def queued_for(self, workspace_id: str) -> int:
        """Jobs of one workspace waiting for a batch (those that name it first)."""
        return sum(
            len(q) for shard in self._shards for q in shard.groups.get(workspace_id, {}).values()
        )

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        """Call ``listener`` after each COMMIT with the new events in commit order (fan-out).

        Listeners run on the event loop, in a writer task, before callers resume: keep them
        quick and non-blocking (e.g. put onto a queue). Exceptions are logged, not raised.
        A workspace's events reach them in sequence order as long as its jobs share a shard
        (every job naming it first among its workspaces does).
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _route(self, scope: Scope, lane: Hashable | None) -> _Route:
        if lane is not None and (route := self._routes.get(lane)) is not None:
            route.jobs += 1
            return route
        group: Hashable
        if scope is None:
            group, index = _GLOBAL_GROUP, 0
        else:
            group = min(scope)
            index = write_locks.workspace_key(group) % len(self._shards)
        route = _Route(self._shards[index], group, 1)
        if lane is not None:
            self._routes[lane] = route
        return route

    def _release(self, job: _Job[Any]) -> None:
        if job.lane is not None:
            route = self._routes.get(job.lane)
            if route is not None:
                route.jobs -= 1
                if route.jobs <= 0:
                    del self._routes[job.lane]

    async def _enqueue(self, fn: Job[T], lane: Hashable | None, scope: Scope, brief: bool) -> T:
        if self._closed:
            raise Unavailable("the store is closed")
        if any(s.task is not None and s.task.done() for s in self._shards):
            raise Unavailable("the store writer stopped")
        self.start()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        route = self._route(scope, lane)
        job: _Job[T] = _Job(fn, future, scope, lane, route.group, brief)
        shard = route.shard
        key: Hashable = job if lane is None else lane
        lanes = shard.groups.setdefault(route.group, {})
        if shard.running and not shard.shared:
            if route.group not in shard.running_groups:
                shard.shared = self._quiet(lanes)
            elif shard.lone_lane is not None and key != shard.lone_lane:
                shard.shared = True
        queued = lanes.get(key)
        if queued is None:
            lanes[key] = deque((job,))
        else:
            queued.append(job)
        route.shard.wake.set()
        return await future

    # --- the writer tasks (event loop) -----------------------------------------------------

    def _next_batch(self, shard: _Shard) -> list[_Job[Any]]:
        """The workspaces in turn, each at most its share of the batch; within one, up to
        ``lane_share`` jobs of each lane in turn. Whatever was served goes to the back. The
        workspaces' jobs are interleaved, so that a slice reaches each of them.

        Quiet workspaces (a request or two) waiting beside busy ones get a batch of their
        own first — their commit does not wait for a share of the flood's jobs — and the
        busy ones the batch after, whatever has arrived meanwhile."""
        if len(shard.groups) > 1:
            if not shard.quiet_served:
                batch = self._quiet_batch(shard)
                if batch:
                    shard.quiet_served = True
                    return batch
            else:  # the busy ones' turn: first in the batch, so a slice reaches them
                shard.groups = dict(
                    sorted(shard.groups.items(), key=lambda item: self._quiet(item[1]))
                )
        shard.quiet_served = False
        taken: list[list[_Job[Any]]] = []
        size = 0
        groups = shard.groups
        share = max(self._lane_share, self._max_batch // max(1, len(groups)))
        lane_share = self._lane_share
        lone = len(groups) == 1 and len(next(iter(groups.values()))) == 1
        if lone:
            # one lane alone (one agent's stream): the whole batch is its share, and a lane
            # that arrives meanwhile slices it (``_enqueue``)
            lane_share = self._max_batch
        if len(groups) > 1:
            sizes = [sum(len(q) for q in lanes.values()) for lanes in groups.values()]
            if min(sizes) < self._lane_share < max(sizes):
                share = self._lane_share  # a quiet workspace's few jobs: keep its batch short
        for group in list(groups):
            room = self._max_batch - size
            if room <= 0:
                break
            lanes = groups.pop(group)
            budget = min(room, share)
            mine: list[_Job[Any]] = []
            for key in list(lanes):
                if budget <= 0:
                    break
                queued = lanes.pop(key)
                take = min(budget, lane_share, len(queued))
                for _ in range(take):
                    mine.append(queued.popleft())
                budget -= take
                if queued:
                    lanes[key] = queued
            if lanes:
                groups[group] = lanes
            taken.append(mine)
            size += len(mine)
        if len(taken) == 1:
            batch = taken[0]
        else:
            batch = [job for turn in zip_longest(*taken) for job in turn if job is not None]
        shard.running_groups = frozenset(job.group for job in batch)
        shard.lone_lane = _lane_key(batch[0]) if lone and batch else None
        shard.shared = any(
            self._quiet(lanes) for g, lanes in groups.items() if g not in shard.running_groups
        )
        return batch

    def _quiet_batch(self, shard: _Shard) -> list[_Job[Any]]:
        """Every job of the quiet workspaces, when busy ones wait too (else none)."""
        groups = shard.groups
        quiet = [g for g, lanes in groups.items() if self._quiet(lanes)]
        if not quiet or len(quiet) == len(groups):
            return []
        batch: list[_Job[Any]] = []
        served: list[Hashable] = []
        for group in quiet:
            if len(batch) >= self._max_batch:
                break
            for queued in groups.pop(group).values():
                batch.extend(queued)
            served.append(group)
        shard.running_groups = frozenset(served)
        shard.lone_lane = None
        shard.shared = False
        return batch

    def _quiet(self, lanes: dict[Hashable, deque[_Job[Any]]]) -> bool:
        """A workspace with fewer jobs waiting than one lane's share: a request or two, which
        a running batch should not keep waiting (a busy one waits for its turn)."""
        return sum(len(q) for q in lanes.values()) < self._lane_share

    def _put_back(self, shard: _Shard, deferred: list[_Job[Any]]) -> None:
        """Jobs a sliced batch did not reach: back to the front of their lanes, and their
        workspaces to the front of the turn, in the order the batch had them."""
        ahead = {g: shard.groups.pop(g, {}) for g in dict.fromkeys(j.group for j in deferred)}
        for job in reversed(deferred):
            lanes = ahead[job.group]
            key = _lane_key(job)
            queued = lanes.get(key)
            if queued is None:
                lanes[key] = deque((job,))
            else:
                queued.appendleft(job)
        shard.groups = {**ahead, **shard.groups}

    async def _run(self, shard: _Shard) -> None:
        try:
            while True:
                if not shard.groups:
                    if self._closed:
                        return
                    shard.wake.clear()
                    await shard.wake.wait()
                    continue
                shard.running = self._next_batch(shard)
                deferred: list[_Job[Any]] = []
                try:
                    deferred = await self._run_batch(shard, shard.running)
                finally:
                    if deferred:
                        self._put_back(shard, deferred)
                    for job in shard.running[: len(shard.running) - len(deferred)]:
                        self._release(job)
                    shard.running = []
                    shard.running_groups = frozenset()
                    shard.lone_lane = None
                    shard.shared = False
        finally:
            # Cancelled or crashed: no caller may wait forever.
            leftovers = shard.jobs()
            shard.groups.clear()
            shard.running = []
            for job in leftovers:
                self._release(job)
                if not job.future.done():
                    job.future.set_exception(Unavailable("the store writer stopped"))

    async def _run_batch(self, shard: _Shard, batch: list[_Job[Any]]) -> list[_Job[Any]]:
        """Run and commit ``batch``; returns the jobs a slice left for later (a suffix of the
        batch), which keep waiting."""
        for job in batch:
            if job.future.cancelled():
                self._release(job)
        work = [j for j in batch if not j.future.cancelled()]
        batch[:] = work  # what the caller releases
        if not work:
            return []
        scope = write_locks.union(j.scope for j in work)
        brief = len(work) <= BRIEF_BATCH and all(j.brief for j in work)
        if scope is None:
            self._global_turn(+1)
        try:
            isolated, ran = await self._run_on_writer(
                lambda conn: self._execute(conn, shard, work, scope), brief=brief
            )
        except Exception as exc:
            self._fail_batch(work, exc)
            return []
        finally:
            if scope is None:
                self._global_turn(-1)
        self._committed(work[:ran], isolated=isolated, scope=scope)
        if ran < len(work):
            self.stats.batches_sliced += 1
        return work[ran:]

    def _global_turn(self, step: int) -> None:
        """A global batch starts (``+1``) or ends (``-1``): it may change tasks' rows without
        moving a counter (a replay of the log), so every shard forgets what it kept, and
        batches that began before it ended keep nothing (``shard_memory``)."""
        self._globals_running += step
        self._generation += 1
        for shard in self._shards:
            shard.memory.forget_all()

    def _committed(self, work: list[_Job[Any]], *, isolated: bool, scope: Scope) -> None:
        stats = self.stats
        stats.transactions_committed += 1
        stats.batches_isolated += isolated
        stats.global_batches += scope is None
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

    def _execute(
        self, conn: Connection, shard: _Shard, work: list[_Job[Any]], scope: Scope
    ) -> tuple[bool, int]:
        """Run and commit the batch; returns whether it had to run isolated, and how many of
        its jobs ran (the others were sliced off and did not run).

        Touches only the jobs' own fields, never their futures: on SQLite this runs in the
        writer thread.
        """
        token = _in_job.set(True)
        try:
            try:
                return False, self._attempt(conn, shard, work, scope, isolated=False)
            except _Isolate:
                pass  # rolled back; run again, each job in its own savepoint
            return True, self._attempt(conn, shard, work, scope, isolated=True)
        finally:
            _in_job.reset(token)

    def _attempt(
        self,
        conn: Connection,
        shard: _Shard,
        work: list[_Job[Any]],
        scope: Scope,
        *,
        isolated: bool,
    ) -> int:
        for job in work:
            job.reset()
        ran = 0
        generation = self._generation
        kept: dict[TaskKey, Task] | None = None
        at_commit = False
        try:
            with conn.begin():
                task_rows.keep(conn)
                # the optimistic pass holds appends back on PostgreSQL and writes them together
                held = append_buffer.hold(conn) if self._hold_appends(conn, isolated) else None
                try:
                    self._begin(conn, shard.memory, scope, held)
                    # PostgreSQL's optimistic pass has no awaits of its own to give turns
                    ran = self._run_jobs(conn, shard, work, isolated, turns=held is not None)
                    if held is not None:
                        try:
                            at_commit = held.flush_at_commit(conn)
                        except Exception as exc:
                            raise _Isolate from exc  # a resent id, say: find which, isolated
                finally:
                    append_buffer.release(conn)
                    kept = task_rows.stop(conn)
        except Exception as exc:
            if not at_commit:
                raise
            # the COMMIT failed on the held writes it carried (a resent id, say): end the
            # aborted transaction, then find which job it was, isolated
            _roll_back(conn)
            raise _Isolate from exc
        if scope is not None and self._hold_appends(conn, False):  # committed, PostgreSQL
            if held is None:
                shard.memory.forget(scope)
            else:
                rows = kept if generation == self._generation else None
                shard.memory.remember(scope, held.counters_of(scope), rows)
        return ran

    def _run_jobs(
        self, conn: Connection, shard: _Shard, work: list[_Job[Any]], isolated: bool, *, turns: bool
    ) -> int:
        """Run the batch's jobs in order until its slice ends while another workspace waits
        (``shard.shared``), giving the event loop a turn every ``loop_turn_every`` seconds
        when ``turns``; returns how many ran."""
        ran = 0
        now = time.monotonic()
        ends, turn_at = now + self._batch_slice, now + self._loop_turn_every
        for job in work:
            if ran and turns and time.monotonic() >= turn_at:
                await_only(asyncio.sleep(0))
                turn_at = time.monotonic() + self._loop_turn_every
            if ran and shard.shared and time.monotonic() >= ends:
                break
            self._run_job(conn, job, isolated=isolated)
            ran += 1
        return ran

    def _begin(
        self,
        conn: Connection,
        memory: ShardMemory,
        scope: Scope,
        held: append_buffer.AppendBuffer | None,
    ) -> None:
        """Take the batch's locks and learn its workspaces' counters: from the shard's memory
        when the locks' check finds them unchanged (and then its task rows too), else read."""
        known = memory.known(scope) if held is not None else None
        unchanged = write_locks.take(conn, scope, known)
        if held is None or scope is None:
            return
        if unchanged and known is not None:
            held.know_counters(known)
            if not self._globals_running:
                task_rows.keep(conn, memory.rows(scope))
        else:
            held.read_counters(conn, scope)

    @staticmethod
    def _hold_appends(conn: Connection, isolated: bool) -> bool:
        return not isolated and conn.dialect.driver == "asyncpg"

    def _run_job(self, conn: Connection, job: _Job[Any], *, isolated: bool) -> None:
        assert job.fn is not None
        tx = WriteTx(conn, self._clock, isolated=isolated, scope=job.scope)
        errors_before = db_errors(conn)
        savepoint = conn.begin_nested() if isolated else None
        try:
            result = job.fn(tx)
        except Exception as exc:
            task_rows.forget(conn)  # whatever it touched may be undone now
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
            if tx.raw:
                task_rows.forget(conn)
            tx.close()


def _roll_back(conn: Connection) -> None:
    """End a transaction the server still has open after its COMMIT failed (the adapter
    considers it over, so nothing else would)."""
    driver = writer_connection(conn)
    if driver is not None and driver.is_in_transaction():
        await_only(driver.execute("ROLLBACK"))


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
