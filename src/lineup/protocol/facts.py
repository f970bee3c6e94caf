"""The facts the hub records in its log: one payload model per recorded event type.

A fact is what happened, as the hub decided it (``task.created``), not what a peer asked for
(``task.create``). The hub appends facts only as these models, and projections, the downlink
and the notification rules read them back as the same models, so a field's name is written
once. On the wire and in the database the keys are camelCase, exactly as stored by every
earlier hub: old logs must replay, and docs/protocol.md section 5.4 describes them.

Fields are lenient on purpose. A fact was checked when it was recorded (the commands check
with ``lineup.domain`` and the inbound models' limits), so the types here hold no length
limits, and a field that an older hub did not always write is optional. Optional fields are
left out of the stored payload when empty, except the few that every hub has always written,
even as ``null`` (``recorded_when_none``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from lineup.protocol._model import WireModel
from lineup.protocol.events import ContentBlock
from lineup.protocol.interaction import Attachment, Interaction, InteractionResponse
from lineup.protocol.times import Millis, ms_to_datetime


def _schema_as_recorded(schema: dict[str, Any], model: type[Any]) -> None:
    """In a fact's JSON Schema an empty optional field is absent, not ``null``: that is how
    :meth:`Fact.recorded` stores it (except the fields of ``recorded_when_none``). Fields
    carry no generated title, which code generators would turn into a type per field."""
    keep = getattr(model, "recorded_when_none", ())
    for name, prop in schema.get("properties", {}).items():
        prop.pop("title", None)
        if name in keep or "anyOf" not in prop:
            continue
        branches = [b for b in prop["anyOf"] if b != {"type": "null"}]
        if len(branches) == len(prop["anyOf"]):
            continue
        del prop["anyOf"]
        if prop.get("default", "") is None:
            del prop["default"]
        if len(branches) == 1:
            prop.update(branches[0])
        else:
            prop["anyOf"] = branches


class Fact(WireModel):
    """The base of every recorded fact's payload."""

    model_config = ConfigDict(
        use_attribute_docstrings=True,  # they describe the fields in the schemas
        json_schema_extra=_schema_as_recorded,
    )

    fact_type: ClassVar[str]
    """The event type this payload is recorded as."""
    recorded_when_none: ClassVar[tuple[str, ...]] = ()
    """Wire names of optional fields stored even when empty (``null``), as hubs always did."""

    def recorded(self) -> dict[str, Any]:
        """The payload as stored in the log and sent to people's apps. Python mode: every
        value is JSON already (enums are ``str``, times are serialised by their fields), and
        it costs less than half of JSON mode on the append path."""
        payload = self.model_dump(by_alias=True, exclude_none=True)
        for key in self.recorded_when_none:
            payload.setdefault(key, None)
        return payload

    @classmethod
    def unknown_fields_of(cls, sent: BaseModel) -> dict[str, Any]:
        """The fields a peer sent that its model did not declare: kept in the fact, as every
        hub has kept them, except under a name of the fact's own, which the hub sets."""
        extra = sent.model_extra
        if not extra:
            return {}
        own = cls._own_names()
        return {key: value for key, value in extra.items() if key not in own}

    @classmethod
    def _own_names(cls) -> frozenset[str]:
        names = {field for field in cls.model_fields}
        names.update(info.alias for info in cls.model_fields.values() if info.alias)
        return frozenset(names)


# --- workspace and members -------------------------------------------------------------------


class WorkspaceCreatedPayload(Fact):
    fact_type = "workspace.created"
    name: str
    workspace_id: str | None = None
    owner_user_id: str | None = None


class MemberJoinedPayload(Fact):
    fact_type = "member.joined"
    user_id: str
    email: str
    display_name: str | None = None
    role: str | None = None
    """``owner`` or ``member``; absent means ``member``."""


# --- agents ----------------------------------------------------------------------------------


class AgentPairedPayload(Fact):
    fact_type = "agent.paired"
    agent_id: str
    name: str
    runtime: str | None = None
    agent_version: str | None = None


class AgentConnectedPayload(Fact):
    fact_type = "agent.connected"
    agent_id: str
    agent_version: str | None = None
    runtime: str | None = None
    capabilities: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    """The tool definitions the agent offers (seed 000), absent when it did not say."""


class AgentStatusChangedPayload(Fact):
    fact_type = "agent.status_changed"
    agent_id: str
    status: Literal["online", "offline"]
    last_heartbeat_at: Millis | None = None
    """The last beat the hub saw; ``null`` when unknown (then the previous one is kept)."""


class AgentRenamedPayload(Fact):
    fact_type = "agent.renamed"
    agent_id: str
    name: str


class AgentRevokedPayload(Fact):
    fact_type = "agent.revoked"
    agent_id: str


# --- conversations and messages ----------------------------------------------------------------


class ConversationCreatedPayload(Fact):
    fact_type = "conversation.created"
    conversation_id: str | None = None
    """Absent in the oldest logs: the envelope's conversation then."""
    title: str | None = None
    agent_ids: list[str] | None = None


class MessageAuthor(WireModel):
    kind: Literal["user", "agent", "system"]
    id: str | None = None
    name: str | None = None


class MessageCreatedPayload(Fact):
    fact_type = "message.created"
    message_id: str
    author: MessageAuthor
    content: str | None = None
    blocks: list[ContentBlock] | None = None
    attachments: list[Attachment] | None = None
    target_agent_id: str | None = None
    task_id: str | None = None
    steer: bool | None = None
    conversation_id: str | None = None
    """Only where the envelope names none (older logs)."""


# --- tasks -----------------------------------------------------------------------------------


class TaskCreatedPayload(Fact):
    fact_type = "task.created"
    title: str
    task_id: str | None = None
    description: str | None = None
    target_agent_id: str | None = None
    created_by: str | None = None
    parent_task_id: str | None = None


class TaskAcceptedPayload(Fact):
    fact_type = "task.accepted"
    task_id: str


class TaskStatusChangedPayload(Fact):
    fact_type = "task.status_changed"
    task_id: str
    status: str
    """A task status (``queued``, ``running``, ``waiting_for_human``, ``succeeded``, …)."""
    progress: int | None = None
    summary: str | None = None
    error: str | dict[str, Any] | None = None
    """What went wrong: the agent's text (``agent_unreachable`` when the hub gave up on it);
    the log may hold an object, as the store keeps the error as JSON."""
    last_heartbeat_at: Millis | None = None
    """Set when the hub failed the task because its agent stayed away."""


class TaskChildCreatedPayload(Fact):
    fact_type = "task.child_created"
    child_task_id: str
    parent_task_id: str
    title: str
    status: str | None = None
    description: str | None = None
    target_agent_id: str | None = None


class TaskCancelRequestedPayload(Fact):
    fact_type = "task.cancel_requested"
    recorded_when_none = ("targetAgentId",)
    task_id: str
    reason: str | None = None
    target_agent_id: str | None = None


# --- interactions ----------------------------------------------------------------------------


class RecordedInteraction(Interaction):
    """The card as recorded: an agent's ``Interaction``, whose expiry some logs hold as
    milliseconds rather than ISO 8601 text."""

    @field_validator("expires_at", mode="before")
    @classmethod
    def _ms_as_time(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return ms_to_datetime(value)
        return value


class InteractionRequestedPayload(Fact):
    fact_type = "interaction.requested"
    interaction: RecordedInteraction


class InteractionResolvedPayload(Fact):
    fact_type = "interaction.resolved"
    recorded_when_none = ("respondedByName", "targetAgentId")
    interaction_id: str
    response: InteractionResponse
    responded_by: str
    responded_by_name: str | None = None
    responded_at: Millis
    target_agent_id: str | None = None


class InteractionExpiredPayload(Fact):
    fact_type = "interaction.expired"
    recorded_when_none = ("expiresAt", "targetAgentId")
    interaction_id: str
    expires_at: Millis | None = None
    target_agent_id: str | None = None


class InteractionCancelledPayload(Fact):
    fact_type = "interaction.cancelled"
    recorded_when_none = ("targetAgentId",)
    interaction_id: str
    reason: str | None = None
    task_id: str | None = None
    target_agent_id: str | None = None


# --- artifacts and tools ---------------------------------------------------------------------


class ArtifactCreatedPayload(Fact):
    fact_type = "artifact.created"
    artifact_id: str
    name: str
    url: str
    mime_type: str | None = None
    summary: str | None = None
    task_id: str | None = None


class ToolRegisteredPayload(Fact):
    fact_type = "tool.registered"
    device_id: str
    user_id: str | None = None
    name: str | None = None
    tools: list[dict[str, Any]] | None = None
    """The app's tool definitions (seed 000)."""


class ToolCalledPayload(Fact):
    fact_type = "tool.called"
    tool_call_id: str
    call_id: str
    agent_id: str
    name: str
    action: str | None = None
    arguments: dict[str, Any] | None = None
    instance_id: str | None = None
    timeout_ms: int | None = None
    expires_at: Millis | None = None
    target_agent_id: str | None = None


class ToolCompletedPayload(Fact):
    fact_type = "tool.completed"
    tool_call_id: str
    call_id: str
    name: str
    action: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    """``{code, message}`` with a code of the error taxonomy."""
    answered_by: str | None = None
    answered_by_name: str | None = None
    answered_at: Millis | None = None
    device_id: str | None = None
    expired: bool | None = None
    target_agent_id: str | None = None


class ToolCancelledPayload(Fact):
    fact_type = "tool.cancelled"
    tool_call_id: str
    call_id: str
    reason: str | None = None
    task_id: str | None = None
    target_agent_id: str | None = None


FACTS: Mapping[str, type[Fact]] = {
    model.fact_type: model
    for model in (
        WorkspaceCreatedPayload,
        MemberJoinedPayload,
        AgentPairedPayload,
        AgentConnectedPayload,
        AgentStatusChangedPayload,
        AgentRenamedPayload,
        AgentRevokedPayload,
        ConversationCreatedPayload,
        MessageCreatedPayload,
        TaskCreatedPayload,
        TaskAcceptedPayload,
        TaskStatusChangedPayload,
        TaskChildCreatedPayload,
        TaskCancelRequestedPayload,
        InteractionRequestedPayload,
        InteractionResolvedPayload,
        InteractionExpiredPayload,
        InteractionCancelledPayload,
        ArtifactCreatedPayload,
        ToolRegisteredPayload,
        ToolCalledPayload,
        ToolCompletedPayload,
        ToolCancelledPayload,
    )
}
"""Every recorded fact type → its payload model."""

RECORDED_TYPES: frozenset[str] = frozenset(FACTS)
"""The types the hub records in its log (docs/protocol.md section 5.4)."""


def parse_fact(event_type: str, payload: Mapping[str, Any]) -> Fact:
    """A stored payload as its fact; ``KeyError`` for a type no model describes, and
    pydantic's ``ValidationError`` (a ``ValueError``) for a payload that does not fit."""
    return FACTS[event_type].model_validate(payload)
