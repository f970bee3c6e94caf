"""The ``audit_entries`` and ``audit_head`` tables: the audit chain as stored.

:func:`append` runs inside a writer transaction, beside the fact it bears witness to, so the
two commit or roll back together. It updates the head row before it reads it: on PostgreSQL
that row's lock makes the appends of several hub nodes take their turns (a second node's
UPDATE waits for the first's COMMIT, then reads the head that one left), so the one chain
never forks and its seqs stay gap-free. What is computed and checked is
:mod:`lineup.core.audit`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Row, bindparam, insert, select, update
from sqlalchemy.engine import Connection

from lineup.core.audit import AuditEntry, Head, next_entry
from lineup.store import statements
from lineup.store.schema import AUDIT_HEAD_ID, audit_entries, audit_head

MAX_PAGE = 1000
"""No read returns more entries than this, whatever the caller asks for."""

_ENTRY_COLUMNS = (
    audit_entries.c.seq,
    audit_entries.c.at,
    audit_entries.c.kind,
    audit_entries.c.workspace_id,
    audit_entries.c.actor,
    audit_entries.c.subject,
    audit_entries.c.data,
    audit_entries.c.prev_hash,
    audit_entries.c.hash,
)


_LOCK_HEAD = (
    update(audit_head)
    .where(audit_head.c.id == AUDIT_HEAD_ID)
    .values(seq=audit_head.c.seq, hash=audit_head.c.hash)
)
_HEAD = select(audit_head.c.seq, audit_head.c.hash).where(audit_head.c.id == AUDIT_HEAD_ID)
_INSERT = insert(audit_entries)
_MOVE_HEAD = (
    update(audit_head)
    .where(audit_head.c.id == AUDIT_HEAD_ID)
    .values(seq=bindparam("new_seq"), hash=bindparam("new_hash"))
)


def append(
    conn: Connection,
    *,
    kind: str,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: Mapping[str, Any],
    now_ms: int,
) -> AuditEntry:
    """Add the next entry to the chain, in the caller's (writer) transaction.

    ``ValueError`` for data that is not canonicalisable JSON (see
    ``lineup.core.audit.stored_form``); nothing is written then."""
    # the head row first: on PostgreSQL its lock orders every node's appends (no forks)
    statements.run(conn, _LOCK_HEAD, {})
    found = statements.run(conn, _HEAD, {}).first()
    assert found is not None, "the audit head row is made by the migration"
    current = Head(found["seq"], found["hash"])
    entry = next_entry(
        current,
        at_ms=now_ms,
        kind=kind,
        workspace_id=workspace_id,
        actor=actor,
        subject=subject,
        data=data,
    )
    statements.run(
        conn,
        _INSERT,
        {
            "seq": entry.seq,
            "at": entry.at_ms,
            "kind": entry.kind,
            "workspace_id": entry.workspace_id,
            "actor": entry.actor,
            "subject": entry.subject,
            "data": entry.data,
            "prev_hash": entry.prev_hash,
            "hash": entry.hash,
        },
    )
    statements.run(conn, _MOVE_HEAD, {"new_seq": entry.seq, "new_hash": entry.hash})
    return entry


def head(conn: Connection) -> Head:
    """The stored head: the last entry's seq and hash, as appends left them."""
    row = conn.execute(
        select(audit_head.c.seq, audit_head.c.hash).where(audit_head.c.id == AUDIT_HEAD_ID)
    ).one()
    return Head(row.seq, row.hash)


def entries(conn: Connection, after: int = 0, limit: int = MAX_PAGE) -> list[AuditEntry]:
    """The chain's entries with seq above ``after``, in seq order."""
    stmt = (
        select(*_ENTRY_COLUMNS)
        .where(audit_entries.c.seq > after)
        .order_by(audit_entries.c.seq)
        .limit(_page(limit))
    )
    return [_entry(row) for row in conn.execute(stmt)]


def for_subject(conn: Connection, workspace_id: str | None, subject: str) -> list[AuditEntry]:
    """Everything the chain says about ``subject`` (an approval, an execution, …) in
    ``workspace_id`` (``None``: hub-wide subjects), in seq order."""
    stmt = (
        select(*_ENTRY_COLUMNS)
        .where(_in_workspace(workspace_id), audit_entries.c.subject == subject)
        .order_by(audit_entries.c.seq)
    )
    return [_entry(row) for row in conn.execute(stmt)]


def for_workspace(
    conn: Connection, workspace_id: str | None, after: int = 0, limit: int = MAX_PAGE
) -> list[AuditEntry]:
    """The entries of ``workspace_id`` (``None``: the hub-wide ones) with seq above
    ``after``, in seq order. Not a chain of its own: its seqs have the others' gaps."""
    stmt = (
        select(*_ENTRY_COLUMNS)
        .where(_in_workspace(workspace_id), audit_entries.c.seq > after)
        .order_by(audit_entries.c.seq)
        .limit(_page(limit))
    )
    return [_entry(row) for row in conn.execute(stmt)]


def _in_workspace(workspace_id: str | None) -> Any:
    if workspace_id is None:
        return audit_entries.c.workspace_id.is_(None)
    return audit_entries.c.workspace_id == workspace_id


def _page(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def _entry(row: Row[Any]) -> AuditEntry:
    return AuditEntry(
        seq=row.seq,
        at_ms=row.at,
        kind=row.kind,
        workspace_id=row.workspace_id,
        actor=row.actor,
        subject=row.subject,
        data=row.data,
        prev_hash=row.prev_hash,
        hash=row.hash,
    )
