"""The notification worker passes over what cannot notify in one statement, on both databases.

Between two passes a busy agent leaves thousands of progress reports; the worker asks the
database where the first event that may notify lies (by type, and for some types by the
status in the payload) and reads from there. The status is read from the stored JSON by the
database itself (SQLite's ``json_extract``, PostgreSQL's ``->>``), so both are exercised.
"""

from __future__ import annotations

from lineup.store import Store
from lineup.store import notifications as ns

from .factory import create_workspace, event, note

TYPES = {"test.alarm", "test.status"}
STATUSES = {"test.status": {"bad", "worse"}}


async def _first(store: Store, workspace_id: str, after: int, until: int = 1_000_000) -> int | None:
    return await store.read(
        lambda r: ns.first_that_may_notify(
            r.connection, workspace_id, after, until, types=TYPES, statuses=STATUSES
        )
    )


async def test_the_first_event_that_may_notify_is_found_past_thousands_that_cannot(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    other = await create_workspace(store, "Other")
    await store.append(event(other, "test.alarm"))  # another workspace's: never this one's

    async def append_quiet(count: int) -> int:
        last = 0
        for n in range(count):
            quiet = (
                event(ws, "test.status", {"status": "fine", "n": n})
                if n % 3
                else note(ws, n)  # a type nobody watches
            )
            last = (await store.append(quiet)).event.sequence
        return last

    start = await store.read(lambda r: r.last_sequence(ws))
    assert await _first(store, ws, start) is None

    quiet_until = await append_quiet(1_500)
    assert await _first(store, ws, start) is None, "progress reports and notes cannot notify"

    bad = (await store.append(event(ws, "test.status", {"status": "bad"}))).event.sequence
    assert bad == quiet_until + 1
    await append_quiet(10)
    alarm = (await store.append(event(ws, "test.alarm", {}))).event.sequence
    worse = (await store.append(event(ws, "test.status", {"status": "worse"}))).event.sequence

    assert await _first(store, ws, start) == bad
    assert await _first(store, ws, bad - 1) == bad
    assert await _first(store, ws, bad) == alarm, "a watched type with any status"
    assert await _first(store, ws, alarm) == worse
    assert await _first(store, ws, worse) is None
    assert await _first(store, ws, start, until=bad - 1) is None, "no further than asked"
    assert await _first(store, ws, start, until=bad) == bad
