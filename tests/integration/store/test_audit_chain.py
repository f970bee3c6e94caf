"""The stored audit chain: one chain for the whole hub, appended in the writer's transactions,
gap-free and unforked across hub nodes, and any edit of its rows by SQL is found."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.ext.asyncio import create_async_engine

from lineup.core.audit import EMPTY, AuditEntry, Head, Problem, Verification, verify
from lineup.store import Reader, Store, WriteTx, audit
from lineup.store.schema import audit_entries

from .factory import T0

DEADLINE = 120


def _append(
    subject: str = "approval:apr_1",
    *,
    kind: str = "approval.decided",
    workspace_id: str | None = "ws_a",
    data: dict[str, Any] | None = None,
    now_ms: int = T0,
) -> Callable[[WriteTx], AuditEntry]:
    def job(tx: WriteTx) -> AuditEntry:
        return audit.append(
            tx.connection,
            kind=kind,
            workspace_id=workspace_id,
            actor="user:u1",
            subject=subject,
            data={"decision": "approve"} if data is None else data,
            now_ms=now_ms,
        )

    return job


async def _whole_chain(store: Store) -> tuple[list[AuditEntry], Head]:
    def read(r: Reader) -> tuple[list[AuditEntry], Head]:
        found: list[AuditEntry] = []
        while page := audit.entries(r.connection, found[-1].seq if found else 0):
            found.extend(page)
        return found, audit.head(r.connection)

    return await store.read(read)


async def _verify(store: Store) -> Verification:
    entries, head = await _whole_chain(store)
    return verify(entries, head)


async def _sql(store: Store, statement: Any) -> None:
    await store.write(lambda tx: tx.connection.execute(statement))


async def test_an_empty_chain_has_the_genesis_head(store: Store) -> None:
    entries, head = await _whole_chain(store)
    assert entries == [] and head == EMPTY
    assert (await _verify(store)).ok


async def test_appends_chain_from_genesis_and_move_the_head(store: Store) -> None:
    first = await store.write(_append("approval:apr_1"))
    second = await store.write(_append("execution:exe_1", kind="execution.finished"))
    assert (first.seq, second.seq) == (1, 2)
    assert second.prev_hash == first.hash
    entries, head = await _whole_chain(store)
    assert entries == [first, second]
    assert head == second.head
    result = await _verify(store)
    assert result.ok and result.message == f"audit chain intact: 2 entries, head {second.hash}"


async def test_several_appends_in_one_transaction_follow_each_other(store: Store) -> None:
    def job(tx: WriteTx) -> list[AuditEntry]:
        return [_append(f"approval:apr_{i}")(tx) for i in range(3)]

    made = await store.write(job)
    assert [e.seq for e in made] == [1, 2, 3]
    assert (await _verify(store)).ok


async def test_an_entry_rolls_back_with_the_transaction_it_was_written_in(store: Store) -> None:
    def fails(tx: WriteTx) -> None:
        _append("approval:apr_lost")(tx)
        raise RuntimeError("the fact it witnessed was refused")

    with pytest.raises(RuntimeError):
        await store.write(fails)
    kept = await store.write(_append("approval:apr_kept"))
    assert kept.seq == 1 and kept.prev_hash == EMPTY.hash
    entries, head = await _whole_chain(store)
    assert [e.subject for e in entries] == ["approval:apr_kept"] and head == kept.head


async def test_data_reads_back_with_the_hash_it_was_written_with(store: Store) -> None:
    data = {
        "f": 0.1,
        "small": 1.5e-10,
        "whole": 3.0,
        "big": 2**53 - 1,
        "text": "é \u2028 \U0001f600 \"'\\",
        "nested": {"b": [1.25, None, True, False], "a": {}},
        "": [],
    }
    written = await store.write(_append(data=data))
    (read,), _ = await _whole_chain(store)
    assert read == written
    assert read.data["whole"] == 3
    assert (await _verify(store)).ok


async def test_data_a_json_store_would_change_is_refused_and_nothing_is_written(
    store: Store,
) -> None:
    with pytest.raises(ValueError):
        await store.write(_append(data={"n": 1e21}))
    assert await _whole_chain(store) == ([], EMPTY)


async def test_readers_page_and_filter_by_workspace_and_subject(store: Store) -> None:
    def job(tx: WriteTx) -> None:
        for i in range(6):
            _append(
                f"approval:apr_{i % 2}",
                workspace_id=("ws_a", "ws_b", None)[i % 3],
                now_ms=T0 + i,
            )(tx)

    await store.write(job)

    def read(r: Reader) -> dict[str, list[int]]:
        c = r.connection

        def seqs(found: list[AuditEntry]) -> list[int]:
            return [e.seq for e in found]

        return {
            "page": seqs(audit.entries(c, after=2, limit=2)),
            "ws_a": seqs(audit.for_workspace(c, "ws_a")),
            "ws_b_after_2": seqs(audit.for_workspace(c, "ws_b", after=2)),
            "hub_wide": seqs(audit.for_workspace(c, None, limit=1)),
            "subject": seqs(audit.for_subject(c, "ws_a", "approval:apr_0")),
            "other_subject": seqs(audit.for_subject(c, "ws_a", "approval:apr_1")),
            "hub_subject": seqs(audit.for_subject(c, None, "approval:apr_0")),
        }

    assert await store.read(read) == {
        "page": [3, 4],
        "ws_a": [1, 4],
        "ws_b_after_2": [5],
        "hub_wide": [3],
        "subject": [1],
        "other_subject": [4],
        "hub_subject": [3],
    }


async def test_three_nodes_appending_at_once_write_one_gap_free_unforked_chain(
    store: Store, database_url: str
) -> None:
    """Three stores (three hub nodes: their own engines and writers) on one database."""
    nodes = [store, await Store.open(database_url), await Store.open(database_url)]
    appenders, each = 8, 12

    async def appender(node: int, n: int) -> list[AuditEntry]:
        made = []
        for i in range(each):
            made.append(await nodes[node].write(_append(f"execution:exe_{node}_{n}_{i}")))
        return made

    try:
        made = await asyncio.wait_for(
            asyncio.gather(*(appender(n % 3, n) for n in range(appenders * 3))), DEADLINE
        )
    finally:
        for other in nodes[1:]:
            await other.close()
    total = appenders * 3 * each
    entries, head = await _whole_chain(store)
    assert [e.seq for e in entries] == list(range(1, total + 1))
    assert len({e.prev_hash for e in entries}) == total  # no two entries follow the same one
    assert sorted(e.seq for got in made for e in got) == list(range(1, total + 1))
    assert {e.subject for e in entries} == {e.subject for got in made for e in got}
    if store.dialect == "postgresql":
        # the nodes' appends interleaved, not one node's after another's (on SQLite a writer
        # that holds the file's lock may well keep it for all its batches)
        writers = [e.subject.split("_")[1] for e in entries]
        assert sum(a != b for a, b in itertools.pairwise(writers)) > 2
    assert verify(entries, head).ok and head.seq == total


async def test_a_second_transaction_waits_on_the_head_row_and_then_follows_the_first(
    store: Store, database_url: str
) -> None:
    """The head row alone keeps the chain unforked, even for appends outside the writer's
    own ordering (PostgreSQL: READ COMMITTED writers, a row lock on the head)."""
    if store.dialect != "postgresql":
        pytest.skip("SQLite has one writer at a time: there is no row lock to wait on")
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as a, engine.connect() as b, engine.connect() as watch:
            b_pid = (await b.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            await b.commit()
            await a.begin()
            first = await a.run_sync(lambda c: _append("approval:apr_a")(_tx(c)))
            await b.begin()
            second_task = asyncio.create_task(
                b.run_sync(lambda c: _append("approval:apr_b")(_tx(c)))
            )
            deadline = time.monotonic() + 10
            while True:
                waiting = (
                    await watch.execute(
                        text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"),
                        {"pid": b_pid},
                    )
                ).scalar_one_or_none()
                await watch.rollback()
                if waiting == "Lock":
                    break
                assert not second_task.done(), "the second append did not wait for the first"
                assert time.monotonic() < deadline, "the second append never waited on a lock"
                await asyncio.sleep(0.01)
            await a.commit()
            second = await asyncio.wait_for(second_task, 10)
            await b.commit()
    finally:
        await engine.dispose()
    assert (first.seq, second.seq) == (1, 2) and second.prev_hash == first.hash
    assert (await _verify(store)).ok


class _tx:
    """The little of a ``WriteTx`` that an append needs, over a bare connection."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection


async def _three(store: Store) -> list[AuditEntry]:
    return [await store.write(_append(f"approval:apr_{i}", now_ms=T0 + i)) for i in range(3)]


async def test_a_row_changed_by_sql_is_found_at_its_seq(store: Store) -> None:
    await _three(store)
    await _sql(
        store, update(audit_entries).where(audit_entries.c.seq == 2).values(data={"decision": "x"})
    )
    result = await _verify(store)
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.CHANGED, 2)
    assert result.found is not None and result.found.subject == "approval:apr_1"


async def test_a_row_deleted_by_sql_is_found_at_its_seq(store: Store) -> None:
    await _three(store)
    await _sql(store, delete(audit_entries).where(audit_entries.c.seq == 2))
    result = await _verify(store)
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.REMOVED, 2)


async def test_the_last_row_deleted_by_sql_is_found_by_the_head(store: Store) -> None:
    await _three(store)
    await _sql(store, delete(audit_entries).where(audit_entries.c.seq == 3))
    result = await _verify(store)
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.HEAD_MISMATCH, 3)


async def test_two_rows_swapped_by_sql_are_found_at_the_first(store: Store) -> None:
    entries = await _three(store)
    for seq, source in ((1, entries[2]), (3, entries[0])):
        await _sql(
            store,
            update(audit_entries)
            .where(audit_entries.c.seq == seq)
            .values(subject=source.subject, at=source.at_ms, hash=source.hash,
                    prev_hash=source.prev_hash),
        )  # fmt: skip
    result = await _verify(store)
    assert (result.ok, result.first_bad_seq) == (False, 1)


async def test_the_hub_appends_on_after_a_verified_chain_left_by_another_store(
    store: Store, database_url: str
) -> None:
    await _three(store)
    again = await Store.open(database_url)
    try:
        fourth = await again.write(_append("approval:apr_3"))
    finally:
        await again.close()
    assert fourth.seq == 4
    assert (await _verify(store)).ok
    rows = await store.read(
        lambda r: r.connection.execute(select(audit_entries.c.seq)).scalars().all()
    )
    assert sorted(rows) == [1, 2, 3, 4]
