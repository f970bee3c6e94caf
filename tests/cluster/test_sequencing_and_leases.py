"""The cluster's parts in-process, on both databases: the sequencer that orders what the stream
brings and heals its holes from the database, leases, the agent-link registry, and the
app's frame built without a model."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from lineup.hub.client_gateway import person_frame
from lineup.hub.cluster import links
from lineup.hub.cluster.sequencer import Sequencer
from lineup.hub.downlink import for_person
from lineup.hub.fanout import Broker, Subscription
from lineup.hub.leases import DatabaseLeases, LocalLeases, node_lease
from lineup.hub.streams import decode_events, encode_events
from lineup.protocol.times import now_ms
from lineup.store import NewEvent, Store, StoredEvent, agent_links
from tests.support.waiting import until_async

WS = "ws_cluster"


async def _log(store: Store, count: int) -> list[StoredEvent]:
    """A workspace with ``count`` events (of a type no projection handles)."""
    created = await store.append(
        NewEvent("evt_ws", WS, "workspace.created", "system", {"name": "c"}, occurred_at=1)
    )
    events = [created.event]
    for i in range(count - 1):
        result = await store.append(
            NewEvent(f"evt_{i}", WS, "bench.noted", "system", {"i": i, "none": None}, 2 + i)
        )
        events.append(result.event)
    return events


def _drain(subscription: Subscription) -> list[int]:
    got = []
    while not subscription.queue.empty():
        item = subscription.queue.get_nowait()
        assert isinstance(item, StoredEvent)
        got.append(item.sequence)
    return got


async def test_events_in_order_are_published_at_once_and_repeats_dropped(store: Store) -> None:
    events = await _log(store, 5)
    broker = Broker()
    sub = broker.subscribe(WS)
    sequencer = Sequencer(store, broker)
    sequencer.offer(events[:3])
    sequencer.offer(events[1:5])
    assert _drain(sub) == [1, 2, 3, 4, 5]
    assert sequencer.fills == 0


async def test_an_event_ahead_of_a_hole_waits_for_the_missing_one_from_the_stream(
    store: Store,
) -> None:
    events = await _log(store, 5)
    broker = Broker()
    sub = broker.subscribe(WS)
    sequencer = Sequencer(store, broker, hold=5.0)
    sequencer.offer(events[:2])
    sequencer.offer([events[3], events[4]])  # another node's 3 is late
    assert _drain(sub) == [1, 2]
    sequencer.offer([events[2]])
    assert _drain(sub) == [3, 4, 5]
    assert sequencer.fills == 0


async def test_a_hole_the_stream_never_fills_is_read_from_the_database(store: Store) -> None:
    events = await _log(store, 6)
    broker = Broker()
    sub = broker.subscribe(WS)
    sequencer = Sequencer(store, broker, hold=0.01)
    sequencer.offer(events[:2])
    sequencer.offer([events[5]])  # 3..5 were lost on the way
    await until_async(lambda: not sub.queue.empty() and sequencer.fills == 1, "the fill")
    await until_async(lambda: sub.queue.qsize() >= 6 - 2, "the filled events")
    assert _drain(sub) == [1, 2, 3, 4, 5, 6]


async def test_a_lost_tail_is_found_by_the_check_once_it_persists(store: Store) -> None:
    events = await _log(store, 4)
    broker = Broker()
    sub = broker.subscribe(WS)
    sequencer = Sequencer(store, broker)
    sequencer.offer(events[:2])  # 3 and 4 never come: nothing later shows the hole
    await sequencer.check(immediate=False)  # first sighting: maybe still on its way
    assert _drain(sub) == [1, 2]
    await sequencer.check(immediate=False)  # still missing: read it
    await until_async(lambda: sub.queue.qsize() == 2, "the tail")
    assert _drain(sub) == [3, 4]


async def test_the_check_fills_at_once_when_the_stream_is_down(store: Store) -> None:
    events = await _log(store, 3)
    broker = Broker()
    sub = broker.subscribe(WS)
    sub.live, sub.cursor = True, 1  # a follower that saw sequence 1 and nothing since
    sequencer = Sequencer(store, broker)
    await sequencer.check(immediate=True)
    await until_async(lambda: sub.queue.qsize() == 2, "the events after the follower's cursor")
    assert _drain(sub) == [2, 3]
    assert events[-1].sequence == 3


async def test_workspaces_nobody_follows_here_are_not_tracked(store: Store) -> None:
    events = await _log(store, 3)
    broker = Broker()
    sequencer = Sequencer(store, broker)
    sequencer.offer(events)
    await sequencer.check(immediate=True)
    assert sequencer.fills == 0


async def test_stream_entries_round_trip_events_exactly(store: Store) -> None:
    events = await _log(store, 3)
    assert decode_events(encode_events(events)) == events


async def test_the_apps_frame_built_directly_equals_the_models(store: Store) -> None:
    events = await _log(store, 3)
    extra = StoredEvent(
        id="evt_x",
        workspace_id=WS,
        type="task.status_changed",
        actor="agent:a1",
        payload={"taskId": "t1", "status": "running", "summary": None, "nested": {"n": None}},
        occurred_at=1_764_480_000_123,
        conversation_id="c1",
        task_id="t1",
        correlation_id="k1",
        sequence=9,
        recorded_at=1_764_480_000_124,
    )
    for event in [*events, extra]:
        assert person_frame(event) == for_person(event)
        assert list(person_frame(event)) == list(for_person(event))


# --- leases --------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now


async def test_a_lease_is_held_by_one_node_until_it_expires_then_another_takes_it(
    store: Store,
) -> None:
    clock = _Clock()
    a = DatabaseLeases(store, "a-1", clock, ttl=10)
    b = DatabaseLeases(store, "b-1", clock, ttl=10)
    assert await a.acquire("monitor")
    assert not await b.acquire("monitor")
    assert a.held("monitor") and not b.held("monitor")
    clock.now += 5_000
    assert await a.acquire("monitor")  # renewed
    clock.now += 9_000
    assert not await b.acquire("monitor")  # renewed 9 s ago: still a's
    clock.now += 2_000  # a stopped renewing 11 s ago
    assert await b.acquire("monitor")
    assert not await a.acquire("monitor")
    assert not a.held("monitor") and b.held("monitor")


async def test_a_released_lease_is_taken_over_at_once(store: Store) -> None:
    clock = _Clock()
    a = DatabaseLeases(store, "a-1", clock, ttl=10)
    b = DatabaseLeases(store, "b-1", clock, ttl=10)
    a.keep("notifications")
    await a.renew()
    assert a.held("notifications") and a.held(node_lease("a-1"))
    await a.release_all()
    assert await b.acquire("notifications")


def _blocked_until(predicate: Callable[[], bool], within: float) -> bool:
    """Hold the event loop (as a flood of work would) until ``predicate`` or ``within`` s."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def test_leases_are_renewed_while_the_event_loop_is_busy(store: Store) -> None:
    leases = DatabaseLeases(store, "a-1", now_ms, ttl=1.5)
    leases.keep("monitor")
    keeper = asyncio.create_task(leases.run())
    try:
        await until_async(lambda: leases.held("monitor"), "the first renewal")
        first = leases._valid_until["monitor"]
        # the loop turns for none of the next two renewal intervals; the leases stay held
        assert _blocked_until(lambda: leases._valid_until["monitor"] > first, within=1.4)
        assert leases.held("monitor") and leases.held(node_lease("a-1"))
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper


async def test_a_node_whose_event_loop_stopped_turning_stops_renewing(store: Store) -> None:
    leases = DatabaseLeases(store, "a-1", now_ms, ttl=1.0)
    keeper = asyncio.create_task(leases.run())
    try:
        await until_async(lambda: leases.held(node_lease("a-1")), "the first renewal")
        # the loop last turned now at the latest; past ttl (and a renewal's own time) ...
        stalled = time.monotonic() + leases.ttl + 0.5
        _blocked_until(lambda: time.monotonic() > stalled, within=2)
        renewed = leases._valid_until[node_lease("a-1")]
        # ... and two renewal intervals later, still stalled: nothing was renewed
        _blocked_until(lambda: False, within=0.7)
        assert leases._valid_until.get(node_lease("a-1")) == renewed
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper


async def test_held_expires_locally_when_renewals_stop() -> None:
    now = [100.0]
    leases = DatabaseLeases(None, "a-1", lambda: 0, ttl=10, monotonic=lambda: now[0])  # type: ignore[arg-type]
    leases._valid_until["monitor"] = now[0] + 8
    assert leases.held("monitor")
    now[0] += 9
    assert not leases.held("monitor")


async def test_on_one_node_every_lease_is_held() -> None:
    leases = LocalLeases("n-1")
    leases.keep("monitor")
    assert leases.held("monitor") and await leases.acquire("anything")
    assert leases.held_names() == ["monitor"]


# --- the agent-link registry ----------------------------------------------------------------


async def test_only_the_node_holding_an_agent_may_unlink_it(store: Store) -> None:
    await store.write(lambda tx: agent_links.link(tx.connection, "agent_1", WS, "a-1", 1_000))
    await store.write(lambda tx: agent_links.link(tx.connection, "agent_1", WS, "b-1", 2_000))
    assert not await store.write(lambda tx: agent_links.unlink(tx.connection, "agent_1", "a-1"))
    assert await store.write(lambda tx: agent_links.unlink(tx.connection, "agent_1", "b-1"))


async def test_an_agent_on_a_node_that_stopped_renewing_is_stale(store: Store) -> None:
    clock = _Clock()
    b = DatabaseLeases(store, "b-1", clock, ttl=10)
    await b.renew()  # b's node lease: expires at now + 10 s
    connected = clock.now
    await store.write(lambda tx: agent_links.link(tx.connection, "agent_1", WS, "b-1", connected))

    async def check(now: int) -> tuple[bool, int | None]:
        return await store.write(
            lambda tx: links.unlink_if_stale(tx, "agent_1", "a-1", now, 50_000, 10_000)
        )

    assert await check(clock.now + 30_000) == (False, None)  # b was alive 30 s ago
    stale, alive_at = await check(clock.now + 60_000)  # b's last renewal was 60 s ago
    assert stale and alive_at == connected
    assert await check(clock.now + 60_000) == (True, None)  # unlinked: no row left


async def test_an_agent_on_a_node_whose_lease_still_runs_is_not_stale_however_late_it_renews(
    store: Store,
) -> None:
    clock = _Clock()
    b = DatabaseLeases(store, "b-1", clock, ttl=10)
    await b.renew()  # b's node lease: renewed now, expires at now + 10 s
    renewed = clock.now
    await store.write(
        lambda tx: agent_links.link(tx.connection, "agent_1", WS, "b-1", renewed - 60_000)
    )

    async def check(now: int) -> tuple[bool, int | None]:  # a 4 s heartbeat window
        return await store.write(
            lambda tx: links.unlink_if_stale(tx, "agent_1", "a-1", now, 4_000, 10_000)
        )

    # a loaded node renews late: 6 s since, more than the window, but its lease still runs
    assert await check(renewed + 6_000) == (False, None)
    assert await check(renewed + 9_999) == (False, None)
    # the lease expired: b is dead, and its agent stale since b was last alive
    assert await check(renewed + 10_000) == (True, renewed)
