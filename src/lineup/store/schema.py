"""The one schema for SQLite and PostgreSQL; migrations are checked against it by a test.

Timestamps are integer milliseconds (UTC) in BIGINT columns, identifiers are application-made
ULID strings. Only ``workspaces`` is a foreign-key target: the projection tables are emptied
and replayed by ``rebuild_projections``, so nothing outside the replay may point at them.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from lineup.store.jsontype import json_column_type

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

ID = String(64)
"""ULIDs are 26 characters; prefixed ids (``task_01J…``) and external ids need some room."""


def _ws_fk() -> ForeignKey:
    return ForeignKey("workspaces.id")


workspaces = Table(
    "workspaces",
    metadata,
    Column("id", ID, primary_key=True),
    Column("name", Text, nullable=False),
    Column("last_sequence", BigInteger, nullable=False, server_default="0"),
    Column("last_recorded_at", BigInteger, nullable=False, server_default="0"),
    Column("created_at", BigInteger, nullable=False),
)
"""``last_sequence`` and ``last_recorded_at`` belong to the log: the latest event's sequence
and recorded time, bumped by every append (``eventlog``)."""

events = Table(
    "events",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("id", String(128), nullable=False),
    Column("type", String(128), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("correlation_id", ID, nullable=True),
    Column("occurred_at", BigInteger, nullable=False),
    Column("recorded_at", BigInteger, nullable=False),
    Column("payload", json_column_type(), nullable=False),
    Column("fingerprint", String(32), nullable=True),
    PrimaryKeyConstraint("workspace_id", "sequence"),
    UniqueConstraint("workspace_id", "actor", "id"),
    Index("ix_events_workspace_id_type", "workspace_id", "type"),
    Index("ix_events_workspace_id_task_id", "workspace_id", "task_id"),
    Index("ix_events_replay_order", "recorded_at", "workspace_id", "sequence"),
)
"""``id`` is the sender's idempotency key, so it is unique per sender (``actor``) within a
workspace, not across them: two agents that number their events 1, 2, 3 both get theirs
recorded. ``fingerprint`` is a digest of what the sender sent under that id, so a reused id
with other content is refused instead of being answered as a resend of something else."""

event_subjects = Table(
    "event_subjects",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("subject_kind", String(32), nullable=False),
    Column("subject_id", String(128), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    PrimaryKeyConstraint("workspace_id", "subject_kind", "subject_id", "sequence"),
    Index("ix_event_subjects_workspace_id_sequence", "workspace_id", "sequence"),
)
"""Which events are about which task, message, card… (``lineup.protocol.subjects``): written
with each event, so a person can open the raw events behind anything they see. A projection
of the log (a replay refills it); compaction deletes the rows of the events it deletes."""

# --- projections -------------------------------------------------------------------------

users = Table(
    "users",
    metadata,
    Column("id", ID, primary_key=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("display_name", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)

memberships = Table(
    "memberships",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("user_id", ID, nullable=False),
    Column("role", String(16), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    PrimaryKeyConstraint("workspace_id", "user_id"),
    Index("ix_memberships_user_id", "user_id"),
)

agents = Table(
    "agents",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("name", Text, nullable=False),
    Column("runtime", Text, nullable=True),
    Column("agent_version", Text, nullable=True),
    Column("status", String(32), nullable=False),
    Column("capabilities", json_column_type(), nullable=False),
    Column("tools", json_column_type(), nullable=False),
    Column("last_heartbeat_at", BigInteger, nullable=True),
    Column("connected_at", BigInteger, nullable=True),
    Column("offline_at", BigInteger, nullable=True),  # when the hub recorded it offline
    Column("revoked_at", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("confirmed_at", BigInteger, nullable=True),  # null: a person has not confirmed it
    Column("settings_schema", json_column_type(), nullable=True),
    Column("settings", json_column_type(), nullable=True),  # as a person last saved them
    # the agent.paired event's sequence: its downlink begins there (null: paired before it
    # was kept)
    Column("paired_sequence", BigInteger, nullable=True),
    Index("ix_agents_workspace_id", "workspace_id"),
)

conversations = Table(
    "conversations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("title", Text, nullable=False),
    Column("agent_ids", json_column_type(), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    Column("project_id", ID, nullable=True),
    Column("created_by", String(200), nullable=True),
    Index("ix_conversations_workspace_id_last_sequence", "workspace_id", "last_sequence"),
)
"""``project_id`` is absent for a personal conversation, where agents may only read;
``created_by`` is the actor who started it, on whose behalf its agents act."""

messages = Table(
    "messages",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("conversation_id", ID, nullable=False),
    Column("author_kind", String(16), nullable=False),
    Column("author_id", ID, nullable=True),
    Column("author_name", Text, nullable=True),
    Column("content", Text, nullable=False),
    Column("blocks", json_column_type(), nullable=True),
    Column("attachments", json_column_type(), nullable=True),
    Column("target_agent_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Index("ix_messages_conversation_id_sequence", "conversation_id", "sequence"),
)

tasks = Table(
    "tasks",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("conversation_id", ID, nullable=True),
    Column("parent_task_id", ID, nullable=True),
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=True),
    Column("target_agent_id", ID, nullable=True),
    Column("status", String(32), nullable=False),
    Column("progress", Integer, nullable=False),
    Column("summary", Text, nullable=True),
    Column("error", json_column_type(), nullable=True),
    Column("cancel_requested", Boolean, nullable=False),
    Column("cancel_reason", Text, nullable=True),
    Column("created_by", String(200), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    # when a requested cancel the agent has not confirmed is recorded by the hub instead
    Column("cancel_deadline", BigInteger, nullable=True),
    # why the hub itself ended the task, when it did (e.g. "cancel_timeout")
    Column("end_cause", String(64), nullable=True),
    Index("ix_tasks_workspace_id_status", "workspace_id", "status"),
    Index("ix_tasks_cancel_deadline", "cancel_deadline"),
    Index("ix_tasks_workspace_id_created_at", "workspace_id", "created_at"),
    Index("ix_tasks_parent_task_id", "parent_task_id"),
)

interactions = Table(
    "interactions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("task_id", ID, nullable=True),
    Column("conversation_id", ID, nullable=True),
    Column("agent_id", ID, nullable=True),
    Column("kind", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("request", json_column_type(), nullable=False),
    Column("response", json_column_type(), nullable=True),
    Column("responded_by", String(200), nullable=True),
    Column("responded_by_name", Text, nullable=True),
    Column("responded_at", BigInteger, nullable=True),
    Column("expires_at", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("cancel_reason", Text, nullable=True),
    Index("ix_interactions_workspace_id_status", "workspace_id", "status"),
    Index("ix_interactions_task_id_status", "task_id", "status"),
)

artifacts = Table(
    "artifacts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("task_id", ID, nullable=True),
    Column("conversation_id", ID, nullable=True),
    Column("name", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("mime_type", String(255), nullable=True),
    Column("summary", Text, nullable=True),
    Column("created_by", String(200), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_artifacts_task_id", "task_id"),
    Index("ix_artifacts_conversation_id", "conversation_id"),
)

PROJECTION_TABLES: tuple[Table, ...] = (
    users,
    memberships,
    agents,
    conversations,
    messages,
    tasks,
    interactions,
    artifacts,
)
"""Everything ``rebuild_projections`` empties and replays. ``workspaces`` is not here: its
``last_sequence`` and ``last_recorded_at`` belong to the log, so the row is kept and
``workspace.created`` upserts it."""


tool_devices = Table(
    "tool_devices",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("device_id", ID, nullable=False),
    Column("user_id", ID, nullable=True),
    Column("name", Text, nullable=True),
    Column("tools", json_column_type(), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    PrimaryKeyConstraint("workspace_id", "device_id"),
)
"""The tools each person's app (device) registered (``tool.registered``)."""

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("agent_id", ID, nullable=False),
    Column("call_id", String(128), nullable=False),
    Column("name", String(64), nullable=False),
    Column("action", String(64), nullable=True),
    Column("arguments", json_column_type(), nullable=False),
    Column("status", String(16), nullable=False),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("instance_id", ID, nullable=True),
    Column("result", json_column_type(), nullable=True),
    Column("error", json_column_type(), nullable=True),
    Column("answered_by", String(200), nullable=True),
    Column("answered_by_name", Text, nullable=True),
    Column("answered_at", BigInteger, nullable=True),
    Column("cancel_reason", Text, nullable=True),
    Column("timeout_ms", BigInteger, nullable=True),
    Column("expires_at", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Index("ix_tool_calls_agent_call", "workspace_id", "agent_id", "call_id", unique=True),
    Index("ix_tool_calls_workspace_id_status", "workspace_id", "status"),
    Index("ix_tool_calls_instance_id_status", "instance_id", "status"),
    Index("ix_tool_calls_status_expires_at", "status", "expires_at"),
)
"""Agents' calls of app tools: pending until an app answers (``tool.called`` →
``tool.completed`` | ``tool.cancelled``). ``call_id`` is the agent's; ``id`` the hub's."""

canvas_instances = Table(
    "canvas_instances",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("agent_id", ID, nullable=False),
    Column("tool_call_id", ID, nullable=False),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("width", Integer, nullable=False),
    Column("height", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("draws", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    Index("ix_canvas_instances_workspace_id_conversation_id", "workspace_id", "conversation_id"),
)

canvas_ops = Table(
    "canvas_ops",
    metadata,
    Column("tool_call_id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("instance_id", ID, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("path", Text, nullable=True),
    Column("color", String(64), nullable=True),
    Column("width", Integer, nullable=True),
    Column("undone", Boolean, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_canvas_ops_instance_id_sequence", "instance_id", "sequence"),
)
"""A canvas's draws and clears in the order apps answered them (= call order); an ``undo``
marks the latest one ``undone``. ``protocol.builtin_tools.visible_strokes`` reads them."""

PROJECTION_TABLES = (*PROJECTION_TABLES, tool_devices, tool_calls, canvas_instances, canvas_ops)

# --- projects and governance (projections) ---------------------------------------------------

projects = Table(
    "projects",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("name", Text, nullable=False),
    Column("context", Text, nullable=True),
    Column("working_directory", Text, nullable=True),
    Column("created_by", ID, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Index("ix_projects_workspace_id", "workspace_id"),
)

project_members = Table(
    "project_members",
    metadata,
    Column("project_id", ID, nullable=False),
    Column("user_id", ID, nullable=False),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("role", String(16), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    PrimaryKeyConstraint("project_id", "user_id"),
    Index("ix_project_members_workspace_id_user_id", "workspace_id", "user_id"),
)
"""A person's role in a project: ``owner``, ``editor`` or ``viewer``."""

capability_states = Table(
    "capability_states",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("capability", String(100), nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("reason", Text, nullable=True),
    Column("updated_by", String(200), nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    PrimaryKeyConstraint("workspace_id", "capability"),
)
"""Capabilities a workspace switched off (or on again); one with no row is enabled."""

policy_rules = Table(
    "policy_rules",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("project_id", ID, nullable=True),
    Column("capability", String(100), nullable=False),
    Column("instance", String(100), nullable=True),
    Column("roles", json_column_type(), nullable=True),
    Column("effect", String(8), nullable=False),
    Column("set_by", String(200), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_policy_rules_workspace_id", "workspace_id"),
)

invocations = Table(
    "invocations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("agent_id", ID, nullable=False),
    Column("agent_invocation_id", String(128), nullable=False),
    Column("capability", String(100), nullable=False),
    Column("effect", String(8), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("params", json_column_type(), nullable=False),
    Column("params_digest", String(80), nullable=False),
    Column("project_id", ID, nullable=True),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("on_behalf_of", String(200), nullable=True),
    Column("status", String(24), nullable=False),
    Column("approval_id", ID, nullable=True),
    Column("execution_id", ID, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Index("ix_invocations_agent", "workspace_id", "agent_id", "agent_invocation_id", unique=True),
)
"""Agents' calls of capabilities (``capability.invoked``), with where each one is:
``waiting_for_approval``, ``running``, ``accepted`` or a terminal status."""

approvals = Table(
    "approvals",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("project_id", ID, nullable=False),
    Column("invocation_id", ID, nullable=False),
    Column("agent_id", ID, nullable=False),
    Column("capability", String(100), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("params", json_column_type(), nullable=False),
    Column("params_digest", String(80), nullable=False),
    Column("resource_version", String(200), nullable=True),
    Column("summary", Text, nullable=False),
    Column("impact", Text, nullable=False),
    Column("draft", json_column_type(), nullable=True),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("requested_for", String(200), nullable=True),
    Column("assignee", ID, nullable=True),
    Column("status", String(16), nullable=False),
    Column("decided_by", String(200), nullable=True),
    Column("decided_by_name", Text, nullable=True),
    Column("decided_at", BigInteger, nullable=True),
    Column("reason", Text, nullable=True),
    Column("permission_id", ID, nullable=True),
    Column("expires_at", BigInteger, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Index("ix_approvals_workspace_id_status", "workspace_id", "status"),
    Index("ix_approvals_status_expires_at", "status", "expires_at"),
)
"""Confirm cards: ``pending`` → ``approved`` | ``rejected`` | ``expired`` | ``voided``."""

standing_permissions = Table(
    "standing_permissions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("project_id", ID, nullable=False),
    Column("capability", String(100), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("bounds", json_column_type(), nullable=False),
    Column("expires_at", BigInteger, nullable=True),
    Column("max_calls", Integer, nullable=True),
    Column("calls_used", Integer, nullable=False),
    Column("granted_by", String(200), nullable=False),
    Column("approval_id", ID, nullable=True),
    Column("revoked_at", BigInteger, nullable=True),
    Column("revoked_by", String(200), nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_standing_permissions_workspace_id", "workspace_id"),
)

grants = Table(
    "grants",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("invocation_id", ID, nullable=False, unique=True),
    Column("approval_id", ID, nullable=True, unique=True),
    Column("permission_id", ID, nullable=True),
    Column("params_digest", String(80), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("resource_version", String(200), nullable=True),
    Column("expires_at", BigInteger, nullable=False),
    Column("used_by", ID, nullable=True, unique=True),
    Column("created_at", BigInteger, nullable=False),
)
"""One-time grants: one per approval (or per use of a standing permission), used by exactly
one execution (``used_by``); the unique columns hold that even against a buggy caller."""

executions = Table(
    "executions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("invocation_id", ID, nullable=False, unique=True),
    Column("agent_id", ID, nullable=False),
    Column("capability", String(100), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("params_digest", String(80), nullable=False),
    Column("idempotency_key", String(128), nullable=False, unique=True),
    Column("grant_id", ID, nullable=True),
    Column("expected_version", String(200), nullable=True),
    Column("status", String(24), nullable=False),
    Column("job_id", String(200), nullable=True),
    Column("attempts", Integer, nullable=False),
    Column("output", json_column_type(), nullable=True),
    Column("error", json_column_type(), nullable=True),
    Column("receipt", json_column_type(), nullable=True),
    Column("started_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("finished_at", BigInteger, nullable=True),
    Index("ix_executions_workspace_id_status", "workspace_id", "status"),
    Index("ix_executions_status", "status"),
)
"""Executions, recorded (``started``) before the provider is called: ``started`` →
``accepted`` (an async job) → ``succeeded`` | ``failed`` | ``unknown_result``."""

PROJECTION_TABLES = (
    *PROJECTION_TABLES,
    projects,
    project_members,
    capability_states,
    policy_rules,
    invocations,
    approvals,
    standing_permissions,
    grants,
    executions,
)

# --- provider packages ---------------------------------------------------------------------

provider_installs = Table(
    "provider_installs",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("provider_id", String(64), nullable=False),
    Column("state", String(20), nullable=False),
    Column("version", String(64), nullable=False),
    Column("digest", String(80), nullable=False),
    Column("source", String(20), nullable=False),
    Column("previous_version", String(64), nullable=True),
    Column("previous_digest", String(80), nullable=True),
    Column("installed_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("updated_by", String(200), nullable=False),
    PrimaryKeyConstraint("workspace_id", "provider_id"),
)
"""Where each provider stands in a workspace (``provider.state_changed``): ``enabled``,
``disabled`` or ``removed``, at which version, and what a rollback returns to. A bundled
provider with no row is enabled at the version the hub ships."""

provider_changes = Table(
    "provider_changes",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("provider_id", String(64), nullable=False),
    Column("action", String(20), nullable=False),
    Column("status", String(20), nullable=False),
    Column("from_version", String(64), nullable=True),
    Column("from_digest", String(80), nullable=True),
    Column("to_version", String(64), nullable=True),
    Column("to_digest", String(80), nullable=True),
    Column("surface", json_column_type(), nullable=False),
    Column("contract_passed", Boolean, nullable=True),
    Column("reason", Text, nullable=True),
    Column("requested_by", String(200), nullable=False),
    Column("requested_at", BigInteger, nullable=False),
    Column("decided_by", String(200), nullable=True),
    Column("decided_at", BigInteger, nullable=True),
    Column("decision_reason", Text, nullable=True),
    Index("ix_provider_changes_workspace_id_status", "workspace_id", "status"),
)
"""Lifecycle changes and their approval (``provider.change_requested`` / ``_decided``)."""

PROJECTION_TABLES = (*PROJECTION_TABLES, provider_installs, provider_changes)
PROJECTION_TABLES = (*PROJECTION_TABLES, event_subjects)

# --- imported session files (projections) ----------------------------------------------------

imported_sessions = Table(
    "imported_sessions",
    metadata,
    Column("conversation_id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("session_id", String(200), nullable=False),
    Column("header", json_column_type(), nullable=False),
    Column("format_version", Integer, nullable=False),
    Column("source_format", String(16), nullable=False),
    Column("source_version", Integer, nullable=False),
    Column("entry_count", Integer, nullable=False),
    Column("leaf_id", String(200), nullable=True),
    Column("created_at", BigInteger, nullable=False),
)
"""A conversation that began as a session file (``session.imported``): the file's header,
which its exports write again."""

session_entries = Table(
    "session_entries",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("conversation_id", ID, nullable=False),
    Column("position", Integer, nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("entry_id", String(200), nullable=False),
    Column("parent_id", String(200), nullable=True),
    Column("format_version", Integer, nullable=False),
    Column("entry", json_column_type(), nullable=False),
    Column("shown", Boolean, nullable=False),
    PrimaryKeyConstraint("workspace_id", "conversation_id", "position"),
)
"""Every entry of an imported session file, every branch of it, at its place in the file
(``position``; ``sequence`` is the event that recorded it): kept here rather than read back
from the log, so that compacting the log never loses the branches nothing else holds."""

PROJECTION_TABLES = (*PROJECTION_TABLES, imported_sessions, session_entries)

provider_packages = Table(
    "provider_packages",
    metadata,
    Column("digest", String(80), primary_key=True),
    Column("provider_id", String(64), nullable=False),
    Column("version", String(64), nullable=False),
    Column("manifest", json_column_type(), nullable=False),
    Column("archive", LargeBinary, nullable=False),
    Column("signer", String(100), nullable=False),
    Column("development", Boolean, nullable=False),
    Column("contract", json_column_type(), nullable=True),
    Column("added_at", BigInteger, nullable=False),
)
"""Verified packages by their tree digest, archive included: every node of a cluster unpacks
a package from here, and a rollback finds the previous version here. Not event-sourced (the
log holds the digests)."""

provider_health = Table(
    "provider_health",
    metadata,
    Column("id", ID, primary_key=True),
    Column("provider_id", String(64), nullable=False),
    Column("digest", String(80), nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("detail", Text, nullable=False),
    Column("checked_at", BigInteger, nullable=False),
    Index("ix_provider_health_digest_checked_at", "digest", "checked_at"),
)
"""Health probes of each loaded provider version, the last few kept."""


provider_credentials = Table(
    "provider_credentials",
    metadata,
    Column("provider", String(64), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("sealed", Text, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    PrimaryKeyConstraint("provider", "instance"),
)
"""What the hub holds to reach a provider's system, sealed at rest (``sealed.Keyring``):
injected per execution, never shown to an agent, a browser or a log. Not event-sourced."""

identity_bindings = Table(
    "identity_bindings",
    metadata,
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("user_id", ID, nullable=False),
    Column("provider", String(64), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("auth_kind", String(24), nullable=False),
    Column("sealed", Text, nullable=True),
    Column("account", Text, nullable=True),
    Column("status", String(16), nullable=False),
    Column("expires_at", BigInteger, nullable=True),
    Column("bound_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("expired_reason", Text, nullable=True),
    PrimaryKeyConstraint("workspace_id", "user_id", "provider", "instance"),
    Index("ix_identity_bindings_provider_instance", "provider", "instance"),
)
"""Each person's own account on a provider's system (ADR-0012): ``bound`` with the sealed
credentials the provider's ``exchange`` gave (and, for OAuth, the refresh token), or
``expired`` with no secret left. The facts ``binding.*`` tell the story; the secret is never
in the log, so this table is not rebuilt from it."""

oauth_flows = Table(
    "oauth_flows",
    metadata,
    Column("state_hash", String(64), primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("user_id", ID, nullable=False),
    Column("provider", String(64), nullable=False),
    Column("instance", String(100), nullable=False),
    Column("sealed_verifier", Text, nullable=False),
    Column("redirect", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Index("ix_oauth_flows_expires_at", "expires_at"),
)
"""OAuth authorization-code flows under way: found by the hash of their ``state``, used once,
ten minutes at most; the PKCE code verifier sealed."""


hosted_agents = Table(
    "hosted_agents",
    metadata,
    Column("agent_id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("engine", String(32), nullable=False),
    Column("cwd", Text, nullable=False),
    Column("api", String(32), nullable=False),
    Column("base_url", Text, nullable=False),
    Column("model", String(200), nullable=False),
    Column("sealed_credential", Text, nullable=False),
    Column("sealed_api_key", Text, nullable=True),
    Column("created_by", String(100), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("project_id", ID, nullable=True),
    Index("ix_hosted_agents_workspace_id", "workspace_id"),
)
"""Agents the hub runs itself (an engine in a working directory): what starts them again
after a restart. ``project_id`` is the project whose conversations the agent works in (none:
any conversation of the workspace). The agent's own credential and the model endpoint's key
are sealed (``sealed.Keyring``): the hub opens them only to hand them to the engine host in
memory. The agent itself is event-sourced like any other (``agent.paired``,
``agent.confirmed``)."""


# --- secrets and sessions (not event-sourced; only hashes are stored) ---------------------

credentials = Table(
    "credentials",
    metadata,
    Column("user_id", ID, primary_key=True),
    Column("password_hash", Text, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("user_id", ID, nullable=False),
    Column("csrf_token_hash", String(255), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("last_used_at", BigInteger, nullable=False),
    Column("user_agent", String(300), nullable=True),
    Column("revoked_at", BigInteger, nullable=True),
    Column("ended_reason", String(40), nullable=True),
    Index("ix_sessions_user_id", "user_id"),
)
"""A person's signed-in session: one family of short-lived access tokens and rotating refresh
tokens (``session_tokens``), ending at ``expires_at`` at the latest. Ending it (``revoked_at``)
ends every token of the family at once."""

session_tokens = Table(
    "session_tokens",
    metadata,
    Column("token_hash", String(255), primary_key=True),
    Column("session_id", ID, nullable=False),
    Column("kind", String(10), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("spent_at", BigInteger, nullable=True),
    Index("ix_session_tokens_session_id", "session_id"),
)
"""The tokens of a session, kept as hashes: ``access`` (minutes) and ``refresh`` (spent, once,
for the next pair; a spent one presented again gives the family away)."""

pairing_codes = Table(
    "pairing_codes",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("code_hash", String(255), nullable=False, unique=True),
    Column("created_by", String(200), nullable=False),
    Column("agent_name", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("used_at", BigInteger, nullable=True),
    Column("failed_attempts", Integer, nullable=False, server_default="0"),
    Index("ix_pairing_codes_workspace_id", "workspace_id"),
)

agent_credentials = Table(
    "agent_credentials",
    metadata,
    Column("id", ID, primary_key=True),
    Column("agent_id", ID, nullable=False),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("secret_hash", String(255), nullable=False, unique=True),
    Column("created_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
    Index("ix_agent_credentials_agent_id", "agent_id"),
)

invitations = Table(
    "invitations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("code_hash", String(255), nullable=False, unique=True),
    Column("role", String(20), nullable=False),
    Column("created_by", ID, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("used_at", BigInteger, nullable=True),
    Column("used_by", ID, nullable=True),
    Column("project_id", ID, nullable=True),
    Column("project_role", String(20), nullable=True),
    Index("ix_invitations_workspace_id", "workspace_id"),
)
"""Invitations to join a workspace: single use, expiring, the code kept only as a hash.
Joining is recorded as the workspace's ``member.joined`` event (and, for an invitation into
``project_id``, that project's ``project.member_set`` with ``project_role``); this row only
guards the code."""

developer_tokens = Table(
    "developer_tokens",
    metadata,
    Column("id", ID, primary_key=True),
    Column("user_id", ID, nullable=False),
    Column("workspace_id", ID, nullable=True),
    Column("name", String(100), nullable=False),
    Column("token_hash", String(255), nullable=False, unique=True),
    Column("scopes", json_column_type(), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=True),
    Column("last_used_at", BigInteger, nullable=True),
    Column("revoked_at", BigInteger, nullable=True),
    Index("ix_developer_tokens_user_id", "user_id"),
)
"""A person's tokens for scripts (``lut_…``), kept only as hashes; ``workspace_id`` limits one
to a single workspace. Not event-sourced, like sessions."""

settings_values = Table(
    "settings_values",
    metadata,
    Column("scope_kind", String(20), nullable=False),
    Column("scope_id", ID, nullable=False),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("key", String(100), nullable=False),
    Column("value", json_column_type(), nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("updated_by", String(200), nullable=False),
    PrimaryKeyConstraint("workspace_id", "scope_kind", "scope_id", "key"),
)
"""Settings people set at a level (``workspace``, ``project``, ``user``, ``conversation``;
see ``lineup.domain.settings``). A user's values are per workspace. Not event-sourced."""

# Runtime coordination of hub nodes, not event-sourced: neither rebuilt by a replay nor read
# by a client. See ``lineup.hub.leases`` and ``lineup.hub.cluster``.

leases = Table(
    "leases",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("acquired_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
)
"""Named, expiring leases: work that must run once across the cluster, and each node's own
liveness (``node:<instance>``). A holder renews before ``expires_at``; anyone may take an
expired lease. Writes go through the store's writer in jobs that name no workspace, which run
alone in the cluster (``lineup.store.write_locks``)."""

agent_links = Table(
    "agent_links",
    metadata,
    Column("agent_id", ID, primary_key=True),
    Column("workspace_id", ID, nullable=False),
    Column("node", String(200), nullable=False),
    Column("connected_at", BigInteger, nullable=False),
    Index("ix_agent_links_node", "node"),
)
"""Which node instance holds each connected agent's socket: written in the same transaction
as ``agent.connected``, removed in the one that records it offline. An agent is connected
while its row names a node whose ``node:<instance>`` lease is live."""

agent_logs = Table(
    "agent_logs",
    metadata,
    Column("agent_id", ID, nullable=False),
    Column("position", BigInteger, nullable=False),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("line_id", String(128), nullable=False),
    Column("at", BigInteger, nullable=False),
    Column("received_at", BigInteger, nullable=False),
    Column("level", String(16), nullable=False),
    Column("logger", String(100), nullable=False),
    Column("message", Text, nullable=False),
    Column("fields", json_column_type(), nullable=True),
    PrimaryKeyConstraint("agent_id", "position"),
    UniqueConstraint("agent_id", "line_id"),
)
"""Each agent's recent diagnostic lines (``agent.logs``), redacted, in the order they arrived
(``position`` counts per agent); only the newest few hundred are kept. ``line_id`` is the
agent's name for a line, so a batch sent again adds nothing. Not event-sourced: a replay of
the log leaves these rows alone (``lineup.store.agent_logs``)."""

# The log's retention (``lineup.store.retention``): not event-sourced, and a replay leaves them.

log_horizons = Table(
    "log_horizons",
    metadata,
    Column("workspace_id", ID, _ws_fk(), primary_key=True),
    Column("horizon", BigInteger, nullable=False),
    Column("compacted_events", BigInteger, nullable=False),
    Column("compacted_at", BigInteger, nullable=False),
)
"""Each compacted workspace's horizon: every event at or after ``horizon`` is kept, and before
it only those the keep rules hold (a workspace with no row was never compacted: horizon 1).
``compacted_events`` counts the events compaction deleted there, all passes together."""

agent_cursors = Table(
    "agent_cursors",
    metadata,
    Column("agent_id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("last_sequence", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)
"""The ``lastSequence`` each agent said in its latest hello: what it surely had. Compaction
keeps the people's messages to an agent after it (the agent may not have them yet)."""

# Reaching people when an agent waits for them or fails (``lineup.hub.notify``). Not
# event-sourced: none of this is rebuilt by a replay. See ``lineup.store.notifications``.

vapid_keys = Table(
    "vapid_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("public_key", Text, nullable=False),
    Column("private_key", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
"""The hub's one Web Push (VAPID) key pair, row 1: made on first start and shared by every
node. The public key is the browsers' ``applicationServerKey``; the private key signs pushes
(a signing key cannot be stored as a hash)."""

push_subscriptions = Table(
    "push_subscriptions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("user_id", ID, nullable=False),
    Column("endpoint", Text, nullable=False),
    Column("endpoint_hash", String(64), nullable=False, unique=True),
    Column("p256dh", String(255), nullable=False),
    Column("auth", String(255), nullable=False),
    Column("label", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("last_attempt_at", BigInteger, nullable=True),
    Column("last_delivered_at", BigInteger, nullable=True),
    Column("failing_since", BigInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    Index("ix_push_subscriptions_user_id", "user_id"),
)
"""A person's devices (one browser's push subscription each) and how delivery to each goes."""

notification_preferences = Table(
    "notification_preferences",
    metadata,
    Column("user_id", ID, primary_key=True),
    Column("events", json_column_type(), nullable=False),
    Column("channels", json_column_type(), nullable=False),
    Column("quiet_start", String(5), nullable=True),
    Column("quiet_end", String(5), nullable=True),
    Column("time_zone", String(64), nullable=False),
    Column("email_last_attempt_at", BigInteger, nullable=True),
    Column("email_last_delivered_at", BigInteger, nullable=True),
    Column("email_failing_since", BigInteger, nullable=True),
    Column("email_last_error", Text, nullable=True),
    Column("updated_at", BigInteger, nullable=False),
)
"""What a person wants to hear about, where, and when not; plus how email delivery goes."""

notifications = Table(
    "notifications",
    metadata,
    Column("id", ID, primary_key=True),
    Column("dedupe_key", String(64), nullable=False, unique=True),
    Column("user_id", ID, nullable=False),
    Column("workspace_id", ID, nullable=False),
    Column("channel", String(16), nullable=False),
    Column("target", ID, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("subject_type", String(32), nullable=False),
    Column("subject_id", String(200), nullable=False),
    Column("event_id", String(128), nullable=True),
    Column("title", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("link", Text, nullable=False),
    Column("tag", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", BigInteger, nullable=False),
    Column("claimed_by", String(200), nullable=True),
    Column("claimed_until", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("delivered_at", BigInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    Index("ix_notifications_status_next_attempt_at", "status", "next_attempt_at"),
    Index("ix_notifications_user_id_created_at", "user_id", "created_at"),
)
"""The outbox: one row per (subject, person, channel, device), unique by ``dedupe_key`` so no
restart and no second node can make a second one. A node claims a due row (``claimed_by``,
``claimed_until``) inside a writer transaction before sending it."""

notification_attempts = Table(
    "notification_attempts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("notification_id", ID, nullable=False),
    Column("user_id", ID, nullable=False),
    Column("channel", String(16), nullable=False),
    Column("target", ID, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("at", BigInteger, nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("error", Text, nullable=True),
    Column("node", String(200), nullable=False),
    Index("ix_notification_attempts_notification_id", "notification_id"),
    Index("ix_notification_attempts_user_id_at", "user_id", "at"),
)
"""Every delivery attempt's outcome: delivered, retry, failed, expired or skipped."""

notification_cursors = Table(
    "notification_cursors",
    metadata,
    Column("workspace_id", ID, _ws_fk(), primary_key=True),
    Column("last_sequence", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)
"""How far the notification worker has read each workspace's log (persisted across restarts).
A workspace with no row is read from its start; the migration starts existing ones at their
latest event, so turning the feature on does not notify about the past."""

# --- files (artifacts people can open) ------------------------------------------------------
# Content agents upload so that people can open it: in the database (not on one node's disk)
# so every node of a cluster serves it. Not event-sourced: ``artifact.created`` refers to a
# file by its address, and a replay of the log leaves these rows alone.

files = Table(
    "files",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("agent_id", ID, nullable=False),
    Column("name", Text, nullable=False),
    Column("mime_type", String(255), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("content", LargeBinary, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_files_workspace_id", "workspace_id"),
)
"""Uploaded files, served only to members of ``workspace_id``. ``id`` is derived from the
agent and its idempotency key when it sent one, so a retried upload finds the first one."""

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("method", String(16), nullable=False),
    Column("path", Text, nullable=False),
    Column("body_hash", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_idempotency_keys_created_at", "created_at"),
)
"""The request each HTTP ``Idempotency-Key`` was first sent with. ``id`` is a hash of the
caller and the key (the key itself, chosen by a client, is not kept); a later request with
that key must match the method, path and body hash or it is refused. Forgotten after a day
(``lineup.store.idempotency.KEY_TTL_MS``). Not event-sourced."""

# --- governance ----------------------------------------------------------------------------

audit_entries = Table(
    "audit_entries",
    metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("at", BigInteger, nullable=False),
    Column("kind", String(128), nullable=False),
    Column("workspace_id", ID, nullable=True),
    Column("actor", String(200), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("data", json_column_type(), nullable=False),
    Column("prev_hash", String(100), nullable=False),
    Column("hash", String(100), nullable=False),
    Index("ix_audit_entries_workspace_id_subject", "workspace_id", "subject"),
)
"""The audit chain (``lineup.core.audit``): one chain for the whole hub, every workspace and
every node, appended to and never changed. ``workspace_id`` is no foreign key: the chain
outlives whatever it speaks of, and hub-wide entries have none."""

audit_head = Table(
    "audit_head",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("seq", BigInteger, nullable=False),
    Column("hash", String(100), nullable=False),
)
"""One row (id 1): the chain's last seq and hash (0 and the genesis hash while it is empty).
Every append updates it first, so appends of several nodes take its row lock in turn and the
chain never forks; it also tells a removed tail from a short chain. Migrations insert it."""

AUDIT_HEAD_ID = 1
