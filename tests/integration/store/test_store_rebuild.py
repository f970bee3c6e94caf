"""Replaying the log rebuilds exactly the projections that live appends made."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from lineup.store import Reader, Store
from lineup.store.schema import PROJECTION_TABLES, workspaces

from .streams import ACTIONS, REALISTIC, Step, StreamBuilder


async def _all_projection_rows(store: Store) -> dict[str, list[dict[str, Any]]]:
    def read(r: Reader) -> dict[str, list[dict[str, Any]]]:
        snapshot: dict[str, list[dict[str, Any]]] = {}
        for table in (*PROJECTION_TABLES, workspaces):
            stmt = select(table).order_by(*table.primary_key.columns)
            rows = r.connection.execute(stmt).all()
            snapshot[table.name] = [dict(row._mapping) for row in rows]
        return snapshot

    return await store.read(read)


async def _append_and_rebuild(store: Store, steps: list[Step]) -> None:
    builder = StreamBuilder()
    stream = builder.build(steps)
    for new_event in stream:
        await store.append(new_event)
    live = await _all_projection_rows(store)
    replayed = await store.rebuild_projections()
    rebuilt = await _all_projection_rows(store)
    assert rebuilt == live
    assert replayed >= len({e.id for e in stream})


async def test_rebuilding_a_realistic_stream_gives_the_live_projections(store: Store) -> None:
    await _append_and_rebuild(store, REALISTIC)
    snapshot = await _all_projection_rows(store)
    for name in (
        "users",
        "memberships",
        "agents",
        "conversations",
        "messages",
        "tasks",
        "interactions",
        "artifacts",
        "tool_devices",
        "tool_calls",
        "canvas_instances",
        "canvas_ops",
    ):
        assert snapshot[name], f"the realistic stream should fill {name}"
    statuses = {t["status"] for t in snapshot["tasks"]}
    assert {"queued", "running", "waiting_for_human"} <= statuses, statuses
    assert statuses & {"completed", "failed"}, statuses


async def test_rebuilding_twice_changes_nothing(store: Store) -> None:
    await _append_and_rebuild(store, REALISTIC)
    first = await _all_projection_rows(store)
    await store.rebuild_projections()
    assert await _all_projection_rows(store) == first


async def test_rebuild_keeps_workspace_sequences(store: Store) -> None:
    await _append_and_rebuild(store, REALISTIC[:10])
    before = await _all_projection_rows(store)
    await store.rebuild_projections()
    after = await _all_projection_rows(store)
    assert [w["last_sequence"] for w in after["workspaces"]] == [
        w["last_sequence"] for w in before["workspaces"]
    ]


steps_strategy = st.lists(
    st.tuples(st.sampled_from(ACTIONS), st.integers(min_value=0, max_value=1000)),
    max_size=60,
)


@settings(
    max_examples=15,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # "explain" takes minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=steps_strategy)
async def test_rebuilding_any_valid_stream_gives_the_live_projections(
    store: Store, steps: list[Step]
) -> None:
    # Each example uses fresh workspaces and ids in the same database, so every rebuild
    # also replays the earlier examples' events.
    await _append_and_rebuild(store, steps)
