"""The event log: gap-free per-workspace sequences, idempotent append, ordered replay."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from lineup.protocol.errors import Conflict, InvalidArgument, NotFound
from lineup.protocol.ids import new_ulid
from lineup.store import Reader, Store
from lineup.store.schema import events

from .factory import create_workspace, event, note, workspace_created


async def _event_count(store: Store) -> int:
    def read(r: Reader) -> int:
        return int(r.connection.execute(select(func.count()).select_from(events)).scalar_one())

    return await store.read(read)


async def test_workspace_created_takes_sequence_one(store: Store) -> None:
    ws = new_ulid()
    result = await store.append(workspace_created(ws, "Acme"))
    assert (result.event.sequence, result.duplicate) == (1, False)
    workspace = await store.read(lambda r: r.get_workspace(ws))
    assert workspace is not None
    assert (workspace.name, workspace.last_sequence) == ("Acme", 1)


async def test_appends_get_sequences_one_to_n_without_gaps(store: Store) -> None:
    ws = await create_workspace(store)
    sequences = [(await store.append(note(ws, i))).event.sequence for i in range(20)]
    assert sequences == list(range(2, 22))
    assert await store.last_sequence(ws) == 21
    assert [e.sequence for e in await store.read_events(ws)] == list(range(1, 22))


async def test_workspaces_have_independent_sequences(store: Store) -> None:
    a = await create_workspace(store)
    b = await create_workspace(store)
    await store.append(note(a))
    await store.append(note(a))
    assert (await store.append(note(b))).event.sequence == 2
    assert await store.last_sequence(a) == 3


async def test_append_again_returns_the_original_and_changes_nothing(store: Store) -> None:
    ws = await create_workspace(store)
    first = await store.append(event(ws, "test.note", {"v": "original"}, event_id="evt-1"))
    await store.append(note(ws))
    resent = event(ws, "test.note", {"v": "changed"}, event_id="evt-1", occurred_at=1)
    again = await store.append(resent)
    assert again.duplicate
    assert again.event == first.event
    assert again.event.payload == {"v": "original"}
    assert await store.last_sequence(ws) == 3
    assert await _event_count(store) == 3


async def test_an_event_id_another_workspace_used_is_recorded_as_a_new_event(
    store: Store,
) -> None:
    a = await create_workspace(store)
    b = await create_workspace(store)
    await store.append(event(a, "test.note", event_id="shared-id"))
    theirs = await store.append(event(b, "test.note", {"mine": True}, event_id="shared-id"))
    assert not theirs.duplicate
    assert (theirs.event.workspace_id, theirs.event.sequence) == (b, 2)
    assert theirs.event.payload == {"mine": True}


async def test_an_event_id_another_sender_used_is_recorded_as_a_new_event(store: Store) -> None:
    ws = await create_workspace(store)
    first = await store.append(event(ws, "test.note", {"n": 1}, actor="agent:a", event_id="1"))
    second = await store.append(event(ws, "test.note", {"n": 2}, actor="agent:b", event_id="1"))
    assert not second.duplicate
    assert second.event.sequence == first.event.sequence + 1
    assert second.event.payload == {"n": 2}


async def test_a_sender_reusing_an_id_for_another_type_of_event_gets_a_conflict(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    await store.append(event(ws, "test.note", actor="agent:a", event_id="1"))
    with pytest.raises(Conflict) as caught:
        await store.append(event(ws, "test.other", actor="agent:a", event_id="1"))
    assert caught.value.details["reason"] == "id_reused"
    assert await store.last_sequence(ws) == 2


async def test_a_resend_matches_the_original_by_its_fingerprint(store: Store) -> None:
    ws = await create_workspace(store)
    sent = event(ws, "test.note", actor="agent:a", event_id="1")
    first = await store.write(lambda tx: tx.append(sent, fingerprint="f" * 32))
    again = await store.write(lambda tx: tx.append(sent, fingerprint="f" * 32))
    assert again.duplicate and again.event == first.event
    with pytest.raises(Conflict, match="already used for a different event"):
        await store.write(lambda tx: tx.append(sent, fingerprint="0" * 32))
    assert await store.last_sequence(ws) == 2


async def test_append_to_an_unknown_workspace_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        await store.append(note("no-such-workspace"))
    assert await _event_count(store) == 0


async def test_creating_an_existing_workspace_again_is_a_conflict(store: Store) -> None:
    ws = await create_workspace(store)
    with pytest.raises(Conflict):
        await store.append(workspace_created(ws, "Other"))
    workspace = await store.read(lambda r: r.get_workspace(ws))
    assert workspace is not None and workspace.name == "Acme"
    assert workspace.last_sequence == 1


async def test_a_malformed_payload_fails_the_append_without_using_a_sequence(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    with pytest.raises(InvalidArgument):
        await store.append(event(ws, "task.created", {"taskId": "t1"}))  # no title
    assert (await store.append(note(ws))).event.sequence == 2


async def test_events_of_unknown_types_are_stored_as_given(store: Store) -> None:
    ws = await create_workspace(store)
    payload = {"nested": {"list": [1, 2.5, None, True, "ü"]}, "n": 7}
    result = await store.append(
        event(
            ws,
            "future.thing",
            payload,
            actor="agent:a1",
            conversation_id="c1",
            task_id="t1",
            correlation_id="k1",
            occurred_at=123,
        )
    )
    [stored] = await store.read_events(ws, after=1)
    assert stored == result.event
    assert stored.payload == payload
    assert (stored.actor, stored.conversation_id, stored.task_id, stored.correlation_id) == (
        "agent:a1",
        "c1",
        "t1",
        "k1",
    )
    assert stored.occurred_at == 123


async def test_read_events_pages_in_order_after_a_cursor(store: Store) -> None:
    ws = await create_workspace(store)
    for i in range(9):
        await store.append(note(ws, i))
    seen: list[int] = []
    cursor = 0
    while page := await store.read_events(ws, after=cursor, limit=4):
        assert len(page) <= 4
        seen.extend(e.sequence for e in page)
        cursor = page[-1].sequence
    assert seen == list(range(1, 11))
    assert await store.read_events(ws, after=10) == []
    assert await store.first_sequence(ws) == 1


async def test_sequences_of_an_unknown_workspace_are_empty(store: Store) -> None:
    assert await store.last_sequence("nope") == 0
    assert await store.first_sequence("nope") is None
    assert await store.read_events("nope") == []


async def test_recorded_at_comes_from_the_store_clock_and_never_goes_back(
    database_url: str,
) -> None:
    times = iter([5_000, 4_000, 6_000])
    store = await Store.open(database_url, clock=lambda: next(times))
    try:
        await store.migrate()
        ws = await create_workspace(store)
        await store.append(note(ws))
        await store.append(note(ws))
        recorded = [e.recorded_at for e in await store.read_events(ws)]
    finally:
        await store.close()
    assert recorded == [5_000, 5_000, 6_000]


async def test_a_value_the_database_cannot_hold_is_an_invalid_argument(store: Store) -> None:
    ws = await create_workspace(store)
    nul = event(ws, "test.note", {"text": "a\u0000b"})
    if store.dialect == "postgresql":  # JSONB cannot hold NUL; SQLite can
        with pytest.raises(InvalidArgument):
            await store.append(nul)
        assert (await store.append(note(ws))).event.sequence == 2
    else:
        await store.append(nul)
        [stored] = await store.read_events(ws, after=1)
        assert stored.payload == {"text": "a\u0000b"}


async def test_a_value_longer_than_its_column_is_refused_not_cut_short(store: Store) -> None:
    ws = await create_workspace(store)
    long_actor = "agent:" + "x" * 300
    if store.dialect == "postgresql":  # SQLite does not enforce a column's length
        with pytest.raises(InvalidArgument):
            await store.append(event(ws, "test.note", {"n": 1}, actor=long_actor))
        assert (await store.append(note(ws))).event.sequence == 2
        assert [e.actor for e in await store.read_events(ws, after=1)] == ["system"]
    else:
        await store.append(event(ws, "test.note", {"n": 1}, actor=long_actor))
        [stored] = await store.read_events(ws, after=1)
        assert stored.actor == long_actor


async def test_text_that_looks_like_quoting_or_sql_is_stored_as_given(store: Store) -> None:
    """Whatever a payload holds — the quotes the store's own statements use, SQL, escapes,
    text beyond ASCII — comes back exactly, alone and in batches."""
    ws = await create_workspace(store)
    nasty = [
        "$j0$",
        "$j0$ $j1$ $j2$'); DROP TABLE events; --",
        "it's \\'quoted\\' \\\\ and \"double\" \\u0041",
        "emoji 😀, RTL עברית, combining é, ＦＵＬＬ",
        "$$ $ $j$ E'\\x41' /* */ ;",
    ]
    payloads = [{"text": t, t: [t, {"k": t}]} for t in nasty]
    isolated = store.writer_stats.batches_isolated
    await store.append(event(ws, "test.note", payloads[0], actor="agent:it's-$j0$"))
    await asyncio.gather(*(store.append(event(ws, "test.note", p)) for p in payloads[1:]))
    stored = await store.read_events(ws, after=1)
    assert sorted((e.payload["text"] for e in stored), key=nasty.index) == nasty
    assert all(e.payload == payloads[nasty.index(e.payload["text"])] for e in stored)
    assert stored[0].actor == "agent:it's-$j0$"
    # written as held, not by a re-run after the held writes failed
    assert store.writer_stats.batches_isolated == isolated
