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

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
    awaiting_confirmation: bool | None = None
    """True when a person must confirm the agent before it gets work (``agent.confirmed``);
    absent (every older log, and an agent the hub's operator set up) means confirmed."""
    capabilities: list[str] | None = None
    """What the adapter said it can do when it redeemed the code, if it said."""


class AgentConnectedPayload(Fact):
    fact_type = "agent.connected"
    agent_id: str
    agent_version: str | None = None
    runtime: str | None = None
    capabilities: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    """The tool definitions the agent offers (seed 000), absent when it did not say."""
    settings_schema: dict[str, Any] | None = None
    """The JSON Schema of the agent's settings, absent when it has none."""


class AgentConfirmedPayload(Fact):
    fact_type = "agent.confirmed"
    agent_id: str
    name: str
    """The name the person confirmed (maybe a new one)."""
    confirmed_by: str
    target_agent_id: str
    """The agent itself: it hears of its confirmation on its downlink."""


class AgentRejectedPayload(Fact):
    fact_type = "agent.rejected"
    agent_id: str
    rejected_by: str


class AgentSettingsChangedPayload(Fact):
    fact_type = "agent.settings_changed"
    agent_id: str
    values: dict[str, Any]
    """The complete settings saved (defaults filled in), checked against its schema."""
    changed_by: str
    target_agent_id: str


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
    project_id: str | None = None
    """The project it belongs to; absent for a personal conversation (read-only actions)."""


class ConversationAgentJoinedPayload(Fact):
    """An agent became part of a conversation after it was created: a person addressed a
    message to it there. Recorded before that message, so the agent's replies belong."""

    fact_type = "conversation.agent_joined"
    conversation_id: str
    agent_id: str


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
    cause: str | None = None
    """Why the hub itself recorded the change, when it did: ``cancel_timeout`` when a
    requested cancel went unconfirmed past its deadline."""
    target_agent_id: str | None = None
    """Set when the hub recorded the change, so the task's agent hears of it."""


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
    cancel_deadline: Millis | None = None
    """When the hub records the task cancelled if its agent has not confirmed by then."""


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


# --- transcript (lineup.protocol.activity) ---------------------------------------------------


class ActivityStartedPayload(Fact):
    fact_type = "activity.started"
    activity_id: str
    kind: str
    """``tool_call``, ``command``, ``file_change``, ``reasoning``, ``context`` or ``error``."""
    title: str | None = None
    name: str | None = None
    arguments: Any = None
    command: str | None = None
    cwd: str | None = None
    path: str | None = None
    change: str | None = None
    diff: str | None = None
    diff_url: str | None = None
    text: str | None = None
    snapshot_url: str | None = None
    reply_to: str | None = None
    code: str | None = None


class ActivityOutputPayload(Fact):
    fact_type = "activity.output"
    activity_id: str
    chunk: str
    offset: int
    stream: str | None = None


class ActivityFinishedPayload(Fact):
    fact_type = "activity.finished"
    activity_id: str
    status: str
    result: Any = None
    result_url: str | None = None
    error: str | None = None
    exit_code: int | None = None
    output_url: str | None = None
    output_chars: int | None = None
    duration_ms: int | None = None


class ActivityUsagePayload(Fact):
    fact_type = "activity.usage"
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    context_window: int | None = None
    model: str | None = None


# --- imported session files (lineup.protocol.session_file) -----------------------------------


class SessionImportedPayload(Fact):
    """A session file became this conversation (recorded right after its
    ``conversation.created``); its entries follow in ``session.entries_imported`` facts."""

    fact_type = "session.imported"
    conversation_id: str
    header: dict[str, Any]
    """The file's header line, as the hub read it (in ``formatVersion``)."""
    format_version: int
    """The session file format version ``header`` and the entries are kept in."""
    source_format: Literal["lineup", "pi"]
    source_version: int
    """The version the file was written in (before it was migrated)."""
    entry_count: int
    leaf_id: str | None = None
    """The last entry: the active branch ends there, and the conversation goes on from it."""


class ImportedMessage(WireModel):
    """How an imported message shows in the conversation, as the hub decided on import."""

    entry_id: str
    """The entry it shows."""
    message_id: str
    author: MessageAuthor
    content: str
    blocks: list[ContentBlock] | None = None
    attachments: list[Attachment] | None = None
    created_at: Millis
    """The message's own time, from the file."""


class ImportedEntry(WireModel):
    entry: dict[str, Any]
    """The entry line as a JSON object (in the fact's ``formatVersion``)."""
    shown: bool | None = None
    """True for an entry on the active branch (what the conversation shows); absent for the
    entries of other branches, which are kept and exported but not shown."""


class SessionEntriesImportedPayload(Fact):
    """Entries of an imported session file, in file order, kept as read: its export writes
    them again. One fact holds at most one message the conversation shows — its last entry —
    so that each shown message has a sequence of its own, as every message has."""

    fact_type = "session.entries_imported"
    conversation_id: str
    format_version: int
    first: int
    """The place in the file of the first of ``entries`` (1: the line after the header)."""
    entries: list[ImportedEntry]
    message: ImportedMessage | None = None
    """When the last of ``entries`` is a message on the active branch: how it shows."""


# --- projects and governance -----------------------------------------------------------------


class ProjectCreatedPayload(Fact):
    fact_type = "project.created"
    project_id: str
    name: str
    context: str | None = None
    """The project's business context, in a person's words (shown to its agents)."""
    working_directory: str | None = None
    created_by: str
    """The user who made it, its first owner."""


class ProjectUpdatedPayload(Fact):
    fact_type = "project.updated"
    project_id: str
    name: str | None = None
    context: str | None = None
    working_directory: str | None = None


class ProjectMemberSetPayload(Fact):
    fact_type = "project.member_set"
    project_id: str
    user_id: str
    role: Literal["owner", "editor", "viewer"]
    set_by: str | None = None


class ProjectMemberRemovedPayload(Fact):
    fact_type = "project.member_removed"
    project_id: str
    user_id: str
    removed_by: str | None = None


class CapabilityStateChangedPayload(Fact):
    fact_type = "capability.state_changed"
    capability: str
    enabled: bool
    reason: str | None = None


class ProviderSurface(WireModel):
    """How a change moves the capabilities a workspace's agents can reach."""

    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    """Same id, but another effect, mode, schema or preview."""


class ProviderChangeRequestedPayload(Fact):
    """A workspace owner asked to install, upgrade, enable, disable, roll back or uninstall a
    provider; nothing changes until it is approved (seed 003 §5, the lifecycle table)."""

    fact_type = "provider.change_requested"
    change_id: str
    provider_id: str
    action: Literal["install", "upgrade", "enable", "disable", "rollback", "uninstall"]
    from_version: str | None = None
    from_digest: str | None = None
    to_version: str | None = None
    to_digest: str | None = None
    surface: ProviderSurface = Field(default_factory=ProviderSurface)
    contract_passed: bool | None = None
    """The contract kit's verdict on the package to switch to (install, upgrade)."""
    reason: str | None = None


class ProviderChangeDecidedPayload(Fact):
    fact_type = "provider.change_decided"
    change_id: str
    provider_id: str
    outcome: Literal["applied", "rejected", "failed"]
    reason: str | None = None


class ProviderStateChangedPayload(Fact):
    """Where a provider stands in a workspace after an applied change."""

    fact_type = "provider.state_changed"
    provider_id: str
    state: Literal["enabled", "disabled", "removed"]
    version: str
    digest: str
    source: Literal["bundled", "package"]
    previous_version: str | None = None
    previous_digest: str | None = None
    """What a rollback returns to; kept on disk and in the database."""
    change_id: str | None = None


class PolicyRuleSetPayload(Fact):
    fact_type = "policy.rule_set"
    rule_id: str
    capability: str
    """A capability id, or a prefix ending in ``*`` (``scheduling.*``), or ``*``."""
    effect: Literal["allow", "deny"]
    project_id: str | None = None
    """The project the rule holds in; absent for the whole workspace."""
    instance: str | None = None
    """The instance it holds for; absent for every instance."""
    roles: list[str] | None = None
    """Project roles it holds for; absent for every role."""
    set_by: str | None = None


class PolicyRuleRemovedPayload(Fact):
    fact_type = "policy.rule_removed"
    rule_id: str
    removed_by: str | None = None


class CapabilityInvokedPayload(Fact):
    fact_type = "capability.invoked"
    invocation_id: str
    """The hub's id of the invocation (``ivk_…``, made from the agent and its id)."""
    agent_invocation_id: str
    """The agent's own ``invocationId``."""
    agent_id: str
    capability: str
    effect: Literal["read", "write"]
    instance: str
    params: dict[str, Any]
    params_digest: str
    """``sha256:`` of the params' RFC 8785 canonical form."""
    project_id: str | None = None
    on_behalf_of: str | None = None
    """The user whose conversation it is (the conversation's creator)."""


class ApprovalRequestedPayload(Fact):
    fact_type = "approval.requested"
    approval_id: str
    invocation_id: str
    agent_invocation_id: str
    agent_id: str
    capability: str
    instance: str
    params: dict[str, Any]
    params_digest: str
    summary: str
    impact: str
    resource_version: str | None = None
    draft: dict[str, Any] | None = None
    project_id: str
    requested_for: str | None = None
    """The user on whose conversation the agent asked."""
    expires_at: Millis
    target_agent_id: str


class ApprovalHandedOverPayload(Fact):
    fact_type = "approval.handed_over"
    approval_id: str
    assignee: str
    """The user who is now asked to decide."""
    by: str


class ApprovalDecidedPayload(Fact):
    fact_type = "approval.decided"
    approval_id: str
    invocation_id: str
    agent_invocation_id: str
    capability: str
    decision: Literal["approved", "rejected", "expired", "voided"]
    """``voided``: what it was bound to changed (the resource's version, the capability was
    disabled) before it was approved."""
    by: str | None = None
    by_name: str | None = None
    reason: str | None = None
    permission_id: str | None = None
    """The standing permission granted with the approval, if any."""
    target_agent_id: str


class PermissionGrantedPayload(Fact):
    fact_type = "permission.granted"
    permission_id: str
    project_id: str
    capability: str
    instance: str
    bounds: dict[str, Any]
    """Per parameter: ``{"equals": v}``, ``{"in": [...]}`` or ``{"min": a, "max": b}``."""
    expires_at: Millis | None = None
    max_calls: int | None = None
    granted_by: str
    approval_id: str | None = None


class PermissionRevokedPayload(Fact):
    fact_type = "permission.revoked"
    permission_id: str
    by: str
    reason: str | None = None


class GrantIssuedPayload(Fact):
    fact_type = "grant.issued"
    grant_id: str
    invocation_id: str
    params_digest: str
    instance: str
    resource_version: str | None = None
    approval_id: str | None = None
    permission_id: str | None = None
    expires_at: Millis


class ExecutionStartedPayload(Fact):
    fact_type = "execution.started"
    execution_id: str
    invocation_id: str
    agent_invocation_id: str
    capability: str
    instance: str
    params_digest: str
    idempotency_key: str
    grant_id: str | None = None
    expected_version: str | None = None
    target_agent_id: str


class ExecutionAttemptedPayload(Fact):
    fact_type = "execution.attempted"
    execution_id: str
    attempt: int
    outcome: str
    """What this attempt came to: ``timeout``, ``receipt_found``, a retryable error code."""
    detail: str | None = None


class ExecutionAcceptedPayload(Fact):
    fact_type = "execution.accepted"
    execution_id: str
    invocation_id: str
    agent_invocation_id: str
    capability: str
    job_id: str
    receipt: dict[str, Any] | None = None
    target_agent_id: str


class ExecutionFinishedPayload(Fact):
    fact_type = "execution.finished"
    execution_id: str
    invocation_id: str
    agent_invocation_id: str
    capability: str
    status: Literal["succeeded", "failed", "unknown_result"]
    output: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    """``{code, message, retryable}`` with a code of the error taxonomy."""
    receipt: dict[str, Any] | None = None
    target_agent_id: str


# --- account bindings ------------------------------------------------------------------------


class BindingBoundPayload(Fact):
    fact_type = "binding.bound"
    user_id: str
    """The person whose account it is."""
    provider: str
    instance: str
    auth_kind: Literal["oauth", "password-exchange"]
    account: str | None = None
    """Who the system says the person is (``ana@plant-1``), as the provider named it."""
    expires_at: Millis | None = None
    """When the credentials run out (an OAuth access token is renewed before then)."""


class BindingExpiredPayload(Fact):
    fact_type = "binding.expired"
    user_id: str
    provider: str
    instance: str
    reason: Literal["refresh_refused", "token_expired", "signed_out_by_system"]
    """``refresh_refused``: the authorization server refused to renew the token;
    ``token_expired``: the credentials ran out and cannot be renewed;
    ``signed_out_by_system``: the system answered a call ``unauthenticated``."""


class BindingRemovedPayload(Fact):
    fact_type = "binding.removed"
    user_id: str
    provider: str
    instance: str
    by: str
    """Who unbound it: the person, or ``hub`` when the system's provider went."""


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
        AgentConfirmedPayload,
        AgentRejectedPayload,
        AgentSettingsChangedPayload,
        ConversationCreatedPayload,
        ConversationAgentJoinedPayload,
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
        ActivityStartedPayload,
        ActivityOutputPayload,
        ActivityFinishedPayload,
        ActivityUsagePayload,
        SessionImportedPayload,
        SessionEntriesImportedPayload,
        ProjectCreatedPayload,
        ProjectUpdatedPayload,
        ProjectMemberSetPayload,
        ProjectMemberRemovedPayload,
        CapabilityStateChangedPayload,
        PolicyRuleSetPayload,
        PolicyRuleRemovedPayload,
        CapabilityInvokedPayload,
        ApprovalRequestedPayload,
        ApprovalHandedOverPayload,
        ApprovalDecidedPayload,
        PermissionGrantedPayload,
        PermissionRevokedPayload,
        GrantIssuedPayload,
        ExecutionStartedPayload,
        ExecutionAttemptedPayload,
        ExecutionAcceptedPayload,
        ExecutionFinishedPayload,
        ProviderChangeRequestedPayload,
        ProviderChangeDecidedPayload,
        ProviderStateChangedPayload,
        BindingBoundPayload,
        BindingExpiredPayload,
        BindingRemovedPayload,
    )
}
"""Every recorded fact type → its payload model."""

RECORDED_TYPES: frozenset[str] = frozenset(FACTS)
"""The types the hub records in its log (docs/protocol.md section 5.4)."""


def parse_fact(event_type: str, payload: Mapping[str, Any]) -> Fact:
    """A stored payload as its fact; ``KeyError`` for a type no model describes, and
    pydantic's ``ValidationError`` (a ``ValueError``) for a payload that does not fit."""
    return FACTS[event_type].model_validate(payload)
