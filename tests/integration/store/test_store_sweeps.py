"""The hub's cross-workspace background reads (``lineup.store.sweeps``)."""

from __future__ import annotations

from typing import Any

from lineup.store import Reader, Store, sweeps

from .factory import create_workspace, event


async def _append(store: Store, ws: str, type: str, payload: dict[str, Any], **kw: Any) -> None:
    await store.append(event(ws, type, payload, **kw))


async def test_sweeps_find_silent_agents_overdue_interactions_and_task_timelines(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    await _append(store, ws, "agent.paired", {"agentId": "a1", "name": "A"})
    await _append(store, ws, "agent.connected", {"agentId": "a1", "capabilities": []})
    # recorded offline half a second after its last beat
    await _append(
        store, ws, "agent.status_changed",
        {"agentId": "a1", "status": "offline", "lastHeartbeatAt": 1_000}, occurred_at=1_500,
    )  # fmt: skip
    await _append(store, ws, "task.created", {"taskId": "t1", "title": "x", "targetAgentId": "a1"},
                  task_id="t1")  # fmt: skip
    await _append(store, ws, "task.accepted", {"taskId": "t1"}, task_id="t1")
    await _append(
        store, ws, "task.child_created",
        {"childTaskId": "t2", "parentTaskId": "t1", "title": "y", "status": "queued"},
    )  # fmt: skip
    await _append(store, ws, "task.accepted", {"taskId": "t2"}, task_id="t2")
    await _append(
        store, ws, "interaction.requested",
        {"interaction": {"id": "i1", "type": "input", "title": "?", "expiresAt": 5_000}},
    )  # fmt: skip

    def read(r: Reader) -> Any:
        offline = sweeps.agents_with_status(r.connection, "offline")
        unreachable = sweeps.unreachable_tasks(r.connection, offline_since_ms=1_500)
        # the grace period counts from the offline record, not from the last beat
        not_yet = sweeps.unreachable_tasks(r.connection, offline_since_ms=1_499)
        overdue = sweeps.overdue_interactions(r.connection, now_ms=5_000)
        early = sweeps.overdue_interactions(r.connection, now_ms=4_999)
        timeline = r.task_timeline(ws, "t1")
        return offline, unreachable, not_yet, overdue, early, timeline

    offline, unreachable, not_yet, overdue, early, timeline = await store.read(read)
    assert [a.id for a in offline] == ["a1"]
    assert [t.id for t in unreachable] == ["t1", "t2"]
    assert not_yet == []
    assert [i.id for i in overdue] == ["i1"] and early == []
    assert [e.type for e in timeline] == ["task.created", "task.accepted", "task.accepted"]


async def test_a_sweep_pages_through_every_online_agent_by_id(store: Store) -> None:
    ws = await create_workspace(store)
    for n in range(5):
        await _append(store, ws, "agent.paired", {"agentId": f"a{n}", "name": f"A{n}"})
        await _append(store, ws, "agent.connected", {"agentId": f"a{n}", "capabilities": []})

    def pages(r: Reader) -> list[list[str]]:
        seen: list[list[str]] = []
        after = ""
        while page := sweeps.agents_with_status(r.connection, "online", after=after, limit=2):
            seen.append([a.id for a in page])
            after = page[-1].id
        return seen

    assert await store.read(pages) == [["a0", "a1"], ["a2", "a3"], ["a4"]]
