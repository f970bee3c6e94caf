"""A conversation exported as a session file, and a session file imported as a conversation.

Export reads the conversation as it stands — the header and entries of the file it was
imported from, if it was, and the facts the log holds of it and its tasks — and writes them
with :mod:`lineup.protocol.session_file`. Messages a compacted log no longer holds come from
the conversation's messages; what else compaction removed (transcript entries, cards) is not
in the file.

Import reads a file (LineUp's, any version, or Pi's), then records, in one transaction, the
conversation (``conversation.created``), the file's header (``session.imported``) and its
entries (``session.entries_imported``, in runs): the messages of the active branch show in the
conversation; the other branches are kept and come back in every export. An export of the
imported conversation writes the imported lines as they were kept, so exporting, importing
and exporting again gives the same bytes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from lineup.core.canonical import digest
from lineup.hub import commands
from lineup.hub.actors import Person
from lineup.hub.recorder import Writing
from lineup.hub.sight import Sight, visible_project
from lineup.hub.state import HubState
from lineup.protocol import facts as f
from lineup.protocol.errors import NotFound
from lineup.protocol.events import ContentBlock
from lineup.protocol.interaction import Attachment
from lineup.protocol.links import hub_file
from lineup.protocol.session_file import (
    FORMAT_VERSION,
    FileRef,
    Happened,
    Header,
    HistoryWriter,
    Loaded,
    SessionFile,
    active_branch,
    branch_count,
    check_tree,
    encode,
    encode_line,
    line_object,
    load,
)
from lineup.protocol.session_file import lines as ln
from lineup.protocol.session_file.codec import parse_entry, parse_header
from lineup.protocol.session_file.scrub import fit
from lineup.protocol.times import datetime_to_ms
from lineup.store import Reader, StoredEvent, fact_of
from lineup.store import session_files as store
from lineup.store.records import Conversation, Message

EXPORTED_TYPES = (
    "message.created",
    "activity.started",
    "activity.output",
    "activity.finished",
    "activity.usage",
    "interaction.requested",
    "interaction.resolved",
    "interaction.expired",
    "interaction.cancelled",
    "tool.called",
    "tool.completed",
    "tool.cancelled",
    "capability.invoked",
    "approval.requested",
    "approval.decided",
    "execution.accepted",
    "execution.finished",
    "artifact.created",
)
"""The facts a conversation's export reads (``lineup.protocol.session_file.history``)."""

CONTENT_TYPE = "application/x-ndjson"


@dataclass(frozen=True, slots=True)
class Exported:
    conversation_id: str
    filename: str
    content: bytes


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import made: the conversation, and what the file held."""

    conversation_id: str
    session_id: str
    source_format: str
    source_version: int
    entries: int
    messages: int
    """Messages on the active branch: those the conversation shows."""
    branches: int
    duplicate: bool = False


# --- export --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Snapshot:
    """What an export reads of the store, in one read."""

    conversation: Conversation
    imported: store.ImportedSession | None
    entries: list[store.StoredEntry]
    events: list[StoredEvent]
    compacted_messages: list[Message]
    files: dict[str, FileRef]
    names: dict[str, str]


def _read(r: Reader, workspace_id: str, conversation_id: str, person: Person | None) -> _Snapshot:
    conversation = r.get_conversation(workspace_id, conversation_id)
    if conversation is None or (
        person is not None and not Sight.load(r, person).sees_project(conversation.project_id)
    ):
        raise NotFound(
            f"No conversation {conversation_id!r} in this workspace.",
            details={"conversationId": conversation_id},
        )
    conn = r.connection
    imported = store.imported_session(conn, workspace_id, conversation_id)
    entries = store.imported_entries(conn, workspace_id, conversation_id)
    events = store.conversation_events(conn, workspace_id, conversation_id, EXPORTED_TYPES)
    in_log = {e.sequence for e in events}
    from_file = {e.sequence for e in entries}
    horizon = r.log_horizon(workspace_id)
    compacted = [
        Message.from_row(row)
        for row in store.conversation_messages(conn, workspace_id, conversation_id)
        if row.sequence < horizon and row.sequence not in in_log | from_file
    ]
    files: dict[str, FileRef] = {}
    for url in _hub_urls(events, compacted):
        ref = hub_file(url)
        if ref is None or ref.workspace_id != workspace_id:
            continue
        info = r.file_info(workspace_id, ref.file_id)
        if info is not None:
            files[url] = FileRef(
                name=info.name[: ln.MAX_NAME] or None,
                mime_type=info.mime_type[:200] or None,
                size=info.size,
                sha256=info.sha256,
                url=url,
            )
    names = {a.id: a.name for a in r.list_agents(workspace_id)}
    return _Snapshot(conversation, imported, entries, events, compacted, files, names)


def _hub_urls(events: Sequence[StoredEvent], compacted: Sequence[Message]) -> set[str]:
    urls: set[str] = set()
    for event in events:
        payload = event.payload
        for key in ("url", "diffUrl", "resultUrl", "outputUrl"):
            if isinstance(payload.get(key), str):
                urls.add(payload[key])
        for attachment in payload.get("attachments") or ():
            if isinstance(attachment, dict) and isinstance(attachment.get("url"), str):
                urls.add(attachment["url"])
    for message in compacted:
        for attachment in message.attachments or ():
            if isinstance(attachment, dict) and isinstance(attachment.get("url"), str):
                urls.add(attachment["url"])
    return {u for u in urls if u.startswith("/")}


def _header(snapshot: _Snapshot) -> Header:
    """The imported file's header with the conversation's project now; else one made of the
    conversation (its id is the session's)."""
    conversation = snapshot.conversation
    if snapshot.imported is not None:
        header = parse_header(1, snapshot.imported.header)
        return header.model_copy(update={"project": conversation.project_id})
    return Header(
        session_id=conversation.id,
        timestamp=conversation.created_at,  # milliseconds, made ISO text by the model
        title=fit(conversation.title or conversation.id, 500),
        project=conversation.project_id,
    )


def _compacted_message(message: Message) -> f.MessageCreatedPayload:
    return f.MessageCreatedPayload.model_validate(
        {
            "messageId": message.id,
            "author": {
                k: v
                for k, v in (
                    ("kind", message.author_kind),
                    ("id", message.author_id),
                    ("name", message.author_name),
                )
                if v is not None
            },
            "content": message.content,
            "blocks": message.blocks,
            "attachments": message.attachments,
            "targetAgentId": message.target_agent_id,
            "taskId": message.task_id,
        }
    )


def build_export(snapshot: _Snapshot) -> SessionFile:
    """The session file of a conversation read by :func:`_read` (pure)."""
    imported = [parse_entry(e.position + 1, e.entry, scrubbed=True) for e in snapshot.entries]
    writer = HistoryWriter(
        digest,
        after=imported[-1].id if imported else None,
        taken=[e.id for e in imported],
        files=snapshot.files,
        names=snapshot.names,
    )
    happened: list[tuple[int, Happened]] = [
        (
            m.sequence,
            Happened(
                _compacted_message(m), event_id=m.id, recorded_at=m.created_at, task_id=m.task_id
            ),
        )
        for m in snapshot.compacted_messages
    ]
    for event in snapshot.events:
        happened.append(
            (
                event.sequence,
                Happened(fact_of(event), event.id, event.recorded_at, event.task_id),
            )
        )
    happened.sort(key=lambda pair: pair[0])
    for _, item in happened:
        writer.add(item)
    entries = (*imported, *writer.entries)
    check_tree(entries)
    return SessionFile(_header(snapshot), entries)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(conversation: Conversation) -> str:
    """``<title>-<id>.jsonl`` with the title made safe for any file system."""
    title = _UNSAFE.sub("-", conversation.title).strip("-.")[:60] or "session"
    return f"{title}-{conversation.id}.jsonl"


async def export_conversation(
    hub: HubState, workspace_id: str, conversation_id: str, person: Person | None
) -> Exported:
    """The conversation's session file. ``person``: whose sight it is read with (another
    project's conversation is ``not_found``); none for the hub's operator."""
    snapshot = await hub.store.read(lambda r: _read(r, workspace_id, conversation_id, person))
    session = await asyncio.to_thread(build_export, snapshot)
    content = await asyncio.to_thread(encode, session)
    return Exported(conversation_id, file_name(snapshot.conversation), content)


# --- import --------------------------------------------------------------------------------


def _shown_message(
    w: Writing, workspace_id: str, conversation_id: str, entry: ln.MessageEntry
) -> f.ImportedMessage:
    """How a message of the active branch shows: its text, its rich blocks, and its files as
    attachments where people can open them (an http(s) address, or a file of this
    workspace); a file they could not open is named in the text instead."""
    texts: list[str] = []
    blocks: list[ContentBlock] = []
    attachments: list[Attachment] = []
    for block in entry.content:
        if isinstance(block, ln.TextBlock):
            texts.append(block.text)
        elif isinstance(block, ln.RichBlock):
            try:
                blocks.append(
                    ContentBlock.model_validate(
                        {"type": block.kind, "text": block.text, "data": block.data}
                    )
                )
            except ValueError:
                if block.text:
                    texts.append(block.text)
        else:
            label = block.name or block.mime_type or "file"
            if block.url is not None and _openable(w, workspace_id, block.url):
                attachments.append(
                    Attachment(name=label[:200], url=block.url, mime_type=block.mime_type)
                )
            else:
                texts.append(f"[file: {label}]")
    kind = {"user": "user", "assistant": "agent", "system": "system"}[entry.role]
    name = entry.author.name if entry.author is not None else None
    if name is None and entry.role == "assistant":
        name = entry.model
    return f.ImportedMessage(
        entry_id=entry.id,
        message_id=commands.derived_id("msg", workspace_id, conversation_id, entry.id),
        author=f.MessageAuthor(kind=kind, name=name),
        content="\n\n".join(texts),
        blocks=blocks[:100] or None,
        attachments=attachments[:20] or None,
        created_at=datetime_to_ms(datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00"))),
    )


def _openable(w: Writing, workspace_id: str, url: str) -> bool:
    ref = hub_file(url)
    if ref is None:
        return True
    return (
        ref.workspace_id == workspace_id and w.read.file_info(workspace_id, ref.file_id) is not None
    )


def record_import(
    w: Writing,
    person: Person,
    loaded: Loaded,
    *,
    project_id: str | None = None,
    event_id: str | None = None,
) -> Imported:
    """The writer's job: the conversation, its header and its entries, all or nothing."""
    session = loaded.session
    entries = session.entries
    active = set(active_branch(entries))
    shown_messages = sum(1 for e in entries if e.id in active and isinstance(e, ln.MessageEntry))
    outcome = Imported(
        conversation_id="",
        session_id=session.header.session_id,
        source_format=loaded.source_format,
        source_version=loaded.source_version,
        entries=len(entries),
        messages=shown_messages,
        branches=branch_count(entries),
    )
    ws = person.workspace_id
    if event_id is not None:
        again = commands.derived_id("conv", ws, person.actor, event_id)
        if w.read.get_conversation(ws, again) is not None:
            return replace(outcome, conversation_id=again, duplicate=True)
    if project_id is not None:
        visible_project(w.read, person, project_id)  # not_found for a project they cannot see
    created = commands.create_conversation(
        w, person, session.header.title, [], event_id=event_id, project_id=project_id
    )
    conversation_id: str = created.value
    w.append(
        ws,
        f.SessionImportedPayload(
            conversation_id=conversation_id,
            header=line_object(session.header),
            format_version=FORMAT_VERSION,
            source_format=loaded.source_format,
            source_version=loaded.source_version,
            entry_count=len(entries),
            leaf_id=entries[-1].id if entries else None,
        ),
        actor=person.actor,
        conversation_id=conversation_id,
    )
    for first, chunk, message in _chunks(entries, active):
        w.append(
            ws,
            f.SessionEntriesImportedPayload(
                conversation_id=conversation_id,
                format_version=FORMAT_VERSION,
                first=first,
                entries=[
                    f.ImportedEntry(entry=line_object(e), shown=True if e.id in active else None)
                    for e in chunk
                ],
                message=None
                if message is None
                else _shown_message(w, ws, conversation_id, message),
            ),
            actor=person.actor,
            conversation_id=conversation_id,
        )
    return replace(outcome, conversation_id=conversation_id)


CHUNK_ENTRIES = 200
"""The most entries one ``session.entries_imported`` fact holds."""
CHUNK_BYTES = 256 * 1024
"""About the most bytes of entries one fact holds (one larger entry goes alone)."""


def _chunks(
    entries: Sequence[ln.Entry], active: set[str]
) -> Iterator[tuple[int, list[ln.Entry], ln.MessageEntry | None]]:
    """The entries in runs for one fact each — ``(place of the first, run, shown message)``:
    a run ends after a message the conversation shows (each shown message has a sequence of
    its own, as the conversation's pages need), or when it is full."""
    run: list[ln.Entry] = []
    size = 0
    first = 1
    for place, entry in enumerate(entries, start=1):
        if not run:
            first = place
        run.append(entry)
        size += len(encode_line(entry))
        if isinstance(entry, ln.MessageEntry) and entry.id in active:
            yield first, run, entry
            run, size = [], 0
        elif len(run) >= CHUNK_ENTRIES or size >= CHUNK_BYTES:
            yield first, run, None
            run, size = [], 0
    if run:
        yield first, run, None


async def import_session(
    hub: HubState,
    person: Person,
    data: bytes,
    *,
    project_id: str | None = None,
    event_id: str | None = None,
) -> Imported:
    """Read ``data`` as a session file and record it as a new conversation of ``person``'s
    workspace (in ``project_id``, when given: they must be one of its owners or editors).
    ``invalid_argument`` names the first bad line of a file that cannot be read."""
    loaded = await asyncio.to_thread(load, data, digest)
    return await hub.recorder.run(
        lambda w: record_import(w, person, loaded, project_id=project_id, event_id=event_id),
        workspace=person.workspace_id,
    )


__all__ = [
    "CONTENT_TYPE",
    "EXPORTED_TYPES",
    "Exported",
    "Imported",
    "build_export",
    "export_conversation",
    "file_name",
    "import_session",
    "record_import",
]
