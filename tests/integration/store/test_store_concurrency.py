"""Concurrent appenders never produce a gap or a duplicate sequence."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

from sqlalchemy import Row, select

from lineup.store import Reader, Store
from lineup.store.schema import events

from .factory import create_workspace, note

DEADLINE = 120
APPENDERS = 40
EVENTS_EACH = 25


async def _sequences_by_workspace(store: Store, workspaces: list[str]) -> dict[str, list[int]]:
    def read(r: Reader) -> Sequence[Row[tuple[str, int]]]:
        return r.connection.execute(
            select(events.c.workspace_id, events.c.sequence)
            .where(events.c.workspace_id.in_(workspaces))
            .order_by(events.c.workspace_id, events.c.sequence)
        ).all()

    rows = await store.read(read)
    found: dict[str, list[int]] = {ws: [] for ws in workspaces}
    for ws, seq in rows:
        found[ws].append(seq)
    return found


async def _appender(stores: list[Store], workspaces: list[str], seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    appended = dict.fromkeys(workspaces, 0)
    for i in range(EVENTS_EACH):
        ws = rng.choice(workspaces)
        result = await rng.choice(stores).append(note(ws, i))
        assert not result.duplicate
        appended[ws] += 1
    return appended


async def _run(stores: list[Store], workspaces: list[str]) -> None:
    start = {ws: await stores[0].last_sequence(ws) for ws in workspaces}
    results = await asyncio.wait_for(
        asyncio.gather(*(_appender(stores, workspaces, seed) for seed in range(APPENDERS))),
        DEADLINE,
    )
    found = await _sequences_by_workspace(stores[0], workspaces)
    for ws in workspaces:
        expected = start[ws] + sum(r[ws] for r in results)
        assert found[ws] == list(range(1, expected + 1))
        assert await stores[0].last_sequence(ws) == expected


async def test_concurrent_appenders_get_gap_free_sequences_per_workspace(store: Store) -> None:
    workspaces = [await create_workspace(store) for _ in range(3)]
    before = store.writer_stats
    await _run([store], workspaces)
    after = store.writer_stats
    jobs = after.jobs_committed - before.jobs_committed
    assert jobs == APPENDERS * EVENTS_EACH
    assert after.transactions_committed - before.transactions_committed < jobs


async def test_two_stores_on_one_database_stay_gap_free(store: Store, database_url: str) -> None:
    """Two hub nodes (separate engines and writers) appending to the same workspaces."""
    workspaces = [await create_workspace(store) for _ in range(2)]
    other = await Store.open(database_url)
    try:
        await _run([store, other], workspaces[:1])
        await _run([store, other], workspaces)
    finally:
        await other.close()
