"""Reading the log by pages (the cluster's catch-up path): what ``read_events`` returns is what
was appended, page after page, whether the page is full, short, empty or the log has a hole;
and the app's frame for an event read back is the text of the model-built envelope."""

from __future__ import annotations

import json

from sqlalchemy import delete

from lineup.hub.client_gateway import encode_event
from lineup.hub.downlink import for_person
from lineup.store import Store, StoredEvent, WriteTx
from lineup.store.schema import events

from .factory import create_workspace, event, note

# payloads whose JSON text is easy to get subtly wrong
PAYLOADS = [
    {},
    {"text": 'héllo \u2028 "quoted" \\ back\nslash \u00e9\U0001f600', "none": None},
    {"nested": {"list": [1, 2.5, -0.0, 1e300, True, False, None, "x"]}, "big": 2**62},
    {"b": 1, "a": 2, "aa": 3, "": 4},  # key order: as written (SQLite) or JSONB's (PostgreSQL)
]


async def _append(store: Store, workspace_id: str, count: int) -> list[StoredEvent]:
    def job(tx: WriteTx) -> list[StoredEvent]:
        return [tx.append(note(workspace_id, i)).event for i in range(count)]

    return await store.write(job)


async def _read_all(store: Store, workspace_id: str, after: int, limit: int) -> list[int]:
    seen: list[int] = []
    while True:
        page = await store.read_events(workspace_id, after=after, limit=limit)
        seen += [e.sequence for e in page]
        if len(page) < limit:
            return seen
        after = page[-1].sequence


async def test_pages_return_what_was_appended(store: Store) -> None:
    ws = await create_workspace(store)
    appended = [*await store.read_events(ws), *await _append(store, ws, 24)]
    assert [e.sequence for e in appended] == list(range(1, 26))
    assert await store.read_events(ws, after=0, limit=1000) == appended
    assert await store.read_events(ws, after=3, limit=5) == appended[3:8]
    assert await store.read_events(ws, after=20, limit=5) == appended[20:25]  # exactly the end
    assert await store.read_events(ws, after=22, limit=5) == appended[22:]  # a short page
    assert await store.read_events(ws, after=25, limit=5) == []
    assert await store.read_events(ws, after=99, limit=5) == []
    assert await store.read_events(ws, after=0, limit=0) == []
    assert await store.read_events("no-such-workspace", after=0, limit=5) == []
    for limit in (1, 5, 7, 25, 1000):
        assert await _read_all(store, ws, 0, limit) == list(range(1, 26))


async def test_a_hole_in_the_log_is_read_past(store: Store) -> None:
    ws = await create_workspace(store)
    await _append(store, ws, 29)  # sequences 1 … 30

    def prune(tx: WriteTx) -> None:  # as a retention job would: the oldest events go
        tx.connection.execute(
            delete(events).where(events.c.workspace_id == ws, events.c.sequence <= 12)
        )
        tx.connection.execute(
            delete(events).where(events.c.workspace_id == ws, events.c.sequence.between(16, 17))
        )

    await store.write(prune)
    first = await store.read_events(ws, after=0, limit=5)
    assert [e.sequence for e in first] == [13, 14, 15, 18, 19]
    assert [e.sequence for e in await store.read_events(ws, after=14, limit=3)] == [15, 18, 19]
    assert await _read_all(store, ws, 0, 4) == [13, 14, 15, *range(18, 31)]


async def test_events_read_back_equal_the_appended_ones_and_frame_like_the_model(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    for i, payload in enumerate(PAYLOADS):
        await store.append(
            event(
                ws,
                "test.note",
                payload,
                actor="agent:a1",
                conversation_id="c1" if i % 2 else None,
                task_id="t1" if i % 3 else None,
                correlation_id="k1" if i == 1 else None,
                occurred_at=1_767_225_600_000 + 999 * i,
            )
        )
    read = await store.read_events(ws)
    assert [type(e) for e in read] == [StoredEvent] * (1 + len(PAYLOADS))
    # as the JSON column type decodes them (PostgreSQL: JSONB's numbers and key order)
    by_id = [await store.read(lambda r, e=e: r.get_event(ws, e.id)) for e in read]
    assert read == by_id
    assert [json.dumps(e.payload) for e in read] == [json.dumps(e.payload) for e in by_id]
    for e in read:
        model_text = json.dumps(for_person(e), separators=(",", ":"), ensure_ascii=False)
        assert encode_event(e) == model_text
