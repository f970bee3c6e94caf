"""The audit chain from the hub's side: governance writes its entry in the same transaction
as the fact it bears witness to, and operators verify or export the chain.

``record`` is for jobs run by the recorder (``await hub.recorder.run(job)``): the entry and
the job's events commit together or not at all. ``verify_chain`` and ``export_chain`` read
the chain in pages, each page with the head as of that page's snapshot, so a hub that keeps
appending while they run is no false alarm.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from lineup.core.audit import AuditEntry, ChainWalk, Head, Problem, Verification
from lineup.core.canonical import canonical
from lineup.hub.recorder import Writing
from lineup.protocol.times import iso
from lineup.store import Reader, Store
from lineup.store import audit as stored

PAGE = stored.MAX_PAGE


def record(
    w: Writing,
    kind: str,
    *,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: Mapping[str, Any],
) -> AuditEntry:
    """Append the next audit entry inside ``w``'s transaction, at ``w``'s time."""
    return stored.append(
        w.connection,
        kind=kind,
        workspace_id=workspace_id,
        actor=actor,
        subject=subject,
        data=data,
        now_ms=w.now_ms,
    )


async def verify_chain(store: Store, page: int = PAGE) -> Verification:
    """Walk the whole chain from seq 1 and compare its end with the stored head."""
    walk = ChainWalk()
    after = 0
    while True:

        def read(r: Reader, after: int = after) -> tuple[Head, list[AuditEntry]]:
            return stored.head(r.connection), stored.entries(r.connection, after, page)

        try:
            head, entries = await store.read(read)
        except json.JSONDecodeError:  # a row's data is no longer JSON at all: which row?
            if page > 1:
                return await _narrow_down(store, walk, after)
            return _unreadable(walk)
        failed = walk.feed(entries)
        if failed is not None:
            return failed
        if len(entries) < page:
            return walk.finish(head)
        after = entries[-1].seq


async def _narrow_down(store: Store, walk: ChainWalk, after: int) -> Verification:
    """Go on one entry at a time from ``after``, to name the first that cannot be read."""
    while True:

        def read(r: Reader, after: int = after) -> tuple[Head, list[AuditEntry]]:
            return stored.head(r.connection), stored.entries(r.connection, after, 1)

        try:
            head, entries = await store.read(read)
        except json.JSONDecodeError:
            return _unreadable(walk)
        failed = walk.feed(entries)
        if failed is not None:
            return failed
        if not entries:  # pragma: no cover - the page that failed had a row past ``after``
            return walk.finish(head)
        after = entries[-1].seq


def _unreadable(walk: ChainWalk) -> Verification:
    seq = walk.head.seq + 1
    return Verification(
        ok=False,
        checked=walk.checked,
        head=walk.head,
        message=f"the entry where seq {seq} belongs cannot be read: its data is not JSON",
        first_bad_seq=seq,
        problem=Problem.CHANGED,
    )


def describe(result: Verification) -> str:
    """What ``lineup audit verify`` prints: the intact chain's size and head, or the first
    bad entry — its seq, kind and subject, and what is wrong with it."""
    if result.ok:
        return result.message
    problem = result.problem.value if result.problem is not None else "broken"
    line = f"audit chain broken at seq {result.first_bad_seq} ({problem}): {result.message}"
    found = result.found
    if found is not None:
        where = "entry" if found.seq == result.first_bad_seq else f"found there: seq {found.seq},"
        line += f"\n  {where} kind {found.kind}, subject {found.subject}"
        if found.workspace_id is not None:
            line += f", workspace {found.workspace_id}"
    count = result.checked
    intact = "1 entry before it is" if count == 1 else f"{count} entries before it are"
    line += f"\n  {intact} intact (head {result.head.hash})"
    return line


async def export_chain(
    store: Store, write: Callable[[str], object], *, workspace_id: str | None = None
) -> int:
    """Write the chain (or one workspace's entries) as JSON lines, one entry each in its
    canonical form: the number of entries written."""
    after = 0
    written = 0
    while True:

        def read(r: Reader, after: int = after) -> list[AuditEntry]:
            if workspace_id is None:
                return stored.entries(r.connection, after, PAGE)
            return stored.for_workspace(r.connection, workspace_id, after, PAGE)

        entries = await store.read(read)
        for entry in entries:
            write(_line(entry) + "\n")
        written += len(entries)
        if len(entries) < PAGE:
            return written
        after = entries[-1].seq


def _line(entry: AuditEntry) -> str:
    record = entry.record()
    try:
        return canonical(record).decode("utf-8")
    except ValueError:  # a tampered entry is exported as it stands, for the inquiry
        return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entries_for(read: Reader, workspace_id: str, subjects: list[str]) -> list[dict[str, Any]]:
    """The chain's entries about ``subjects`` in one workspace, in chain order: the evidence a
    run record shows (``seq``, ``at`` as ISO 8601, ``kind``, ``actor``, ``subject``, ``data``,
    ``hash``, ``prevHash``)."""
    found: dict[int, AuditEntry] = {}
    for subject in subjects:
        for entry in stored.for_subject(read.connection, workspace_id, subject):
            found[entry.seq] = entry
    return [
        {
            "seq": e.seq,
            "at": iso(e.at_ms),
            "kind": e.kind,
            "actor": e.actor,
            "subject": e.subject,
            "data": dict(e.data),
            "hash": e.hash,
            "prev_hash": e.prev_hash,
        }
        for _, e in sorted(found.items())
    ]
