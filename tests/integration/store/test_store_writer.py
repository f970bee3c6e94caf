"""The single writer: group commit, per-job savepoints, results only after COMMIT."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import text

from lineup.protocol.errors import InvalidArgument, Unavailable
from lineup.protocol.ids import new_ulid
from lineup.store import AppendResult, Store, StoredEvent, WriteTx

from .factory import create_workspace, note

DEADLINE = 30


class Gate:
    """Holds the writer inside one job so that the jobs queued meanwhile form one batch."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def job(self, tx: WriteTx) -> str:
        self.entered.set()
        await asyncio.wait_for(self.release.wait(), DEADLINE)
        return "gate"


async def _batch(store: Store, jobs: Sequence[Any]) -> list[Any]:
    """Run ``jobs`` as one batch; returns each job's result or exception."""
    gate = Gate()
    held = asyncio.ensure_future(store.write(gate.job))
    await asyncio.wait_for(gate.entered.wait(), DEADLINE)
    before = store.writer_stats
    futures = [asyncio.ensure_future(store.write(job)) for job in jobs]
    await asyncio.sleep(0)  # let every submission reach the queue
    gate.release.set()
    assert await asyncio.wait_for(held, DEADLINE) == "gate"
    results = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), DEADLINE)
    after = store.writer_stats
    # The gate's transaction, then exactly one for all of ``jobs``, committed or not.
    committed = after.transactions_committed - before.transactions_committed
    assert committed + after.batches_failed - before.batches_failed == 2
    return results


async def test_a_failing_job_does_not_affect_the_others_in_its_batch(store: Store) -> None:
    ws = await create_workspace(store)

    async def good(tx: WriteTx) -> AppendResult:
        return await tx.append(note(ws))

    async def bad(tx: WriteTx) -> None:
        await tx.append(note(ws))
        raise InvalidArgument("changed my mind")

    before = store.writer_stats.transactions_committed
    results = await _batch(store, [good, bad, good])
    assert store.writer_stats.transactions_committed == before + 2  # the gate's, then ours
    assert isinstance(results[1], InvalidArgument)
    assert [r.event.sequence for r in (results[0], results[2])] == [2, 3]
    assert [e.sequence for e in await store.read_events(ws)] == [1, 2, 3]


async def test_a_job_that_breaks_the_database_rolls_back_only_itself(store: Store) -> None:
    ws = await create_workspace(store)

    async def good(tx: WriteTx) -> AppendResult:
        return await tx.append(note(ws))

    async def duplicate_key(tx: WriteTx) -> None:
        await tx.append(note(ws))
        await tx.execute(
            text("INSERT INTO workspaces (id, name, created_at) VALUES (:i, 'x', 0)"), {"i": ws}
        )

    results = await _batch(store, [good, duplicate_key, good])
    assert isinstance(results[1], Exception) and not isinstance(results[1], Unavailable)
    assert [e.sequence for e in await store.read_events(ws)] == [1, 2, 3]


async def test_when_commit_fails_every_job_of_the_batch_is_unavailable(store: Store) -> None:
    ws = await create_workspace(store)
    table = f"t_{new_ulid().lower()}"

    async def good(tx: WriteTx) -> AppendResult:
        return await tx.append(note(ws))

    async def breaks_commit(tx: WriteTx) -> None:
        # A deferred constraint is only checked at COMMIT, after every savepoint succeeded.
        await tx.execute(
            text(
                f"CREATE TEMPORARY TABLE {table} (id INTEGER PRIMARY KEY, ref INTEGER "
                f"REFERENCES {table}(id) DEFERRABLE INITIALLY DEFERRED)"
            )
        )
        await tx.execute(text(f"INSERT INTO {table} (id, ref) VALUES (1, 2)"))

    results = await _batch(store, [good, breaks_commit, good])
    assert all(isinstance(r, Unavailable) for r in results), results
    assert all(r.retryable for r in results)
    assert store.writer_stats.batches_failed == 1
    assert await store.last_sequence(ws) == 1
    assert (await store.append(note(ws))).event.sequence == 2


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

    async def two_events(tx: WriteTx) -> list[int]:
        first = await tx.append(note(ws, 1))
        second = await tx.append(note(ws, 2))
        task = await tx.get_task(ws, "none")
        assert task is None
        return [first.event.sequence, second.event.sequence]

    assert await store.write(two_events) == [2, 3]


async def test_reads_inside_a_write_see_its_own_uncommitted_work(store: Store) -> None:
    ws = await create_workspace(store)

    async def job(tx: WriteTx) -> int:
        await tx.append(note(ws))
        return await tx.last_sequence(ws)

    assert await store.write(job) == 2


async def test_writing_from_inside_a_job_is_refused_instead_of_deadlocking(store: Store) -> None:
    async def nested(tx: WriteTx) -> None:
        await store.write(lambda inner: inner.last_sequence("x"))

    with pytest.raises(RuntimeError):
        await asyncio.wait_for(store.write(nested), DEADLINE)


async def test_commit_listeners_get_new_events_in_order_after_commit(store: Store) -> None:
    ws = await create_workspace(store)
    seen: list[list[int]] = []

    def listener(events: Sequence[StoredEvent]) -> None:
        seen.append([e.sequence for e in events])

    remove = store.add_commit_listener(listener)
    duplicate = note(ws)
    await store.append(duplicate)

    async def fails(tx: WriteTx) -> None:
        await tx.append(note(ws))
        raise InvalidArgument("no")

    async def appends(tx: WriteTx) -> AppendResult:
        return await tx.append(note(ws))

    await _batch(store, [appends, fails, lambda tx: tx.append(duplicate), appends])
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
