"""Imported session files: their projections and the reads an export makes.

``session.imported`` keeps the file's header (``imported_sessions``); each
``session.entries_imported`` keeps its entries, of any branch, at their places in the file
(``session_entries``) and, when its last entry is a message on the active branch, the
message the conversation shows (``messages``, at the message's own time). A replay of the
log rebuilds all three. The export of a conversation reads these and the conversation's
events (:func:`conversation_events`), and ``lineup.protocol.session_file.history`` makes the
file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from lineup.protocol import facts as f
from lineup.store.handlers import Handler
from lineup.store.handlers import on as _on
from lineup.store.schema import (
    conversations,
    event_subjects,
    events,
    imported_sessions,
    messages,
    session_entries,
    tasks,
)

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent


def _session_imported(conn: Connection, event: StoredEvent, fact: f.SessionImportedPayload) -> None:
    conn.execute(
        imported_sessions.insert().values(
            conversation_id=fact.conversation_id,
            workspace_id=event.workspace_id,
            session_id=str(fact.header.get("sessionId", "")),
            header=dict(fact.header),
            format_version=fact.format_version,
            source_format=fact.source_format,
            source_version=fact.source_version,
            entry_count=fact.entry_count,
            leaf_id=fact.leaf_id,
            created_at=event.recorded_at,
        )
    )


def _entries_imported(
    conn: Connection, event: StoredEvent, fact: f.SessionEntriesImportedPayload
) -> None:
    rows = [
        {
            "workspace_id": event.workspace_id,
            "conversation_id": fact.conversation_id,
            "position": fact.first + i,
            "sequence": event.sequence,
            "entry_id": str(item.entry["id"]),
            "parent_id": item.entry.get("parentId"),
            "format_version": fact.format_version,
            "entry": dict(item.entry),
            "shown": bool(item.shown),
        }
        for i, item in enumerate(fact.entries)
    ]
    if rows:
        conn.execute(session_entries.insert(), rows)
    shown = fact.message
    if shown is not None:
        conn.execute(
            messages.insert().values(
                id=shown.message_id,
                workspace_id=event.workspace_id,
                conversation_id=fact.conversation_id,
                author_kind=shown.author.kind,
                author_id=shown.author.id,
                author_name=shown.author.name,
                content=shown.content,
                blocks=None if shown.blocks is None else [b.wire() for b in shown.blocks],
                attachments=None
                if shown.attachments is None
                else [a.wire() for a in shown.attachments],
                target_agent_id=None,
                task_id=None,
                created_at=shown.created_at,
                sequence=event.sequence,
            )
        )
    conn.execute(
        conversations.update()
        .where(
            conversations.c.workspace_id == event.workspace_id,
            conversations.c.id == fact.conversation_id,
        )
        .values(updated_at=event.recorded_at, last_sequence=event.sequence)
    )


HANDLERS: Mapping[str, Handler] = dict(
    [
        _on(f.SessionImportedPayload, _session_imported),
        _on(f.SessionEntriesImportedPayload, _entries_imported),
    ]
)


# --- reads ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportedSession:
    session_id: str
    header: dict[str, Any]
    format_version: int
    source_format: str
    source_version: int
    entry_count: int
    leaf_id: str | None


@dataclass(frozen=True, slots=True)
class StoredEntry:
    position: int
    sequence: int
    entry_id: str
    format_version: int
    entry: dict[str, Any]
    shown: bool


def imported_session(
    conn: Connection, workspace_id: str, conversation_id: str
) -> ImportedSession | None:
    c = imported_sessions.c
    row = conn.execute(
        select(
            c.session_id,
            c.header,
            c.format_version,
            c.source_format,
            c.source_version,
            c.entry_count,
            c.leaf_id,
        ).where(c.workspace_id == workspace_id, c.conversation_id == conversation_id)
    ).first()
    return None if row is None else ImportedSession(*row)


def imported_entries(
    conn: Connection, workspace_id: str, conversation_id: str
) -> list[StoredEntry]:
    """Every entry of the conversation's imported file, in file order."""
    c = session_entries.c
    rows = conn.execute(
        select(c.position, c.sequence, c.entry_id, c.format_version, c.entry, c.shown)
        .where(c.workspace_id == workspace_id, c.conversation_id == conversation_id)
        .order_by(c.position)
    ).all()
    return [StoredEntry(*row) for row in rows]


def conversation_events(
    conn: Connection, workspace_id: str, conversation_id: str, types: Sequence[str]
) -> list[StoredEvent]:
    """The events of ``types`` about the conversation or one of its tasks, in log order
    (those compaction deleted are gone)."""
    from lineup.store.eventlog import event_from_row  # the log's module projects through here

    own_tasks = select(tasks.c.id).where(
        tasks.c.workspace_id == workspace_id, tasks.c.conversation_id == conversation_id
    )
    about = (
        select(event_subjects.c.sequence)
        .where(
            event_subjects.c.workspace_id == workspace_id,
            (
                (event_subjects.c.subject_kind == "conversation")
                & (event_subjects.c.subject_id == conversation_id)
            )
            | (
                (event_subjects.c.subject_kind == "task")
                & event_subjects.c.subject_id.in_(own_tasks)
            ),
        )
        .distinct()
    )
    rows = conn.execute(
        select(events)
        .where(
            events.c.workspace_id == workspace_id,
            events.c.sequence.in_(about),
            events.c.type.in_(list(types)),
        )
        .order_by(events.c.sequence)
    ).all()
    return [event_from_row(row) for row in rows]


def conversation_messages(conn: Connection, workspace_id: str, conversation_id: str) -> list[Any]:
    """The conversation's message rows in sequence order (for what the log no longer has)."""
    rows = conn.execute(
        select(messages)
        .where(
            messages.c.workspace_id == workspace_id, messages.c.conversation_id == conversation_id
        )
        .order_by(messages.c.sequence)
    ).all()
    return list(rows)


def conversation_workspace(conn: Connection, conversation_id: str) -> str | None:
    """The workspace a conversation belongs to (conversation ids are unique in the hub)."""
    found: str | None = conn.execute(
        select(conversations.c.workspace_id).where(conversations.c.id == conversation_id)
    ).scalar()
    return found


__all__ = [
    "HANDLERS",
    "ImportedSession",
    "StoredEntry",
    "conversation_events",
    "conversation_messages",
    "conversation_workspace",
    "imported_entries",
    "imported_session",
]
