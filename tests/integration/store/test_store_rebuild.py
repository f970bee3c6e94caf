"""Replaying the log rebuilds exactly the projections that live appends made."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from lineup.store import Reader, Store
from lineup.store.schema import PROJECTION_TABLES, workspaces

from .factory import create_workspace, event
from .streams import ACTIONS, REALISTIC, Step, StreamBuilder, append_in_batches


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


async def test_appends_made_in_batches_project_as_the_replay_does(store: Store) -> None:
    """Many appends in one transaction write their events, counters and tasks' rows together
    (on PostgreSQL in one statement): what they leave is what replaying them one by one
    makes, and the log holds every event as given, gap-free per workspace."""
    stream = StreamBuilder().build(REALISTIC * 3)
    await append_in_batches(store, stream)
    live = await _all_projection_rows(store)
    await store.rebuild_projections()
    assert await _all_projection_rows(store) == live
    for workspace_id in {e.workspace_id for e in stream}:
        given = {e.id: e for e in stream if e.workspace_id == workspace_id}
        stored = await store.read_events(workspace_id, limit=len(stream))
        assert [e.sequence for e in stored] == list(range(1, len(given) + 1))
        assert {e.id for e in stored} == set(given)
        for e in stored:
            sent = given[e.id]
            assert (e.type, e.actor, e.payload, e.occurred_at, e.task_id) == (
                sent.type,
                sent.actor,
                sent.payload,
                sent.occurred_at,
                sent.task_id,
            )


async def test_tasks_reported_on_in_one_batch_project_as_the_replay_does(store: Store) -> None:
    """Reports on several tasks of two workspaces, in one batch each: several tasks with
    the same columns to set, others with different ones, one task reported on twice (the
    later report wins column by column), JSON and text beyond ASCII among the values."""
    a, b = await create_workspace(store), await create_workspace(store)
    tasks = {"t1": a, "t2": a, "t3": a, "t4": a, "t5": a, "t6": b, "t7": b}
    for task_id, ws in tasks.items():
        await store.append(event(ws, "task.created", {"taskId": task_id, "title": task_id}))

    def status(task_id: str, **payload: Any) -> Any:
        return event(tasks[task_id], "task.status_changed", {"taskId": task_id, **payload})

    reports = [
        status("t1", status="running", progress=10),
        status("t2", status="running", progress=20),
        status("t3", status="running", progress=30, summary="reading “ünïcode” ✓"),
        status("t4", status="running", progress=40, summary="writing"),
        status("t1", status="failed", error={"code": "boom", "detail": ["x", 1]}),
        status("t5", status="running", progress=50),
        event(b, "task.cancel_requested", {"taskId": "t6", "reason": "enough"}),
        event(b, "task.cancel_requested", {"taskId": "t7"}),
    ]
    largest = store.writer_stats.largest_batch
    await asyncio.wait_for(asyncio.gather(*(store.append(e) for e in reports)), 30)
    assert store.writer_stats.largest_batch >= 5 > largest
    live = await _all_projection_rows(store)
    await store.rebuild_projections()
    assert await _all_projection_rows(store) == live
    rows = {t["id"]: t for t in live["tasks"]}
    assert [rows[t]["progress"] for t in ("t1", "t2", "t3", "t4", "t5")] == [10, 20, 30, 40, 50]
    assert (rows["t1"]["status"], rows["t1"]["error"]) == (
        "failed",
        {"code": "boom", "detail": ["x", 1]},
    )
    assert (rows["t3"]["summary"], rows["t4"]["summary"]) == ("reading “ünïcode” ✓", "writing")
    assert [(rows[t]["cancel_requested"], rows[t]["cancel_reason"]) for t in ("t6", "t7")] == [
        (True, "enough"),
        (True, None),
    ]


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
