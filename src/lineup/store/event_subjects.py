"""The index of which events are about which subject (see :mod:`lineup.protocol.subjects`).

Written beside each event, in the append's transaction, so an event and its index rows commit
together: on PostgreSQL by the append's own statement (``lineup.store.eventlog``), elsewhere
by :func:`lineup.store.projections.apply_event` in one multi-row INSERT; a replay refills it
like any projection, and compaction deletes the rows of the events it deletes
(:func:`forget_deleted`). The reads are :meth:`lineup.store.queries.Reader.subject_events`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from sqlalchemy import Insert, bindparam, delete, insert, select
from sqlalchemy.engine import Connection

from lineup.protocol.facts import Fact
from lineup.protocol.subjects import subjects_of
from lineup.store import statements
from lineup.store.schema import event_subjects, events

if TYPE_CHECKING:
    from lineup.store.eventlog import NewEvent, StoredEvent

_MOST_ROWS = 16
"""Statements are built once per number of rows; an event names a handful of subjects."""


def subjects(event: NewEvent, fact: Fact) -> list[tuple[str, str]]:
    """The ``(kind, id)`` subjects the event is about, in a stable order."""
    return sorted(subjects_of(fact, task_id=event.task_id, conversation_id=event.conversation_id))


def index(conn: Connection, event: StoredEvent, fact: Fact) -> None:
    """Record the event under each subject it is about: one INSERT for all of them."""
    rows = subjects(event, fact)
    for start in range(0, len(rows), _MOST_ROWS):
        chunk = rows[start : start + _MOST_ROWS]
        params: dict[str, object] = {"workspace_id": event.workspace_id, "sequence": event.sequence}
        for i, (kind, ident) in enumerate(chunk):
            params[f"kind_{i}"] = kind
            params[f"ident_{i}"] = ident
        statements.run(conn, _insert_rows(len(chunk)), params)


@functools.cache
def _insert_rows(count: int) -> Insert:
    c = event_subjects.c
    return insert(event_subjects).values(
        [
            {
                c.workspace_id: bindparam("workspace_id"),
                c.subject_kind: bindparam(f"kind_{i}"),
                c.subject_id: bindparam(f"ident_{i}"),
                c.sequence: bindparam("sequence"),
            }
            for i in range(count)
        ]
    )


def forget_deleted(conn: Connection, workspace_id: str, start: int, end: int) -> None:
    """Delete the index rows of ``[start, end)`` whose events are gone (compacted); the rows
    of the events a keep rule held stay."""
    still_stored = select(events.c.sequence).where(
        events.c.workspace_id == workspace_id,
        events.c.sequence >= start,
        events.c.sequence < end,
    )
    conn.execute(
        delete(event_subjects).where(
            event_subjects.c.workspace_id == workspace_id,
            event_subjects.c.sequence >= start,
            event_subjects.c.sequence < end,
            event_subjects.c.sequence.not_in(still_stored),
        )
    )


__all__ = ["forget_deleted", "index", "subjects"]
