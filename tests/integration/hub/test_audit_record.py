"""Governance writes its audit entry in the same transaction as the fact it bears witness
to: both are there after COMMIT, or neither is."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lineup.core.audit import AuditEntry
from lineup.hub.audit import describe, record, verify_chain
from lineup.hub.recorder import Recorder, Writing
from lineup.protocol.facts import WorkspaceCreatedPayload
from lineup.protocol.ids import new_id
from lineup.store import Reader, Store
from lineup.store import audit as stored

NOW = 1_785_000_000_000


def _witnessed(workspace_id: str, *, fail: bool = False) -> Callable[[Writing], AuditEntry]:
    def job(w: Writing) -> AuditEntry:
        w.append(workspace_id, WorkspaceCreatedPayload(name="Ops"), actor="user:u1")
        entry = record(
            w,
            "role.changed",
            workspace_id=workspace_id,
            actor="user:u1",
            subject="member:u2",
            data={"from": "member", "to": "admin"},
        )
        if fail:
            raise RuntimeError("refused after both were written")
        return entry

    return job


async def test_an_entry_is_recorded_with_its_fact_at_the_jobs_time(store: Store) -> None:
    recorder = Recorder(store, clock=lambda: NOW)
    workspace_id = new_id("ws")
    entry = await recorder.run(_witnessed(workspace_id))
    assert (entry.seq, entry.at_ms, entry.kind) == (1, NOW, "role.changed")
    assert await store.last_sequence(workspace_id) == 1

    def read(r: Reader) -> list[AuditEntry]:
        return stored.for_subject(r.connection, workspace_id, "member:u2")

    assert await store.read(read) == [entry]
    result = await verify_chain(store, page=1)
    assert result.ok and describe(result) == f"audit chain intact: 1 entry, head {entry.hash}"


async def test_a_job_that_fails_leaves_neither_its_fact_nor_its_entry(store: Store) -> None:
    recorder = Recorder(store, clock=lambda: NOW)
    workspace_id = new_id("ws")
    with pytest.raises(RuntimeError):
        await recorder.run(_witnessed(workspace_id, fail=True))
    assert await store.last_sequence(workspace_id) == 0
    assert (await store.read(lambda r: stored.head(r.connection))).seq == 0


async def test_verify_reads_the_chain_page_by_page_to_its_head(store: Store) -> None:
    recorder = Recorder(store, clock=lambda: NOW)
    made = [await recorder.run(_witnessed(new_id("ws"))) for _ in range(5)]
    result = await verify_chain(store, page=2)
    assert result.ok and result.checked == 5 and result.head.hash == made[-1].hash
