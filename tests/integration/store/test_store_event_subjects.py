"""The subject index is written with each event, and the migration that made it fills it
from an older log exactly as live appends would have."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from sqlalchemy import delete, select

from lineup.store import Reader, Store, WriteTx
from lineup.store.schema import event_subjects

from .streams import REALISTIC, StreamBuilder, append_in_batches

MIGRATION = (
    Path(__file__).resolve().parents[3]
    / "src/lineup/store/migrations/versions/rawevents_0001_event_subjects.py"
)


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rawevents_0001", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _index(store: Store) -> list[tuple[str, str, str, int]]:
    def read(r: Reader) -> list[tuple[str, str, str, int]]:
        stmt = select(event_subjects).order_by(*event_subjects.primary_key.columns)
        return [tuple(row) for row in r.connection.execute(stmt).all()]  # type: ignore[misc]

    return await store.read(read)


async def test_the_migrations_backfill_indexes_the_log_as_live_appends_do(store: Store) -> None:
    for event in StreamBuilder().build(REALISTIC):
        await store.append(event)
    live = await _index(store)
    kinds = {kind for _, kind, _, _ in live}
    assert {"task", "message", "interaction", "conversation", "tool_call", "agent"} <= kinds

    migration = _migration()
    migration.PAGE = 7  # several pages, across both workspaces

    def refill(tx: WriteTx) -> None:
        tx.connection.execute(delete(event_subjects))
        migration._backfill(tx.connection, event_subjects)

    await store.write(refill)
    assert await _index(store) == live


async def test_appends_made_in_batches_index_their_subjects_as_the_backfill_does(
    store: Store,
) -> None:
    await append_in_batches(store, StreamBuilder().build(REALISTIC * 3))
    live = await _index(store)
    migration = _migration()

    def refill(tx: WriteTx) -> None:
        tx.connection.execute(delete(event_subjects))
        migration._backfill(tx.connection, event_subjects)

    await store.write(refill)
    assert await _index(store) == live
