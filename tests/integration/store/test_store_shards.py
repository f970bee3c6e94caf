"""Writers of many nodes and shards: each workspace's sequence stays gap-free, workspaces commit
beside each other, cross-workspace and global jobs wait their turn without deadlocking, and a
flood in one workspace does not hold up another's request."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from sqlalchemy import Row, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from lineup.store import AppendResult, Reader, Store, WriteTx
from lineup.store.engines import create_backend, parse_url
from lineup.store.schema import events, tasks
from lineup.store.write_locks import GLOBAL_CLASS, WORKSPACE_CLASS, take, workspace_key
from lineup.store.writer import DEFAULT_MAX_BATCH
from tests.support.waiting import until_async

from .factory import create_workspace, event, note

DEADLINE = 120
HELD_KEY = 424_242
"""A lock the test holds so that a job stays in its transaction until the test lets go."""


async def _sequences(store: Store, workspaces: list[str]) -> dict[str, list[int]]:
    def read(r: Reader) -> Sequence[Row[tuple[str, int]]]:
        return r.connection.execute(
            select(events.c.workspace_id, events.c.sequence)
            .where(events.c.workspace_id.in_(workspaces))
            .order_by(events.c.workspace_id, events.c.sequence)
        ).all()

    found: dict[str, list[int]] = {ws: [] for ws in workspaces}
    for ws, seq in await store.read(read):
        found[ws].append(seq)
    return found


@pytest.fixture
async def nodes(store: Store, database_url: str) -> AsyncIterator[list[Store]]:
    """Three hub nodes on one database, each with the default writer shards."""
    others = [await Store.open(database_url) for _ in range(2)]
    try:
        yield [store, *others]
    finally:
        for other in others:
            await other.close()


def _append_all(workspaces: Sequence[str], n: int) -> Callable[[WriteTx], list[AppendResult]]:
    def job(tx: WriteTx) -> list[AppendResult]:
        return [tx.append(note(ws, n)) for ws in workspaces]

    return job


async def test_many_nodes_and_shards_keep_every_workspace_gap_free(nodes: list[Store]) -> None:
    """Single-workspace jobs, jobs over two workspaces (named in either order) and global
    jobs, from three nodes at once: every workspace's sequence is 1..n, no gap, no repeat."""
    workspaces = [await create_workspace(nodes[0]) for _ in range(12)]
    rng = random.Random(7)
    writes = []
    for i in range(600):
        node = rng.choice(nodes)
        kind = rng.random()
        if kind < 0.8:
            ws = rng.choice(workspaces)
            writes.append(node.write(_append_all([ws], i), lane=f"agent{i % 20}", workspace=ws))
        elif kind < 0.95:
            pair = rng.sample(workspaces, 2)
            writes.append(node.write(_append_all(pair, i), workspaces=pair))
        else:
            writes.append(node.write(_append_all(rng.sample(workspaces, 3), i)))
    results = await asyncio.wait_for(asyncio.gather(*writes), DEADLINE)
    appended = {ws: 1 for ws in workspaces}  # workspace.created
    for batch in results:
        for result in batch:
            assert not result.duplicate
            appended[result.event.workspace_id] += 1
    found = await _sequences(nodes[0], workspaces)
    for ws in workspaces:
        assert found[ws] == list(range(1, appended[ws] + 1))
        assert await nodes[0].last_sequence(ws) == appended[ws]
    if nodes[0].dialect == "postgresql":
        assert nodes[0].writer_shards > 1


async def test_jobs_over_the_same_workspaces_in_opposite_orders_do_not_deadlock(
    nodes: list[Store],
) -> None:
    """Two nodes append to A then B and to B then A, many times at once: without one lock
    order the database would report deadlocks (and the jobs would fail ``unavailable``)."""
    a, b = await create_workspace(nodes[0]), await create_workspace(nodes[0])
    writes = []
    for i in range(200):
        order = [a, b] if i % 2 else [b, a]
        node = nodes[i % 2]
        writes.append(node.write(_append_all(order, i), workspaces=order))
        writes.append(nodes[2].write(_append_all([order[0]], i), workspace=order[0]))
    await asyncio.wait_for(asyncio.gather(*writes), DEADLINE)
    found = await _sequences(nodes[0], [a, b])
    assert found[a] == list(range(1, len(found[a]) + 1)) and len(found[a]) == 1 + 200 + 100
    assert found[b] == list(range(1, len(found[b]) + 1)) and len(found[b]) == 1 + 200 + 100


async def test_nodes_writing_one_workspace_in_turn_each_count_on_from_the_others(
    nodes: list[Store],
) -> None:
    """A writer keeps the counters its last commit left and, once it holds a workspace's
    lock, checks them against the row: after another node wrote, it counts on from the row.
    Trusting a stale counter would repeat a sequence, which the database refuses and the
    batch would then re-run isolated."""
    ws = await create_workspace(nodes[0])
    isolated = [node.writer_stats.batches_isolated for node in nodes]
    expected = 1
    for i in range(30):
        node = nodes[(i // 2) % 3]  # two in a row on a node, then the next node
        result = await node.write(_append_all([ws], i), workspace=ws)
        expected += 1
        assert result[0].event.sequence == expected
    assert [node.writer_stats.batches_isolated for node in nodes] == isolated
    assert (await _sequences(nodes[0], [ws]))[ws] == list(range(1, expected + 1))


async def test_the_locks_check_the_counters_a_writer_kept(store: Store, database_url: str) -> None:
    """What the writer's first round trip answers: whether every counter it kept still
    holds once the locks are taken (PostgreSQL; SQLite never checks)."""
    a, b = await create_workspace(store), await create_workspace(store)
    await store.append(note(a))
    backend = create_backend(parse_url(database_url), writer_connections=1)

    async def check(known: dict[str, tuple[int, int]] | None) -> bool:
        def begin_and_take(conn: Connection) -> bool:
            with conn.begin():
                return take(conn, frozenset(known or (a,)), known)

        return await backend.run_writer(begin_and_take)

    try:
        rows = await store.read(
            lambda r: {
                w: (
                    r.last_sequence(w),
                    r.connection.execute(
                        text("SELECT last_recorded_at FROM workspaces WHERE id = :w"), {"w": w}
                    ).scalar_one(),
                )
                for w in (a, b)
            }
        )
        postgres = store.dialect == "postgresql"
        assert await check(rows) is postgres
        assert await check({a: rows[a]}) is postgres
        assert await check({a: (rows[a][0] - 1, rows[a][1]), b: rows[b]}) is False
        assert await check({a: rows[a], "ws_gone": (1, 1)}) is False
        assert await check({a: rows[a], "it's": (1, 1)}) is False  # not plain: not checked
        assert await check(None) is False
    finally:
        await backend.dispose()


def _report(ws: str, task_id: str, **payload: Any) -> Callable[[WriteTx], AppendResult]:
    def job(tx: WriteTx) -> AppendResult:
        assert tx.get_task(ws, task_id) is not None  # as the hub's command reads it first
        body = {"taskId": task_id, "status": "running", **payload}
        return tx.append(event(ws, "task.status_changed", body, task_id=task_id))

    return job


def _look(ws: str, task_id: str) -> Callable[[WriteTx], tuple[int, str | None]]:
    def job(tx: WriteTx) -> tuple[int, str | None]:
        task = tx.get_task(ws, task_id)
        assert task is not None
        return task.progress, task.summary

    return job


async def _task_reported_on(store: Store) -> str:
    ws = await create_workspace(store)
    await store.append(event(ws, "task.created", {"taskId": "t1", "title": "Do it"}))
    await store.write(_report(ws, "t1", progress=10), workspace=ws)
    return ws


async def test_a_task_row_another_node_changed_is_read_again(nodes: list[Store]) -> None:
    """A shard starts a batch from the task rows its last commit left only while nobody
    else wrote their workspace since."""
    ws = await _task_reported_on(nodes[0])
    await nodes[1].write(_report(ws, "t1", progress=50, summary="b"), workspace=ws)
    assert await nodes[0].write(_look(ws, "t1"), workspace=ws) == (50, "b")
    await nodes[0].write(_report(ws, "t1", progress=60), workspace=ws)
    assert await nodes[0].write(_look(ws, "t1"), workspace=ws) == (60, "b")


async def test_a_task_row_written_on_the_raw_connection_is_read_again(store: Store) -> None:
    """Rows changed without an event — by a job on the raw connection of the workspace, or
    by a global job (a replay of the log, say) — are not counted on afterwards."""
    ws = await _task_reported_on(store)

    def set_summary(summary: str) -> Callable[[WriteTx], None]:
        def job(tx: WriteTx) -> None:
            tx.connection.execute(
                update(tasks).where(tasks.c.workspace_id == ws).values(summary=summary)
            )

        return job

    await store.write(set_summary("raw"), workspace=ws)
    assert await store.write(_look(ws, "t1"), workspace=ws) == (10, "raw")
    await store.write(_report(ws, "t1", progress=20), workspace=ws)
    await store.write(set_summary("global"))  # names no workspace
    assert await store.write(_look(ws, "t1"), workspace=ws) == (20, "global")


async def test_appending_outside_the_named_workspaces_is_refused(store: Store) -> None:
    a, b = await create_workspace(store), await create_workspace(store)
    with pytest.raises(RuntimeError, match="name every workspace"):
        await store.write(lambda tx: tx.append(note(b)), workspace=a)
    assert await store.last_sequence(b) == 1


async def test_a_flood_in_one_workspace_does_not_sit_ahead_of_anothers_request(
    store: Store, database_url: str
) -> None:
    """One shard (as SQLite always has): eight busy agents of workspace A with 40 jobs each
    queued, then one request for workspace B. The request rides in the first batch, after at
    most A's share of it, not after every agent's share."""
    assert store.dialect  # the fixture migrated the database
    one_shard = await Store.open(database_url, writer_connections=1)
    try:
        flooded, other = await create_workspace(one_shard), await create_workspace(one_shard)
        ran: list[str] = []

        def flood(tx: WriteTx) -> AppendResult:
            ran.append("flood")
            return tx.append(note(flooded))

        def request(tx: WriteTx) -> AppendResult:
            ran.append("request")
            return tx.append(note(other))

        burst = [
            one_shard.write(flood, lane=f"agent:{i % 8}", workspace=flooded) for i in range(320)
        ]
        asked = one_shard.write(request, lane="user:someone", workspace=other)
        await asyncio.wait_for(asyncio.gather(*burst, asked), DEADLINE)
        ahead = ran.index("request")
        assert ahead <= DEFAULT_MAX_BATCH // 2, f"{ahead} of the flood ran before the request"
    finally:
        await one_shard.close()


# --- PostgreSQL: what runs at once and what waits ----------------------------------------


def _held(workspace: str) -> Callable[[WriteTx], AppendResult]:
    """Append, then wait in the transaction for the lock the test holds."""

    def job(tx: WriteTx) -> AppendResult:
        appended = tx.append(note(workspace))
        tx.execute(text(f"SELECT pg_advisory_xact_lock({HELD_KEY})"))
        return appended

    return job


async def _waiters(engine_url: str, classid: int, objid: int) -> int:
    engine = create_async_engine(engine_url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND classid = :classid AND objid = :objid AND objsubid = 2"
                ),
                {"classid": classid, "objid": objid & 0xFFFFFFFF},
            )
            return int(found.scalar_one())
    finally:
        await engine.dispose()


async def test_other_workspaces_commit_while_one_waits_and_its_own_jobs_wait_for_it(
    nodes: list[Store], database_url: str
) -> None:
    store = nodes[0]
    if store.dialect != "postgresql":
        pytest.skip("SQLite has one writer: nothing runs beside anything")
    shards = store.writer_shards
    held = await create_workspace(store)
    free = await create_workspace(store)
    while workspace_key(free) % shards == workspace_key(held) % shards:
        free = await create_workspace(store)  # another shard of this node
    lock_engine = create_async_engine(database_url)
    try:
        async with lock_engine.connect() as lock:
            await lock.execute(text(f"SELECT pg_advisory_lock({HELD_KEY})"))
            await lock.commit()
            stuck = asyncio.ensure_future(store.write(_held(held), workspace=held))
            # the same workspace from another node waits on the workspace's key...
            same = asyncio.ensure_future(nodes[1].write(_append_all([held], 1), workspace=held))
            await until_async(
                lambda: _waiters(database_url, WORKSPACE_CLASS, workspace_key(held)),
                "the second node's job to wait on the workspace's lock",
            )
            # ...a job that names no workspace waits for everything in flight...
            everything = asyncio.ensure_future(nodes[2].write(_append_all([free], 2)))
            await until_async(
                lambda: _waiters(database_url, GLOBAL_CLASS, 0),
                "the global job to wait on the global lock",
            )
            assert not stuck.done() and not same.done() and not everything.done()
            await lock.execute(text(f"SELECT pg_advisory_unlock({HELD_KEY})"))
            await lock.commit()
            first = await asyncio.wait_for(stuck, DEADLINE)
            second = await asyncio.wait_for(same, DEADLINE)
            await asyncio.wait_for(everything, DEADLINE)
    finally:
        await lock_engine.dispose()
    assert (first.event.sequence, second[0].event.sequence) == (2, 3)


async def test_a_workspace_commits_while_another_workspaces_transaction_is_open(
    store: Store, database_url: str
) -> None:
    if store.dialect != "postgresql":
        pytest.skip("SQLite has one writer: nothing runs beside anything")
    shards = store.writer_shards
    held = await create_workspace(store)
    free = await create_workspace(store)
    while workspace_key(free) % shards == workspace_key(held) % shards:
        free = await create_workspace(store)
    lock_engine = create_async_engine(database_url)
    try:
        async with lock_engine.connect() as lock:
            await lock.execute(text(f"SELECT pg_advisory_lock({HELD_KEY})"))
            await lock.commit()
            stuck = asyncio.ensure_future(store.write(_held(held), workspace=held))
            await until_async(
                lambda: _held_lock_waiters(database_url), "the held job to wait in its transaction"
            )
            done = await asyncio.wait_for(
                store.write(_append_all([free], 1), workspace=free), DEADLINE
            )
            assert done[0].event.sequence == 2
            assert not stuck.done()
            await lock.execute(text(f"SELECT pg_advisory_unlock({HELD_KEY})"))
            await lock.commit()
            assert (await asyncio.wait_for(stuck, DEADLINE)).event.sequence == 2
    finally:
        await lock_engine.dispose()


async def _held_lock_waiters(database_url: str) -> int:
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND objid = :objid AND objsubid = 1"
                ),
                {"objid": HELD_KEY},
            )
            return int(found.scalar_one())
    finally:
        await engine.dispose()
