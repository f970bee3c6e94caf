"""The single writer: group commit, optimistic batches that fall back to a savepoint per job,
results only after COMMIT."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from lineup.protocol.errors import InvalidArgument, NotFound, Unavailable
from lineup.protocol.ids import new_ulid
from lineup.store import AppendResult, Store, StoredEvent, WriteTx
from lineup.store.writer import BRIEF_BATCH, DEFAULT_LANE_SHARE
from tests.support.waiting import until_async

from .factory import create_workspace, event, note

DEADLINE = 30


@pytest.fixture(params=[False, True], ids=["thread", "brief"])
def brief(request: pytest.FixtureRequest) -> bool:
    """Whether the batch is of brief jobs, which SQLite runs on the event loop's thread."""
    flag: bool = request.param
    return flag


async def _batch(store: Store, jobs: Sequence[Any], brief: bool = False) -> list[Any]:
    """Run ``jobs`` as one batch; returns each job's result or exception.

    The writer is idle between awaited writes, and every submission below reaches its queue
    in the same turn of the event loop, before the writer task wakes: they form one batch.
    """
    before = store.writer_stats
    results = await asyncio.wait_for(
        asyncio.gather(*(store.write(job, brief=brief) for job in jobs), return_exceptions=True),
        DEADLINE,
    )
    after = store.writer_stats
    committed = after.transactions_committed - before.transactions_committed
    assert committed + after.batches_failed - before.batches_failed == 1
    return results


async def test_a_failing_job_does_not_affect_the_others_in_its_batch(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)

    def good(tx: WriteTx) -> AppendResult:
        return tx.append(note(ws))

    def bad(tx: WriteTx) -> None:
        tx.append(note(ws))
        raise InvalidArgument("changed my mind")

    before = store.writer_stats.transactions_committed
    results = await _batch(store, [good, bad, good], brief)
    assert store.writer_stats.transactions_committed == before + 1
    assert isinstance(results[1], InvalidArgument)
    assert [r.event.sequence for r in (results[0], results[2])] == [2, 3]
    assert [e.sequence for e in await store.read_events(ws)] == [1, 2, 3]


async def test_a_job_that_breaks_the_database_rolls_back_only_itself(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)

    def good(tx: WriteTx) -> AppendResult:
        return tx.append(note(ws))

    def duplicate_key(tx: WriteTx) -> None:
        tx.append(note(ws))
        tx.execute(
            text("INSERT INTO workspaces (id, name, created_at) VALUES (:i, 'x', 0)"), {"i": ws}
        )

    results = await _batch(store, [good, duplicate_key, good], brief)
    assert isinstance(results[1], Exception) and not isinstance(results[1], Unavailable)
    assert [e.sequence for e in await store.read_events(ws)] == [1, 2, 3]


async def test_a_job_that_fails_before_writing_fails_alone_without_a_rerun(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)
    runs: list[str] = []

    def good(tx: WriteTx) -> AppendResult:
        runs.append("good")
        return tx.append(note(ws))

    def refuses(tx: WriteTx) -> None:
        runs.append("refuses")
        if tx.get_task(ws, "no-such-task") is None:
            raise NotFound("no such task")

    before = store.writer_stats
    results = await _batch(store, [good, refuses, good], brief)
    after = store.writer_stats
    assert isinstance(results[1], NotFound)
    assert [r.event.sequence for r in (results[0], results[2])] == [2, 3]
    assert runs == ["good", "refuses", "good"]
    assert after.batches_isolated == before.batches_isolated
    assert after.jobs_failed == before.jobs_failed + 1


async def test_a_job_that_fails_after_writing_reruns_the_batch_a_savepoint_per_job(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)
    runs: list[str] = []

    def good(tx: WriteTx) -> AppendResult:
        runs.append("good")
        return tx.append(note(ws))

    def bad(tx: WriteTx) -> None:
        runs.append("bad")
        tx.append(note(ws))
        raise InvalidArgument("changed my mind")

    before = store.writer_stats
    results = await _batch(store, [good, bad, good], brief)
    assert isinstance(results[1], InvalidArgument)
    assert runs == ["good", "bad", "good", "bad", "good"]  # optimistic, then isolated
    assert store.writer_stats.batches_isolated == before.batches_isolated + 1
    assert [e.sequence for e in await store.read_events(ws)] == [1, 2, 3]


async def test_the_same_event_twice_in_one_batch_is_stored_once(store: Store, brief: bool) -> None:
    ws = await create_workspace(store)
    resent = note(ws)

    def good(tx: WriteTx) -> AppendResult:
        return tx.append(note(ws))

    def send(tx: WriteTx) -> AppendResult:
        return tx.append(resent)

    first, other, again = await _batch(store, [send, good, send], brief)
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.event == first.event
    assert [first.event.sequence, other.event.sequence] == [2, 3]
    assert await store.last_sequence(ws) == 3


async def test_an_append_that_fails_is_undone_even_if_its_job_carries_on(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)

    def carries_on(tx: WriteTx) -> int:
        with contextlib.suppress(InvalidArgument):
            tx.append(event(ws, "task.created", {"taskId": "t1"}))  # no title: fails late
        return tx.append(note(ws)).event.sequence

    results = await _batch(store, [carries_on], brief)
    assert results == [2]
    assert [e.type for e in await store.read_events(ws)] == ["workspace.created", "test.note"]
    assert await store.read(lambda r: r.get_task(ws, "t1")) is None


async def test_when_commit_fails_every_job_of_the_batch_is_unavailable(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)
    table = f"t_{new_ulid().lower()}"

    def good(tx: WriteTx) -> AppendResult:
        return tx.append(note(ws))

    def breaks_commit(tx: WriteTx) -> None:
        # A deferred constraint is only checked at COMMIT, after every job succeeded.
        tx.execute(
            text(
                f"CREATE TEMPORARY TABLE {table} (id INTEGER PRIMARY KEY, ref INTEGER "
                f"REFERENCES {table}(id) DEFERRABLE INITIALLY DEFERRED)"
            )
        )
        tx.execute(text(f"INSERT INTO {table} (id, ref) VALUES (1, 2)"))

    results = await _batch(store, [good, breaks_commit, good], brief)
    assert all(isinstance(r, Unavailable) for r in results), results
    assert all(r.retryable for r in results)
    assert store.writer_stats.batches_failed == 1
    assert await store.last_sequence(ws) == 1
    assert (await store.append(note(ws))).event.sequence == 2


async def test_a_few_brief_jobs_run_on_the_event_loops_thread_and_no_others(
    store: Store,
) -> None:
    """SQLite: brief batches of at most ``BRIEF_BATCH`` on the loop's thread, every other
    batch on the writer's. PostgreSQL's writer runs every batch on the loop (its driver)."""
    here = threading.current_thread().name
    writer = "lineup-sqlite-writer" if store.dialect == "sqlite" else here

    def where(tx: WriteTx) -> str:
        return threading.current_thread().name

    def elsewhere(results: list[Any]) -> bool:
        return all(r == writer for r in results)

    assert await _batch(store, [where] * BRIEF_BATCH, brief=True) == [here] * BRIEF_BATCH
    assert elsewhere(await _batch(store, [where] * (BRIEF_BATCH + 1), brief=True))
    assert elsewhere(await _batch(store, [where] * 2))
    mixed = await asyncio.gather(store.write(where, brief=True), store.write(where))
    assert elsewhere(mixed)


async def test_jobs_are_batched_under_load(store: Store) -> None:
    ws = await create_workspace(store)
    before = store.writer_stats
    await asyncio.wait_for(
        asyncio.gather(*(store.append(note(ws, i)) for i in range(200))), DEADLINE
    )
    after = store.writer_stats
    jobs = after.jobs_committed - before.jobs_committed
    transactions = after.transactions_committed - before.transactions_committed
    assert jobs == 200
    assert transactions < jobs
    assert after.largest_batch > 1


async def test_a_write_returns_what_its_job_returned(store: Store) -> None:
    ws = await create_workspace(store)

    def two_events(tx: WriteTx) -> list[int]:
        first = tx.append(note(ws, 1))
        second = tx.append(note(ws, 2))
        task = tx.get_task(ws, "none")
        assert task is None
        return [first.event.sequence, second.event.sequence]

    assert await store.write(two_events) == [2, 3]


async def test_reads_inside_a_write_see_its_own_uncommitted_work(store: Store) -> None:
    ws = await create_workspace(store)

    def job(tx: WriteTx) -> int:
        tx.append(note(ws))
        return tx.last_sequence(ws)

    assert await store.write(job) == 2


async def test_writing_from_inside_a_job_is_refused_instead_of_deadlocking(store: Store) -> None:
    def nested(tx: WriteTx) -> None:
        store.write(lambda inner: inner.last_sequence("x"))

    with pytest.raises(RuntimeError):
        await asyncio.wait_for(store.write(nested), DEADLINE)


async def test_commit_listeners_get_new_events_in_order_after_commit(
    store: Store, brief: bool
) -> None:
    ws = await create_workspace(store)
    seen: list[list[int]] = []

    def listener(events: Sequence[StoredEvent]) -> None:
        seen.append([e.sequence for e in events])

    remove = store.add_commit_listener(listener)
    duplicate = note(ws)
    await store.append(duplicate)

    def fails(tx: WriteTx) -> None:
        tx.append(note(ws))
        raise InvalidArgument("no")

    def appends(tx: WriteTx) -> AppendResult:
        return tx.append(note(ws))

    await _batch(store, [appends, fails, lambda tx: tx.append(duplicate), appends], brief)
    remove()
    await store.append(note(ws))
    assert seen == [[2], [3, 4]]


async def test_flush_waits_for_queued_writes(store: Store) -> None:
    ws = await create_workspace(store)
    pending = [asyncio.ensure_future(store.append(note(ws, i))) for i in range(10)]
    await asyncio.sleep(0)
    await asyncio.wait_for(store.flush(), DEADLINE)
    assert all(f.done() for f in pending)
    assert await store.last_sequence(ws) == 11


async def test_close_finishes_queued_writes_then_refuses_new_ones(database_url: str) -> None:
    store = await Store.open(database_url)
    await store.migrate()
    ws = await create_workspace(store)
    pending = [asyncio.ensure_future(store.append(note(ws, i))) for i in range(10)]
    await asyncio.sleep(0)
    await asyncio.wait_for(store.close(), DEADLINE)
    assert [f.result().event.sequence for f in pending] == list(range(2, 12))
    with pytest.raises(Unavailable):
        await store.append(note(ws))

    reopened = await Store.open(database_url)
    try:
        assert await reopened.last_sequence(ws) == 11
    finally:
        await reopened.close()


async def test_opening_an_unreachable_database_is_unavailable(tmp_path: Any) -> None:
    with pytest.raises(Unavailable):
        await Store.open("postgresql+asyncpg://postgres@127.0.0.1:1/nothing")


async def test_an_in_memory_sqlite_url_is_refused() -> None:
    with pytest.raises(InvalidArgument):
        await Store.open("sqlite+aiosqlite:///:memory:")


async def test_a_request_behind_one_lanes_burst_runs_after_only_that_lanes_share(
    store: Store,
) -> None:
    """An agent with 250 frames in flight does not make another workspace's request wait for
    all of them: the request's job runs after at most one share of the burst."""
    flooded, other = await create_workspace(store), await create_workspace(store)
    ran: list[str] = []

    def flood(tx: WriteTx) -> AppendResult:
        ran.append("flood")
        return tx.append(note(flooded))

    def request(tx: WriteTx) -> AppendResult:
        ran.append("request")
        return tx.append(note(other))

    burst = [store.write(flood, lane="agent:flooder") for _ in range(250)]
    results = await asyncio.wait_for(
        asyncio.gather(*burst, store.write(request, lane="user:someone")), DEADLINE
    )
    assert all(not r.duplicate for r in results)
    ahead = ran.index("request")
    assert ahead <= DEFAULT_LANE_SHARE, f"{ahead} of the burst ran before the request"
    # the burst itself stays in order
    sequences = [r.event.sequence for r in results[:-1]]
    assert sequences == sorted(sequences) == list(range(2, 252))


async def test_flush_waits_for_every_lane_queued_before_it(store: Store) -> None:
    ws = await create_workspace(store)
    pending = [
        asyncio.ensure_future(store.write(lambda tx: tx.append(note(ws)), lane=f"l{i % 3}"))
        for i in range(100)
    ]
    await asyncio.sleep(0)  # the submissions reach the queue
    await asyncio.wait_for(store.flush(), DEADLINE)
    assert all(p.done() for p in pending)
    assert await store.last_sequence(ws) == 101


@pytest.fixture
async def sliced(database_url: str) -> AsyncIterator[Store]:
    """One writer shard whose batches are sliced after every job while workspaces share it."""
    opened = await Store.open(database_url, writer_connections=1, batch_slice=0)
    try:
        await opened.migrate()
        yield opened
    finally:
        await opened.close()


class _Gate:
    """Holds the writer inside a job until released: SQLite's writer thread waits on an
    event; on PostgreSQL the job waits for an advisory lock the gate holds."""

    KEY = 424_243

    def __init__(self, store: Store, database_url: str) -> None:
        self.holding = threading.Event()
        self._released = threading.Event()
        self._engine = None if store.dialect == "sqlite" else create_async_engine(database_url)
        self._lock: AsyncConnection | None = None

    async def __aenter__(self) -> _Gate:
        if self._engine is not None:
            self._lock = await self._engine.connect()
            await self._lock.execute(text(f"SELECT pg_advisory_lock({self.KEY})"))
            await self._lock.commit()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.release()
        if self._engine is not None:
            await self._engine.dispose()

    def hold(self, tx: WriteTx) -> None:
        self.holding.set()
        if self._engine is None:
            self._released.wait(DEADLINE)
        else:
            tx.execute(text(f"SELECT pg_advisory_xact_lock({self.KEY})"))

    async def release(self) -> None:
        self._released.set()
        lock, self._lock = self._lock, None
        if lock is not None:
            await lock.execute(text(f"SELECT pg_advisory_unlock({self.KEY})"))
            await lock.commit()
            await lock.close()


async def test_a_quiet_workspaces_request_cuts_a_flooders_batch_short_and_commits_next(
    sliced: Store, database_url: str
) -> None:
    """Four agents of one workspace have 200 frames queued and a batch of them running when
    a person's request of another workspace arrives: the running batch commits early, and
    the request commits next, in a batch of its own; every frame of the flood commits, each
    agent's in order."""
    flooded, quiet = await create_workspace(sliced), await create_workspace(sliced)
    commits: list[list[str]] = []
    sliced.add_commit_listener(lambda events: commits.append([e.workspace_id for e in events]))

    def append(ws: str, n: int, gate: _Gate | None = None) -> Callable[[WriteTx], AppendResult]:
        def job(tx: WriteTx) -> AppendResult:
            appended = tx.append(note(ws, n))
            if gate is not None:
                gate.hold(tx)
            return appended

        return job

    async with _Gate(sliced, database_url) as gate:
        flood = [
            asyncio.ensure_future(
                sliced.write(
                    append(flooded, n, gate if n == 0 else None),
                    lane=f"agent:{n % 4}",
                    workspace=flooded,
                )
            )
            for n in range(200)
        ]
        await until_async(gate.holding.is_set, "the flood's first batch to run")
        request = asyncio.ensure_future(
            sliced.write(append(quiet, 0), lane="user:b", workspace=quiet)
        )
        await until_async(lambda: sliced.writer_queued_for(quiet) == 1, "the request to queue")
        await gate.release()
        results = await asyncio.wait_for(asyncio.gather(*flood, request), DEADLINE)
    mine = next(i for i, c in enumerate(commits) if quiet in c)
    assert sum(len(c) for c in commits[:mine]) == 1, "the running batch should stop early"
    assert len(commits[mine]) == 1, "the request should commit in a batch of its own"
    assert sliced.writer_stats.batches_sliced >= 1
    for lane in range(4):
        sequences = [r.event.sequence for r in results[lane:200:4]]
        assert sequences == sorted(sequences)
    assert sorted(r.event.sequence for r in results[:200]) == list(range(2, 202))


async def test_requests_arriving_at_every_commit_do_not_hold_the_flood_back(
    sliced: Store,
) -> None:
    """Quiet workspaces' batches alternate with the flood's: however often requests come,
    the flood commits a batch between any two of theirs."""
    flooded = await create_workspace(sliced)
    quiet = [await create_workspace(sliced) for _ in range(6)]
    commits: list[set[str]] = []
    requests: list[asyncio.Future[AppendResult]] = []

    def another_request(events: Sequence[StoredEvent]) -> None:
        commits.append({e.workspace_id for e in events})
        if len(requests) < len(quiet):  # a new request while the next batch runs
            ws = quiet[len(requests)]
            requests.append(
                asyncio.ensure_future(sliced.write(lambda tx: tx.append(note(ws)), workspace=ws))
            )

    sliced.add_commit_listener(another_request)
    flood = [
        sliced.write(lambda tx: tx.append(note(flooded)), lane=f"agent:{n % 4}", workspace=flooded)
        for n in range(300)
    ]
    await asyncio.wait_for(asyncio.gather(*flood), DEADLINE)
    await asyncio.wait_for(asyncio.gather(*requests), DEADLINE)
    served = [flooded in c for c in commits]
    last_of_flood = max(i for i, flood_in_it in enumerate(served) if flood_in_it)
    alone = [i for i, flood_in_it in enumerate(served[:last_of_flood]) if not flood_in_it]
    assert alone, "the requests should have had batches of their own"
    assert all(b - a > 1 for a, b in itertools.pairwise(alone)), str(served)
    assert await sliced.last_sequence(flooded) == 301


async def test_a_flood_alone_commits_in_full_batches(sliced: Store) -> None:
    """Slices are for sharing: with nobody else waiting, a burst is not cut short."""
    ws = await create_workspace(sliced)
    before = sliced.writer_stats
    await asyncio.wait_for(
        asyncio.gather(
            *(
                sliced.write(lambda tx: tx.append(note(ws)), lane=f"agent:{n % 4}", workspace=ws)
                for n in range(200)
            )
        ),
        DEADLINE,
    )
    after = sliced.writer_stats
    assert after.batches_sliced == before.batches_sliced
    assert after.transactions_committed - before.transactions_committed <= 2


async def test_a_task_read_in_a_batch_sees_what_the_jobs_before_it_did_and_not_what_was_undone(
    store: Store,
) -> None:
    """A batch keeps the task rows it read; each report updates the kept row as it updates
    the table, and a job rolled back leaves nothing of its own behind."""
    ws = await create_workspace(store)
    await store.append(event(ws, "task.created", {"taskId": "t1", "title": "Do it"}))

    def report(progress: int, *, then_fail: bool = False) -> Any:
        def job(tx: WriteTx) -> Any:
            tx.append(
                event(
                    ws,
                    "task.status_changed",
                    {"taskId": "t1", "status": "running", "progress": progress},
                    task_id="t1",
                )
            )
            if then_fail:
                raise InvalidArgument("changed its mind")
            return progress

        return job

    def look(tx: WriteTx) -> tuple[str, int] | None:
        task = tx.get_task(ws, "t1")
        return None if task is None else (task.status, task.progress)

    results = await _batch(
        store, [look, report(10), look, report(99, then_fail=True), look, report(20), look]
    )
    assert results[0] == ("queued", 0)
    assert results[2] == ("running", 10)
    assert isinstance(results[3], InvalidArgument)
    assert results[4] == ("running", 10)
    assert results[6] == ("running", 20)
    stored = await store.read(lambda r: r.get_task(ws, "t1"))
    assert stored is not None and (stored.status, stored.progress) == ("running", 20)


async def test_a_job_sees_the_events_the_jobs_before_it_in_its_batch_appended(
    store: Store,
) -> None:
    """However the batch writes them (on PostgreSQL its appends are written together), a
    later job's reads — by the store's queries or by its own SQL — find them."""
    ws = await create_workspace(store)

    def append(tx: WriteTx) -> int:
        return tx.append(note(ws)).event.sequence

    def look(tx: WriteTx) -> tuple[int, list[int], int]:
        counted = tx.execute(
            text("SELECT count(*) FROM events WHERE workspace_id = :ws"), {"ws": ws}
        ).scalar_one()
        return tx.last_sequence(ws), [e.sequence for e in tx.read_events(ws)], counted

    results = await _batch(store, [append, append, look, append, look])
    assert results[:2] == [2, 3] and results[3] == 4
    assert results[2] == (3, [1, 2, 3], 3)
    assert results[4] == (4, [1, 2, 3, 4], 4)
    assert await store.last_sequence(ws) == 4


async def test_an_append_a_job_undoes_with_its_own_savepoint_leaves_no_gap(store: Store) -> None:
    """However the batch holds its appends, a savepoint the job rolls back takes the appends
    made after it away, and the next append gets the sequence they had."""
    ws = await create_workspace(store)

    def job(tx: WriteTx) -> tuple[int, int]:
        first = tx.append(note(ws, 1)).event.sequence
        savepoint = tx.connection.begin_nested()
        tx.append(note(ws, 2))
        savepoint.rollback()
        return first, tx.append(note(ws, 3)).event.sequence

    assert await asyncio.wait_for(store.write(job), DEADLINE) == (2, 3)
    stored = await store.read(lambda r: r.read_events(ws))
    assert [(e.sequence, e.payload.get("n")) for e in stored[1:]] == [(2, 1), (3, 3)]
    assert await store.last_sequence(ws) == 3


async def test_a_batch_gives_the_event_loop_turns_while_its_jobs_run(database_url: str) -> None:
    """On PostgreSQL a batch's jobs run on the event loop's thread and a steady workspace's
    held writes give them nothing to wait for: without its turns, a flood's batch held every
    request on the node. A callback scheduled by a batch's first job must run before the
    next job does."""
    store = await Store.open(database_url, loop_turn_every=0)
    try:
        await store.migrate()
        ws = await create_workspace(store)
        loop = asyncio.get_running_loop()
        turned = threading.Event()
        seen: list[bool] = []

        def first(tx: WriteTx) -> AppendResult:
            loop.call_soon_threadsafe(turned.set)
            return tx.append(note(ws))

        def later(tx: WriteTx) -> AppendResult:
            if store.dialect == "sqlite":
                turned.wait(DEADLINE)  # SQLite's writer thread: the loop runs beside it
            seen.append(turned.is_set())
            return tx.append(note(ws))

        async def batch(jobs: list[Callable[[WriteTx], AppendResult]]) -> list[int]:
            before = store.writer_stats.transactions_committed
            done = await asyncio.wait_for(
                asyncio.gather(*(store.write(job, workspace=ws) for job in jobs)), DEADLINE
            )
            assert store.writer_stats.transactions_committed == before + 1
            return [r.event.sequence for r in done]

        # the shard now knows the workspace's counters: the next batch reads nothing
        assert await batch([lambda tx: tx.append(note(ws))] * 2) == [2, 3]
        assert await batch([first] + [later] * 4) == [4, 5, 6, 7, 8]
        assert seen == [True] * 4
    finally:
        await store.close()
