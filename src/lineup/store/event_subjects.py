"""The index of which events are about which subject (see :mod:`lineup.protocol.subjects`).

Written beside each event by :func:`lineup.store.projections.apply_event`, in the append's
transaction, so an event and its index rows commit together; a replay refills it like any
projection, and compaction deletes the rows of the events it deletes (:func:`forget_deleted`).
The reads are :meth:`lineup.store.queries.Reader.subject_events`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from lineup.protocol.facts import Fact
from lineup.protocol.subjects import subjects_of
from lineup.store import statements
from lineup.store.schema import event_subjects, events

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent

_INSERT = insert(event_subjects)


def index(conn: Connection, event: StoredEvent, fact: Fact) -> None:
    """Record the event under each subject it is about."""
    for kind, ident in subjects_of(
        fact, task_id=event.task_id, conversation_id=event.conversation_id
    ):
        statements.run(
            conn,
            _INSERT,
            {
                "workspace_id": event.workspace_id,
                "subject_kind": kind,
                "subject_id": ident,
                "sequence": event.sequence,
            },
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


__all__ = ["forget_deleted", "index"]
