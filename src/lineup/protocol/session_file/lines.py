"""The lines of a session file, version 2: one model per line type.

Every line is one JSON object. The first is the :class:`Header`; each other line is an entry
with ``type``, ``id``, ``parentId`` (``null`` for a root) and ``timestamp`` (ISO 8601, UTC,
milliseconds, ``Z``), then the fields of its type. Keys are camelCase; an optional field
that is empty is left out, never written as ``null`` (``parentId`` alone is always written).
Unknown fields are refused: a change of shape is a new format version (``FORMAT_VERSION``),
which a reader migrates on load (:mod:`lineup.protocol.session_file.migrations`).

What a line never holds (seed 003 §1.4): a tool's arguments (``argsDigest`` instead), a
whole result or output (a ``summary``, its ``digest`` and, when the hub keeps the whole, a
``ref``), a file's bytes (a :class:`FileRef`), credentials or secrets in plain text (free
text is redacted, see :mod:`lineup.protocol.session_file.scrub`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from lineup.protocol.links import check_link
from lineup.protocol.times import format_timestamp, ms_to_datetime

FORMAT_VERSION: Literal[2] = 2
"""The version this code writes; older ones are migrated when read."""

MAX_ID = 200
MAX_TEXT = 100_000
"""Characters of a message's text block, a reasoning text or a summary entry's text."""
MAX_NAME = 500
MAX_PATH = 4000
MAX_COMMAND = 8000
MAX_DETAIL = 16_000
"""Characters of a result's summary, an error or an answer: the format's own bound; the hub
writes much less (:data:`lineup.protocol.session_file.scrub.SUMMARY_CHARS`)."""


def _canonical_time(value: Any) -> Any:
    """Any ISO 8601 time with an offset, or milliseconds, as the one form the file holds."""
    from datetime import UTC, datetime

    if isinstance(value, bool):
        raise ValueError("a time is ISO 8601 text, not a boolean")
    if isinstance(value, int):
        if not 0 <= value < 253402300800000:
            raise ValueError("a time in milliseconds must be between 1970 and 9999")
        return format_timestamp(ms_to_datetime(value))
    if not isinstance(value, str):
        raise ValueError("a time is ISO 8601 text such as 2026-01-31T09:30:00.000Z")
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{value[:40]!r} is not an ISO 8601 time such as 2026-01-31T09:30:00.000Z"
        ) from None
    if when.tzinfo is None:
        raise ValueError(f"{value[:40]!r} has no offset: write it in UTC with a Z")
    if not 1970 <= when.astimezone(UTC).year <= 9999:
        raise ValueError(f"{value[:40]!r} is not between 1970 and 9999")
    return format_timestamp(when)


Timestamp = Annotated[str, BeforeValidator(_canonical_time)]
"""A time as ISO 8601 text in UTC with milliseconds and ``Z``; other offsets are converted."""

EntryId = Annotated[str, Field(min_length=1, max_length=MAX_ID, pattern=r"^\S+$")]
"""An entry's id: unique in its file, any text without spaces (Pi writes 8 hex digits)."""

Digest = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
"""``sha256:`` and 64 lowercase hex digits (see :mod:`lineup.protocol.session_file.scrub`)."""

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""A file's SHA-256, as the hub's file store keeps it: 64 lowercase hex digits."""


def _link(url: str) -> str:
    return check_link(url)


Link = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_link)]
"""An http(s) URL or a file stored in a hub (``/api/workspaces/{ws}/files/{id}``)."""


def _text(limit: int, min_length: int = 0) -> Any:
    return Field(min_length=min_length, max_length=limit)


class LineModel(BaseModel):
    """camelCase on the wire, unknown fields refused, values frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )


class FileRef(LineModel):
    """Content kept outside the file: what it is and how to check a copy of it."""

    name: Annotated[str, _text(MAX_NAME, 1)] | None = None
    mime_type: Annotated[str, _text(200, 1)] | None = None
    size: Annotated[int, Field(ge=0)] | None = None
    """Bytes."""
    sha256: Sha256 | None = None
    """Of the bytes, when known (every file stored in a hub has one)."""
    url: Link | None = None
    """Where the bytes are, when anywhere: a file stored in the hub the session came from
    (readable by that workspace's members), or an http(s) URL."""


# --- message content ----------------------------------------------------------------------


class TextBlock(LineModel):
    type: Literal["text"] = "text"
    text: Annotated[str, _text(MAX_TEXT)]


class FileBlock(LineModel):
    """An attachment or an image: a reference (as :class:`FileRef`), never the bytes."""

    type: Literal["file"] = "file"
    name: Annotated[str, _text(MAX_NAME, 1)] | None = None
    mime_type: Annotated[str, _text(200, 1)] | None = None
    size: Annotated[int, Field(ge=0)] | None = None
    sha256: Sha256 | None = None
    url: Link | None = None


class RichBlock(LineModel):
    """A rich content block of a LineUp message (seed 003 §2.3), with its ``kind``."""

    type: Literal["rich"] = "rich"
    kind: Annotated[str, _text(64, 1)]
    text: Annotated[str, _text(MAX_TEXT)] | None = None
    data: dict[str, Any] | None = None


Block = Annotated[TextBlock | FileBlock | RichBlock, Field(discriminator="type")]


class Author(LineModel):
    kind: Literal["user", "agent", "system"]
    id: Annotated[str, _text(MAX_ID, 1)] | None = None
    name: Annotated[str, _text(MAX_NAME, 1)] | None = None


class Origin(LineModel):
    """Where an imported session came from."""

    format: Literal["lineup", "pi"]
    version: Annotated[int, Field(ge=1)]
    session_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    cwd: Annotated[str, _text(MAX_PATH, 1)] | None = None
    """The working directory the session ran in (Pi's ``cwd``)."""


# --- the header ---------------------------------------------------------------------------


class Header(LineModel):
    """The first line: the session's metadata and the file's format version."""

    type: Literal["header"] = "header"
    v: Literal[2] = FORMAT_VERSION
    session_id: Annotated[str, _text(MAX_ID, 1)]
    """The session's identity: a LineUp conversation's id when the hub made it; kept when
    the file is imported, so an export of the import names the same session."""
    timestamp: Timestamp
    """When the session started."""
    title: Annotated[str, _text(500, 1)]
    project: Annotated[str, _text(MAX_ID, 1)] | None = None
    """The id of the project the conversation belongs to; absent: a personal one."""
    origin: Origin | None = None


# --- entries ------------------------------------------------------------------------------


class Entry(LineModel):
    """What every line after the header has: its place in the tree and its time."""

    type: str
    id: EntryId
    parent_id: EntryId | None
    """The entry it follows; ``null`` for a root. Always written, even when ``null``."""
    timestamp: Timestamp

    def references(self) -> list[tuple[str, str]]:
        """``(field, id)`` for each other entry this one names besides its parent."""
        return []


def _ref(field: str, value: str | None) -> list[tuple[str, str]]:
    return [] if value is None else [(field, value)]


class MessageEntry(Entry):
    """A message: a person's (``user``), an agent's (``assistant``) or the system's."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system"]
    author: Author | None = None
    content: list[Block]
    task_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    target_agent_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    steer: Literal[True] | None = None
    model: Annotated[str, _text(MAX_NAME, 1)] | None = None
    """The model that wrote an assistant's message, when known."""
    error: Annotated[str, _text(MAX_DETAIL, 1)] | None = None
    """Why an assistant's turn ended in error, when it did."""


class ToolCallEntry(Entry):
    """A call of a tool or of a governed capability: its name and the digest of its
    arguments, never the arguments."""

    type: Literal["tool_call"] = "tool_call"
    name: Annotated[str, _text(MAX_ID, 1)]
    capability_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    """The governed capability called (seed 003 §5), when it is one."""
    args_digest: Digest
    action: Annotated[str, _text(MAX_ID, 1)] | None = None
    title: Annotated[str, _text(MAX_NAME, 1)] | None = None
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    """The id the call had where it was made: an agent's activity, the hub's tool call or
    invocation, an engine's call id."""


class CommandEntry(Entry):
    """A shell command an agent (or a person, in Pi) ran; its end is a ``tool_result``."""

    type: Literal["command"] = "command"
    command: Annotated[str, _text(MAX_COMMAND, 1)]
    cwd: Annotated[str, _text(MAX_PATH, 1)] | None = None
    title: Annotated[str, _text(MAX_NAME, 1)] | None = None
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None


ResultStatus = Literal["succeeded", "failed", "cancelled", "expired", "accepted", "unknown_result"]


class ToolResultEntry(Entry):
    """How a call or command ended (or, for a governed write, that its system accepted it):
    a summary and the digest of the whole, with a reference when the whole is kept."""

    type: Literal["tool_result"] = "tool_result"
    call_id: EntryId | None = None
    """The ``tool_call`` or ``command`` entry it answers."""
    status: ResultStatus
    execution_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    job_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    summary: Annotated[str, _text(MAX_DETAIL)] | None = None
    digest: Digest | None = None
    """Of the whole result (a JSON value) or output (text)."""
    ref: FileRef | None = None
    error: Annotated[str, _text(MAX_DETAIL)] | None = None
    exit_code: int | None = None
    output_chars: Annotated[int, Field(ge=0)] | None = None
    duration_ms: Annotated[int, Field(ge=0)] | None = None
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None

    def references(self) -> list[tuple[str, str]]:
        return _ref("callId", self.call_id)


class FileChangeEntry(Entry):
    """A file an agent changed: its path, the change and the diff (or its beginning)."""

    type: Literal["file_change"] = "file_change"
    path: Annotated[str, _text(MAX_PATH, 1)]
    change: Literal["add", "modify", "delete"] | None = None
    summary: Annotated[str, _text(MAX_DETAIL)] | None = None
    """The unified diff, or its beginning when it is long."""
    digest: Digest | None = None
    ref: FileRef | None = None
    title: Annotated[str, _text(MAX_NAME, 1)] | None = None
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None


class ReasoningEntry(Entry):
    type: Literal["reasoning"] = "reasoning"
    text: Annotated[str, _text(MAX_TEXT)]
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None


class UsageEntry(Entry):
    """Tokens one model turn used (not a running total)."""

    type: Literal["usage"] = "usage"
    input_tokens: Annotated[int, Field(ge=0)]
    output_tokens: Annotated[int, Field(ge=0)]
    cached_input_tokens: Annotated[int, Field(ge=0)] | None = None
    reasoning_tokens: Annotated[int, Field(ge=0)] | None = None
    context_window: Annotated[int, Field(ge=0)] | None = None
    model: Annotated[str, _text(MAX_NAME, 1)] | None = None


class Option(LineModel):
    id: Annotated[str, _text(MAX_ID, 1)]
    label: Annotated[str, _text(MAX_NAME, 1)]


class InteractionEntry(Entry):
    """A card put to a person: approval, choice, input or review (seed 001 §7.3)."""

    type: Literal["interaction"] = "interaction"
    interaction_id: Annotated[str, _text(MAX_ID, 1)]
    kind: Annotated[str, _text(64, 1)]
    title: Annotated[str, _text(MAX_NAME, 1)]
    summary: Annotated[str, _text(MAX_DETAIL)] | None = None
    options: list[Option] | None = None
    task_id: Annotated[str, _text(MAX_ID, 1)] | None = None


class AnswerEntry(Entry):
    """How a card ended: answered (``resolved``), ``expired`` or ``cancelled``."""

    type: Literal["answer"] = "answer"
    request_id: EntryId | None = None
    """The ``interaction`` entry it closes."""
    status: Literal["resolved", "expired", "cancelled"]
    option_ids: list[Annotated[str, _text(MAX_ID, 1)]] | None = None
    text: Annotated[str, _text(MAX_DETAIL)] | None = None
    by: Annotated[str, _text(MAX_NAME, 1)] | None = None
    """Who answered: their name when known, else their id."""

    def references(self) -> list[tuple[str, str]]:
        return _ref("requestId", self.request_id)


class ApprovalRequestEntry(Entry):
    """A governed write waiting for a person's decision, bound to its arguments' digest."""

    type: Literal["approval_request"] = "approval_request"
    approval_id: Annotated[str, _text(MAX_ID, 1)]
    call_id: EntryId | None = None
    """The ``tool_call`` of the invocation it is for."""
    capability_id: Annotated[str, _text(MAX_ID, 1)]
    args_digest: Digest
    summary: Annotated[str, _text(MAX_DETAIL)]
    impact: Annotated[str, _text(MAX_DETAIL)]
    resource_version: Annotated[str, _text(MAX_ID, 1)] | None = None
    expires_at: Timestamp | None = None

    def references(self) -> list[tuple[str, str]]:
        return _ref("callId", self.call_id)


class ApprovalEntry(Entry):
    """The decision on a governed write."""

    type: Literal["approval"] = "approval"
    approval_id: Annotated[str, _text(MAX_ID, 1)]
    request_id: EntryId | None = None
    """The ``approval_request`` entry it decides."""
    decision: Literal["approved", "rejected", "expired", "voided"]
    by: Annotated[str, _text(MAX_NAME, 1)] | None = None
    reason: Annotated[str, _text(MAX_DETAIL)] | None = None

    def references(self) -> list[tuple[str, str]]:
        return _ref("requestId", self.request_id)


class FileEntry(FileRef, Entry):
    """A file an agent made (an artifact): a reference, never the bytes."""

    type: Literal["file"] = "file"
    summary: Annotated[str, _text(MAX_DETAIL)] | None = None
    task_id: Annotated[str, _text(MAX_ID, 1)] | None = None
    source_id: Annotated[str, _text(MAX_ID, 1)] | None = None


class SummaryEntry(Entry):
    """Text standing for the entries it ``covers``: a compaction of earlier context, or what
    an abandoned branch had done."""

    type: Literal["summary"] = "summary"
    covers: list[EntryId]
    text: Annotated[str, _text(MAX_TEXT)]
    kind: Literal["compaction", "branch"] | None = None
    first_kept_id: EntryId | None = None
    """For a compaction: the first entry still given to the model in full."""
    from_id: EntryId | None = None
    """For a branch summary: the entry of the abandoned branch it was made from."""
    tokens_before: Annotated[int, Field(ge=0)] | None = None

    def references(self) -> list[tuple[str, str]]:
        found = [(f"covers[{i}]", ident) for i, ident in enumerate(self.covers)]
        return [*found, *_ref("firstKeptId", self.first_kept_id), *_ref("fromId", self.from_id)]


class ModelChangeEntry(Entry):
    """The model, or its thinking level, changed for what follows."""

    type: Literal["model_change"] = "model_change"
    provider: Annotated[str, _text(MAX_NAME, 1)] | None = None
    model: Annotated[str, _text(MAX_NAME, 1)] | None = None
    thinking_level: Annotated[str, _text(64, 1)] | None = None


class LabelEntry(Entry):
    """A person's bookmark on an entry; without ``label`` it clears the mark."""

    type: Literal["label"] = "label"
    target_id: EntryId
    label: Annotated[str, _text(MAX_NAME, 1)] | None = None

    def references(self) -> list[tuple[str, str]]:
        return _ref("targetId", self.target_id)


class SessionInfoEntry(Entry):
    """The session was given a name."""

    type: Literal["session_info"] = "session_info"
    name: Annotated[str, _text(MAX_NAME, 1)]


class CustomEntry(Entry):
    """An extension's own state (Pi's ``custom`` entries): its kind and a digest, not its
    data, which may hold anything."""

    type: Literal["custom"] = "custom"
    custom_type: Annotated[str, _text(MAX_ID, 1)]
    digest: Digest | None = None


AnyEntry = Annotated[
    MessageEntry
    | ToolCallEntry
    | CommandEntry
    | ToolResultEntry
    | FileChangeEntry
    | ReasoningEntry
    | UsageEntry
    | InteractionEntry
    | AnswerEntry
    | ApprovalRequestEntry
    | ApprovalEntry
    | FileEntry
    | SummaryEntry
    | ModelChangeEntry
    | LabelEntry
    | SessionInfoEntry
    | CustomEntry,
    Field(discriminator="type"),
]
"""Any entry, told apart by its ``type``."""

ENTRY_TYPES: tuple[type[Entry], ...] = (
    MessageEntry,
    ToolCallEntry,
    CommandEntry,
    ToolResultEntry,
    FileChangeEntry,
    ReasoningEntry,
    UsageEntry,
    InteractionEntry,
    AnswerEntry,
    ApprovalRequestEntry,
    ApprovalEntry,
    FileEntry,
    SummaryEntry,
    ModelChangeEntry,
    LabelEntry,
    SessionInfoEntry,
    CustomEntry,
)

ENTRY_TYPE_NAMES: frozenset[str] = frozenset(t.model_fields["type"].default for t in ENTRY_TYPES)
