"""The event catalog of LAP/0.1 (seed 001 §10.1–10.3) plus the hub's own recorded facts.

Each event type has one payload model and a set of senders allowed to send it. Frames sent by
people's apps and by agents are *commands* (``message.create``); what the hub records in the
log and sends on are *facts* (``message.created``, ``task.assigned``). An agent's downlink is a
view of the workspace log: the same sequence numbers, so ``lastSequence`` is one cursor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from lineup.protocol import agent_settings
from lineup.protocol._model import WireModel
from lineup.protocol.activity import (
    ActivityFinished,
    ActivityOutput,
    ActivityStarted,
    ActivityUsage,
)
from lineup.protocol.agent_logs import AgentLogs
from lineup.protocol.builtin_tools import ToolCancel
from lineup.protocol.capabilities import (
    CapabilityInvoke,
    CapabilityListing,
    CapabilityListQuery,
    CapabilityResult,
)
from lineup.protocol.envelope import Identifier
from lineup.protocol.interaction import Attachment, Interaction, InteractionResponse
from lineup.protocol.links import ArtifactUrl, check_block_data
from lineup.protocol.times import Millis
from lineup.protocol.tools import ToolCall, ToolDefinition, ToolList, ToolResult

Title = Annotated[str, Field(min_length=1, max_length=500)]
Text = Annotated[str, Field(max_length=100_000)]
Capability = Annotated[str, Field(min_length=1, max_length=100)]


def _settings_schema(schema: dict[str, Any]) -> dict[str, Any]:
    problems = agent_settings.schema_problems(schema)
    if problems:
        first = problems[0]
        where = f" at {first['path']}" if first["path"] else ""
        raise ValueError(f"not a usable settings schema{where}: {first['problem']}")
    return schema


SettingsSchema = Annotated[dict[str, Any], AfterValidator(_settings_schema)]
"""A settings schema (the subset of JSON Schema in :mod:`lineup.protocol.agent_settings`)."""


class Sender(StrEnum):
    """Who may put a type on the wire."""

    USER = "user"
    AGENT = "agent"
    HUB = "hub"


class TaskStatusName(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING_FOR_HUMAN = "waiting_for_human"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Author(WireModel):
    kind: Literal["user", "agent", "system"]
    id: Identifier
    name: Annotated[str, Field(max_length=200)] | None = None


class ContentBlock(WireModel):
    """A rich content block (seed 003 §2.3); the app renders the types it knows, text otherwise."""

    type: Annotated[str, Field(min_length=1, max_length=64)]
    text: Text | None = None
    data: Annotated[dict[str, Any] | None, AfterValidator(check_block_data)] = None


# --- people's apps → hub (§10.1) -------------------------------------------------------------


class MessageCreate(WireModel):
    content: Text
    target_agent_id: Identifier | None = None
    blocks: Annotated[list[ContentBlock], Field(max_length=100)] | None = None
    attachments: Annotated[list[Attachment], Field(max_length=20)] | None = None
    steer: bool = False


class TaskCreate(WireModel):
    title: Title
    description: Text | None = None
    target_agent_id: Identifier


class AgentTaskCreate(WireModel):
    """A task an agent starts on its own (the work it was asked for elsewhere, e.g. in an MCP
    host): assigned to the agent itself, so it has no ``targetAgentId``."""

    title: Title
    description: Text | None = None
    task_id: Identifier | None = None
    """The id to give it, to address it at once; else the hub makes one (see the ack)."""


class InteractionRespond(WireModel):
    interaction_id: Identifier
    response: InteractionResponse


class TaskCancelRequested(WireModel):
    task_id: Identifier | None = None
    reason: Annotated[str, Field(max_length=2000)] | None = None


class TaskEndedByHub(WireModel):
    """``task.status_changed`` as the hub sends it to an agent: the hub itself ended the
    agent's task — so far only ``cancelled`` with cause ``cancel_timeout``, when a requested
    cancel went unconfirmed past its deadline. The agent stops the task's work and sends
    nothing more for it: any later report is refused (``conflict``, reason ``task_ended``)."""

    task_id: Identifier
    status: TaskStatusName
    cause: Annotated[str, Field(min_length=1, max_length=64)]
    summary: Annotated[str, Field(max_length=500)] | None = None


# --- agents → hub (§10.2) --------------------------------------------------------------------


class AgentHello(WireModel):
    agent_version: Annotated[str, Field(min_length=1, max_length=100)]
    runtime: Annotated[str, Field(min_length=1, max_length=100)]
    capabilities: Annotated[list[Capability], Field(max_length=100)] = Field(default_factory=list)
    last_sequence: Annotated[int, Field(ge=0)] | None = None
    tools: Annotated[list[ToolDefinition], Field(max_length=256)] | None = None
    settings_schema: SettingsSchema | None = None
    """The agent's settings people may change from the app; absent: it has none."""


class AgentHeartbeat(WireModel):
    pass


class MessageDelta(WireModel):
    """A streamed piece of agent text; live only, the final ``message.create`` is recorded."""

    message_id: Identifier
    delta: Annotated[str, Field(max_length=16_000)]


class AgentMessageCreate(WireModel):
    content: Text
    message_id: Identifier | None = None
    blocks: Annotated[list[ContentBlock], Field(max_length=100)] | None = None
    attachments: Annotated[list[Attachment], Field(max_length=20)] | None = None


class TaskAccepted(WireModel):
    task_id: Identifier


class TaskStatusChanged(WireModel):
    status: TaskStatusName
    progress: Annotated[int, Field(ge=0, le=100)] | None = None
    summary: Annotated[str, Field(max_length=500)] | None = None
    error: Annotated[str, Field(max_length=4000)] | None = None


class TaskChildCreated(WireModel):
    parent_task_id: Identifier
    title: Title
    status: TaskStatusName = TaskStatusName.QUEUED
    child_task_id: Identifier | None = None


class InteractionRequested(WireModel):
    interaction: Interaction


class ArtifactCreated(WireModel):
    """A result of the agent's work. ``url`` is an absolute http(s) link or the address of a
    file the agent uploaded to the hub (``POST /api/agent/artifacts``)."""

    name: Title
    url: ArtifactUrl
    mime_type: Annotated[str, Field(max_length=200)] | None = None
    summary: Annotated[str, Field(max_length=4000)] | None = None
    artifact_id: Identifier | None = None


# --- hub → agents (§10.3) and hub → apps ------------------------------------------------------


class TaskAssigned(WireModel):
    task_id: Identifier
    title: Title
    description: Text | None = None
    parent_task_id: Identifier | None = None
    conversation_title: Annotated[str, Field(max_length=500)] | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)


class MessageDelivered(WireModel):
    message_id: Identifier
    author: Author
    content: Text
    attachments: list[Attachment] | None = None
    steer: bool = False
    task_id: Identifier | None = None


class InteractionResolved(WireModel):
    """A person's answer; respondedAt is milliseconds since the epoch (UTC), like every time
    in a recorded fact."""

    interaction_id: Identifier
    response: InteractionResponse
    responded_by: Identifier
    responded_by_name: Annotated[str, Field(max_length=200)] | None = None
    responded_at: Millis
    """ISO 8601 text is read too: an agent's journal may hold answers in that form."""


class InteractionExpiry(WireModel):
    """An interaction the agent asked for expired unanswered; expiresAt in milliseconds (UTC)."""

    interaction_id: Identifier
    expires_at: Annotated[int, Field(ge=0)] | None = None


class InteractionCancel(WireModel):
    """An agent withdraws its own unanswered question (answered elsewhere, or moot)."""

    interaction_id: Identifier
    reason: Annotated[str, Field(max_length=2000)] | None = None


class InteractionCancelled(WireModel):
    """A request was withdrawn (its task is being cancelled): stop waiting for an answer."""

    interaction_id: Identifier
    reason: Annotated[str, Field(max_length=2000)] | None = None
    task_id: Identifier | None = None


class SystemResyncRequired(WireModel):
    """The log after the client's cursor is no longer whole: it was compacted up to
    ``earliestSequence`` (the horizon). ``resumeAfter`` is where the hub's replay goes on:
    an agent's own ``lastSequence`` (what is still kept for it follows, then everything from
    the horizon), a person's app's ``latestSequence`` (it rebuilds from the HTTP views)."""

    reason: Annotated[str, Field(max_length=500)]
    earliest_sequence: Annotated[int, Field(ge=0)] | None = None
    latest_sequence: Annotated[int, Field(ge=0)] | None = None
    resume_after: Annotated[int, Field(ge=0)] | None = None


class AgentWelcome(WireModel):
    """The hub's answer to ``agent.hello``: who the agent is and how often to beat."""

    agent_id: Identifier
    workspace_id: Identifier
    heartbeat_interval_ms: Annotated[int, Field(ge=100)]
    latest_sequence: Annotated[int, Field(ge=0)]
    name: Annotated[str, Field(max_length=100)] | None = None
    """The agent's name in LineUp (people may rename it)."""
    awaiting_confirmation: bool = False
    """True while no person has confirmed the agent since it paired: it gets no work until
    ``agent.confirmed`` comes."""
    settings: dict[str, Any] | None = None
    """The settings to run with (defaults included), when the agent has a settings schema."""


class AgentConfirmed(WireModel):
    """A person confirmed the agent (under ``name``): work may come from now on."""

    agent_id: Identifier
    name: Annotated[str, Field(max_length=100)]


class AgentSettings(WireModel):
    """A person saved the agent's settings: the complete values to run with."""

    agent_id: Identifier
    values: dict[str, Any]


class ClientSubscribe(WireModel):
    """A person's app asks for everything after ``lastSequence`` then live events."""

    last_sequence: Annotated[int, Field(ge=0)] = 0
    batch: bool = False
    """The app takes ``client.batch`` frames: the replay then comes many events a frame."""


class ClientBatch(WireModel):
    """Events of the replay, in log order, each exactly the frame it would be sent alone."""

    events: list[dict[str, Any]]


class ClientCaughtUp(WireModel):
    """Sent once replay is over: everything up to ``sequence`` has been delivered."""

    sequence: Annotated[int, Field(ge=0)]


@dataclass(frozen=True, slots=True)
class EventSpec:
    event_type: str
    payload: type[WireModel] | type[ToolCall] | type[ToolResult] | type[ToolList] | type[ToolCancel]
    senders: frozenset[Sender]
    summary: str


def _spec(
    type_: str,
    payload: (
        type[WireModel] | type[ToolCall] | type[ToolResult] | type[ToolList] | type[ToolCancel]
    ),
    senders: set[Sender],
    summary: str,
) -> tuple[str, EventSpec]:
    return type_, EventSpec(type_, payload, frozenset(senders), summary)


U, A, H = Sender.USER, Sender.AGENT, Sender.HUB

# Types whose payload model depends on who sends them.
AGENT_PAYLOADS: Mapping[str, type[WireModel]] = {
    "message.create": AgentMessageCreate,
    "capability.list": CapabilityListQuery,
    "task.create": AgentTaskCreate,
}

HUB_PAYLOADS: Mapping[str, type[WireModel]] = {
    "task.status_changed": TaskEndedByHub,
}

CATALOG: Mapping[str, EventSpec] = dict(
    [
        _spec("message.create", MessageCreate, {U, A}, "Send a message (person or agent)."),
        _spec("task.create", TaskCreate, {U, A}, "Create a tracked task for an agent."),
        _spec("interaction.respond", InteractionRespond, {U}, "Answer an interaction card."),
        _spec("task.cancel_requested", TaskCancelRequested, {U, H}, "Ask an agent to stop."),
        _spec("agent.hello", AgentHello, {A}, "Adapter handshake and capability declaration."),
        _spec("agent.heartbeat", AgentHeartbeat, {A}, "Liveness beat; acked, not recorded."),
        _spec("agent.logs", AgentLogs, {A}, "The adapter's recent log lines; kept, not recorded."),
        _spec("message.delta", MessageDelta, {A, H}, "A streamed piece of agent text."),
        _spec("task.accepted", TaskAccepted, {A}, "The agent took the task."),
        _spec("task.status_changed", TaskStatusChanged, {A, H}, "Status or progress report."),
        _spec("task.child_created", TaskChildCreated, {A, H}, "A child task, shown only."),
        _spec("interaction.requested", InteractionRequested, {A, H}, "Ask a person."),
        _spec("artifact.created", ArtifactCreated, {A, H}, "A link, file or result."),
        _spec("activity.started", ActivityStarted, {A}, "A tool call, command, diff begins."),
        _spec("activity.output", ActivityOutput, {A}, "Streamed output of an activity."),
        _spec("activity.finished", ActivityFinished, {A}, "An activity's result or exit."),
        _spec("activity.usage", ActivityUsage, {A}, "Tokens a model turn used."),
        _spec("task.assigned", TaskAssigned, {H}, "A new task for the agent."),
        _spec("message.delivered", MessageDelivered, {H}, "A person's message for the agent."),
        _spec("interaction.resolved", InteractionResolved, {H}, "A person's answer."),
        _spec("interaction.cancel", InteractionCancel, {A}, "Withdraw an unanswered question."),
        _spec("interaction.cancelled", InteractionCancelled, {H}, "A request was withdrawn."),
        _spec("interaction.expired", InteractionExpiry, {H}, "Nobody answered in time."),
        _spec("system.resync_required", SystemResyncRequired, {H}, "Replay is impossible."),
        _spec("agent.welcome", AgentWelcome, {H}, "Answer to agent.hello."),
        _spec("agent.confirmed", AgentConfirmed, {H}, "A person confirmed the agent."),
        _spec("agent.settings", AgentSettings, {H}, "A person changed the agent's settings."),
        _spec("client.subscribe", ClientSubscribe, {U}, "Resume a person's event stream."),
        _spec("client.caught_up", ClientCaughtUp, {H}, "Replay finished; live from here."),
        _spec("client.batch", ClientBatch, {H}, "Replayed events, many a frame, in order."),
        _spec("tool.list", ToolList, {U, A, H}, "Register or list tools (seed 000 §4.6)."),
        _spec("tool.call", ToolCall, {U, A, H}, "Call a tool action (seed 000 §4.4)."),
        _spec("tool.result", ToolResult, {U, A, H}, "A tool call's result (seed 000 §4.5)."),
        _spec("tool.cancel", ToolCancel, {A}, "Withdraw an unanswered tool call."),
        _spec("tool.cancelled", ToolCancel, {H}, "The hub withdrew an unanswered tool call."),
        _spec("capability.list", CapabilityListing, {A, H}, "What an agent may call here."),
        _spec("capability.invoke", CapabilityInvoke, {A}, "Call a governed capability."),
        _spec("capability.result", CapabilityResult, {H}, "Where an invocation is."),
    ]
)

# Recorded facts an agent's downlink is made of (seed 001 §10.3), by the frame type it sees.
DOWNLINK_TYPES: frozenset[str] = frozenset(
    {
        "task.assigned",
        "message.delivered",
        "interaction.resolved",
        "interaction.cancelled",
        "interaction.expired",
        "task.cancel_requested",
        "task.status_changed",  # the hub ended the agent's task itself
        "tool.result",  # from tool.completed
        "tool.cancelled",
        "capability.result",  # from the invocation's facts
        "agent.confirmed",
        "agent.settings",  # from agent.settings_changed
    }
)


def payload_model(event_type: str, sender: Sender) -> type[Any] | None:
    if sender is Sender.AGENT and event_type in AGENT_PAYLOADS:
        return AGENT_PAYLOADS[event_type]
    if sender is Sender.HUB and event_type in HUB_PAYLOADS:
        return HUB_PAYLOADS[event_type]
    spec = CATALOG.get(event_type)
    return None if spec is None else spec.payload
