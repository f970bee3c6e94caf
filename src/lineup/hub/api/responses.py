"""What each HTTP route answers, as models, so ``/openapi.json`` describes real responses.

The views in :mod:`lineup.hub.api.views` build plain dicts; a route names one of these models
as its ``response_model`` and the dict is checked against it on the way out. ``extra="forbid"``
makes a key the model does not declare an error in tests instead of a silently dropped field,
and routes answer with ``response_model_exclude_unset`` (see :func:`lineup.hub.api.openapi.
answers`) so a key a view leaves out stays out, exactly as the web app has always received it.
Timestamps are ISO 8601 UTC strings with milliseconds (``2026-01-02T03:04:05.678Z``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from lineup.protocol.errors import ErrorCode

Timestamp = str
"""ISO 8601 UTC with milliseconds and a ``Z``."""


class View(BaseModel):
    """A response body: camelCase keys, nothing undeclared."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


# --- errors --------------------------------------------------------------------------------


class ErrorBody(View):
    code: ErrorCode
    message: str = Field(description="A sentence for a person; never a stack trace.")
    details: dict[str, Any] = Field(
        description="Structured facts, `{}` when there are none: `field`, `problems` "
        "([{path, problem}]), `retryAfterMs`, `reference`, and whatever the error names.",
    )


class ErrorEnvelope(View):
    """Every HTTP error: ``{"error": {"code", "message", "details"}}``."""

    error: ErrorBody


# --- accounts ------------------------------------------------------------------------------


class User(View):
    id: str
    email: str
    display_name: str


class Workspace(View):
    id: str
    name: str
    role: str = Field(description="`owner` or `member`.")


class Me(View):
    user: User
    workspaces: list[Workspace]


class SignedIn(Me):
    csrf_token: str = Field(
        description="Send it back in the `X-CSRF-Token` header on every POST, PUT, PATCH and "
        "DELETE; it is also set as the CSRF cookie."
    )


class SignedUp(SignedIn):
    workspace_id: str = Field(description="The workspace made for the new account.")


class Workspaces(View):
    workspaces: list[Workspace]


class MemberView(User):
    role: str
    joined_at: Timestamp | None


class Members(View):
    members: list[MemberView]


# --- agents --------------------------------------------------------------------------------


class PairingCode(View):
    code: str = Field(description="One-time code, e.g. `ABCD-EFGH`; single use.")
    expires_at: Timestamp | None
    expires_in_seconds: int
    hub_url: str
    command: str = Field(description="The demo agent's command line, ready to paste.")
    sdk_command: str = Field(description="The SDK's command line, ready to paste.")
    tls_fingerprint: str | None = Field(
        default=None,
        description="The hub's self-signed certificate's SHA-256 fingerprint, for the agent "
        "to pin (null: plain HTTP, or a certificate from an authority).",
    )


class Paired(View):
    agent_id: str
    workspace_id: str
    name: str
    credential: str = Field(description="The agent's secret; shown once, never again.")
    hub_url: str
    websocket_url: str = Field(description="Where the agent connects (`/ws/agent`).")
    awaiting_confirmation: bool = Field(
        description="True: a person confirms the agent in the app before it gets work."
    )
    tls_fingerprint: str | None = Field(
        default=None,
        description="Present when the hub serves a self-signed certificate: its SHA-256 "
        "fingerprint (`AB:CD:…`), which the agent pins for every later connection.",
    )


class HubInfo(View):
    """Where agents reach the hub, and the certificate it serves."""

    hub_url: str
    websocket_url: str
    tls_mode: Literal["off", "certificate", "self_signed"] = Field(
        description="off: this process speaks plain HTTP (alone on loopback, or behind a proxy "
        "that terminates TLS); certificate: its own certificate; self_signed: one it made."
    )
    tls_fingerprint: str | None = Field(
        description="SHA-256 of the served certificate, `AB:CD:…` (null when tlsMode is off)."
    )


class Agent(View):
    id: str
    name: str
    runtime: str | None
    version: str | None
    status: Literal["never_connected", "online", "offline", "revoked"]
    online: bool
    capabilities: list[str]
    tools: list[dict[str, Any]]
    last_heartbeat_at: Timestamp | None
    connected_at: Timestamp | None
    revoked_at: Timestamp | None
    created_at: Timestamp | None
    offline_at: Timestamp | None = Field(
        description="When the hub last found the agent's connection lost."
    )
    confirmed: bool = Field(
        description="False while the agent awaits a person's confirmation: it gets no work."
    )
    confirmed_at: Timestamp | None
    settings_schema: dict[str, Any] | None = Field(
        description="The JSON Schema of its settings (a flat object of scalars), if it has any."
    )
    settings: dict[str, Any] = Field(
        description="The settings it runs with: saved values that fit the schema, else defaults."
    )


class Agents(View):
    agents: list[Agent]


class Event(View):
    """A recorded event as people's apps see it: the envelope plus who acted."""

    id: str
    type: str
    version: str
    occurred_at: Timestamp
    workspace_id: str
    conversation_id: str | None = None
    task_id: str | None = None
    sequence: int | None = None
    correlation_id: str | None = None
    payload: dict[str, Any]
    actor: str | None = Field(
        description="`user:<id>`, `agent:<id>` or `system`; who caused the event."
    )


class AgentEvents(View):
    events: list[Event]


class AgentLogLine(View):
    """One diagnostic line an agent sent about itself, redacted by the agent and the hub."""

    id: str = Field(description="The agent's id for the line.")
    position: int = Field(description="Its place among this agent's lines, counted by the hub.")
    at: Timestamp = Field(description="When the agent logged it (the agent's clock).")
    received_at: Timestamp = Field(description="When the hub received it.")
    level: Literal["debug", "info", "warning", "error", "critical"]
    logger: str
    message: str
    fields: dict[str, Any] | None = None


class AgentLogs(View):
    lines: list[AgentLogLine] = Field(description="Newest first.")
    kept: int = Field(description="How many lines the hub keeps per agent; older ones go.")


# --- conversations, messages, tasks, interactions -----------------------------------------


class Conversation(View):
    id: str
    title: str
    agent_ids: list[str]
    created_at: Timestamp | None
    updated_at: Timestamp | None
    last_sequence: int | None
    project_id: str | None = None
    """The project it belongs to; absent or null for a personal conversation."""


class Conversations(View):
    conversations: list[Conversation]


class ImportedFile(View):
    session_id: str
    """The session's id, from the file's header (kept: an export of the conversation names
    it again)."""
    source_format: Literal["lineup", "pi"]
    source_version: int
    """The format version the file was written in."""
    entries: int
    messages: int
    """The messages of the active branch: those the conversation shows."""
    branches: int
    """How many branches (leaves) the file's tree has; all of them are kept."""


class ImportedSession(View):
    conversation: Conversation
    session: ImportedFile
    duplicate: bool
    """True when an Idempotency-Key replay found the conversation this request made before."""


class Author(View):
    kind: str = Field(description="`user`, `agent` or `system`.")
    id: str | None
    name: str | None = Field(
        default=None, description="The author's name as recorded with the message, when it was."
    )


class Message(View):
    id: str
    conversation_id: str
    author: Author
    content: str
    blocks: list[Any] | None
    attachments: list[Any] | None
    target_agent_id: str | None
    task_id: str | None
    created_at: Timestamp | None
    sequence: int | None


TaskStatus = Literal["queued", "running", "waiting_for_human", "succeeded", "failed", "cancelled"]


class Task(View):
    id: str
    conversation_id: str | None
    parent_task_id: str | None
    title: str
    description: str | None
    target_agent_id: str | None
    status: TaskStatus
    progress: int | float | None
    summary: str | None
    error: Any = Field(description="The agent's error: a sentence or an object, or null.")
    cancel_requested: bool
    cancel_reason: str | None
    cancel_deadline: Timestamp | None = Field(
        None,
        description="While a requested cancel waits for the agent: when LineUp records the "
        "task cancelled itself if the agent has not confirmed by then.",
    )
    end_cause: str | None = Field(
        None,
        description="Why LineUp itself ended the task, when it did: `cancel_timeout` when the "
        "agent did not confirm a cancel in time.",
    )
    created_by: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    last_sequence: int | None
    agent_connection_lost: bool = Field(
        description="True while the task is active and its agent is offline or revoked."
    )
    last_heartbeat_at: Timestamp | None
    connection_lost_at: Timestamp | None = Field(
        description="When the hub found the agent's connection lost, while that matters."
    )


class Tasks(View):
    tasks: list[Task]


class Interaction(View):
    id: str
    agent_name: str | None
    task_title: str | None
    type: Literal["approval", "choice", "input", "review"]
    status: Literal["requested", "resolved", "expired", "cancelled"]
    task_id: str | None
    conversation_id: str | None
    agent_id: str | None
    request: dict[str, Any] = Field(description="What the agent asked (`interaction.request`).")
    response: dict[str, Any] | None = Field(
        description="The answer: `optionId`, `optionIds` and/or `text`."
    )
    responded_by: str | None
    responded_by_name: str | None
    responded_at: Timestamp | None
    expires_at: Timestamp | None
    created_at: Timestamp | None
    sequence: int | None
    cancel_reason: str | None = Field(description="Why it was withdrawn, when `cancelled`.")


class Interactions(View):
    interactions: list[Interaction]


class Artifact(View):
    id: str
    task_id: str | None
    conversation_id: str | None
    name: str
    url: str
    mime_type: str | None
    summary: str | None
    created_by: str | None
    created_at: Timestamp | None


class Artifacts(View):
    artifacts: list[Artifact]


class MessagesPage(View):
    messages: list[Message]
    has_more: bool
    tasks: list[Task] = Field(description="Every task of the conversation.")
    interactions: list[Interaction] = Field(description="Every interaction of the conversation.")
    artifacts: list[Artifact] = Field(description="Every artifact of the conversation.")


class PostedMessage(View):
    message: Message
    task_id: str | None = Field(description="The task made with `trackAsTask`, or null.")
    sequence: int | None
    duplicate: bool = Field(description="True when an Idempotency-Key replay changed nothing.")


class TaskDetail(View):
    task: Task
    children: list[Task]
    interactions: list[Interaction]
    artifacts: list[Artifact]
    timeline: list[Event]


class ToolCall(View):
    id: str
    call_id: str
    agent_id: str
    name: str
    action: str | None
    arguments: dict[str, Any]
    status: Literal["pending", "completed", "failed", "expired", "cancelled"]
    conversation_id: str | None
    task_id: str | None
    instance_id: str | None
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    answered_by: str | None
    answered_by_name: str | None
    answered_at: Timestamp | None
    cancel_reason: str | None
    timeout_ms: int | None
    expires_at: Timestamp | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    sequence: int


class InboxCounts(View):
    waiting_for_me: int
    needs_attention: int
    unread: int


class Inbox(View):
    waiting_for_me: list[Interaction]
    waiting_tools: list[ToolCall]
    needs_attention: list[Task]
    recently_done: list[Task]
    counts: InboxCounts


class EventsPage(View):
    events: list[Event]
    latest_sequence: int
    next_after: int | None = None
    """The last sequence this page read (some may belong to projects the caller is not in):
    the ``after`` of the next page."""
    earliest_sequence: int = 1
    """The log's horizon: from this sequence on the log is whole (1 until it is compacted)."""
    resync_required: bool = False
    """``after`` is behind the horizon (``after + 1 < earliestSequence``): the events it asks
    for are no longer all kept. ``events`` is then empty and ``nextAfter`` is
    ``latestSequence``: rebuild from the views, then page on from there."""


class RawEvent(View):
    """One recorded event behind a task, message or card, for a person who debugs."""

    id: str = Field(description="The sender's id for the event (its idempotency key).")
    sequence: int = Field(description="Its place in the workspace's log.")
    type: str
    actor: str = Field(description="`user:<id>`, `agent:<id>` or `system`; who caused it.")
    occurred_at: Timestamp = Field(description="When the sender says it happened.")
    recorded_at: Timestamp = Field(description="When the hub recorded it.")
    conversation_id: str | None = None
    task_id: str | None = None
    correlation_id: str | None = None
    payload: dict[str, Any] = Field(
        description="As recorded, less secrets: the redaction of agents' diagnostic lines."
    )


class RawEvents(View):
    """A page of the events about one subject, in log order."""

    subject: str = Field(description="The subject asked for, `kind:id`.")
    events: list[RawEvent]
    has_more: bool = Field(
        description="More of the subject's events lie beyond this page: older when read with "
        "`before` alone (page on with `before` = the first sequence), else newer (`after` = "
        "the last sequence)."
    )
    compacted_before: int | None = Field(
        description="The log's horizon once it was compacted: events of the subject recorded "
        "before this sequence may be gone (those still needed are kept). `null`: never "
        "compacted, every event is here."
    )


class StoredFile(View):
    """A file an agent stored in the hub."""

    file_id: str
    url: str = Field(description="Hub-relative: `/api/workspaces/{ws}/files/{fileId}`.")
    name: str
    mime_type: str
    size: int
    sha256: str


# --- tools on people's apps ----------------------------------------------------------------


class ToolDevice(View):
    device_id: str
    user_id: str | None
    name: str | None
    tools: list[str | None]
    updated_at: Timestamp | None


class AvailableTools(View):
    tools: list[dict[str, Any]] = Field(description="Tool definitions (`tool.list` entries).")
    builtin: bool = Field(description="True when no app registered tools: the built-ins apply.")
    devices: list[ToolDevice]


class ToolDefinitions(View):
    tools: list[dict[str, Any]]


class Registered(View):
    device: ToolDevice | None
    changed: bool
    sequence: int | None


class ToolCalls(View):
    tool_calls: list[ToolCall]


class CanvasStroke(View):
    path: str
    color: str | None
    width: int | float | None
    tool_call_id: str


class Canvas(View):
    id: str
    agent_id: str
    tool_call_id: str
    conversation_id: str | None
    task_id: str | None
    width: int
    height: int
    status: Literal["open", "closed"]
    strokes: list[CanvasStroke]
    operations: int
    undone: int
    created_at: Timestamp | None
    updated_at: Timestamp | None
    last_sequence: int


class Canvases(View):
    canvases: list[Canvas]


# --- notifications -------------------------------------------------------------------------


class QuietWindow(View):
    start: str
    end: str


class NotificationPreferences(View):
    events: list[str]
    channels: list[str]
    quiet_hours: QuietWindow | None
    time_zone: str


class Choice(View):
    id: str
    label: str


class NotificationOptions(View):
    events: list[Choice]
    channels: list[Choice]


class EmailDelivery(View):
    configured: bool
    address: str | None
    last_attempt_at: Timestamp | None
    last_delivered_at: Timestamp | None
    failing_since: Timestamp | None
    last_error: str | None


class PushDevice(View):
    id: str
    label: str
    endpoint_origin: str
    created_at: Timestamp | None
    last_attempt_at: Timestamp | None
    last_delivered_at: Timestamp | None
    failing_since: Timestamp | None
    last_error: str | None


class NotificationView(View):
    id: str
    kind: str
    channel: str
    target: str
    target_label: str
    title: str
    body: str
    link: str
    status: str
    attempts: int
    created_at: Timestamp | None
    delivered_at: Timestamp | None
    next_attempt_at: Timestamp | None
    last_error: str | None


class Notifications(View):
    vapid_public_key: str | None
    preferences: NotificationPreferences
    options: NotificationOptions
    email: EmailDelivery
    devices: list[PushDevice]
    recent: list[NotificationView]


class Queued(View):
    queued: int = Field(description="How many deliveries were queued.")


# --- direct mode and health ----------------------------------------------------------------


class DirectInfo(View):
    mode: Literal["hub", "direct"]
    agent_name: str | None = Field(default=None, description="Only in direct mode.")
    csrf_cookie: str = Field(description="The cookie holding the CSRF token to send back.")


class Health(View):
    status: Literal["ok"]
    version: str


class Ready(View):
    status: Literal["ok", "degraded"]
    checks: dict[str, str]


class StreamHealth(View):
    healthy: bool
    lag_ms: int | float | None
    dropped: int


class ClusterNode(View):
    node: str
    instance: str
    mode: Literal["cluster", "single"]
    leases: list[str]
    stream: StreamHealth | None = None
