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
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
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
    Column("id", ID, nullable=False, unique=True),
    Column("type", String(128), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("conversation_id", ID, nullable=True),
    Column("task_id", ID, nullable=True),
    Column("correlation_id", ID, nullable=True),
    Column("occurred_at", BigInteger, nullable=False),
    Column("recorded_at", BigInteger, nullable=False),
    Column("payload", json_column_type(), nullable=False),
    PrimaryKeyConstraint("workspace_id", "sequence"),
    Index("ix_events_workspace_id_type", "workspace_id", "type"),
    Index("ix_events_workspace_id_task_id", "workspace_id", "task_id"),
    Index("ix_events_replay_order", "recorded_at", "workspace_id", "sequence"),
)

write_lock = Table(
    "write_lock",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("batches", BigInteger, nullable=False, server_default="0"),
)
"""One row (id 1) that every writer transaction updates first.

A batch may touch several workspaces in arrival order; two hub nodes could then lock two
workspace rows in opposite orders and deadlock. Taking this row first orders every writer
transaction across nodes, with plain SQL on both dialects. Migrations insert the row.
"""

WRITE_LOCK_ID = 1

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
    Column("revoked_at", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
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
    Index("ix_conversations_workspace_id_last_sequence", "workspace_id", "last_sequence"),
)

messages = Table(
    "messages",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, _ws_fk(), nullable=False),
    Column("conversation_id", ID, nullable=False),
    Column("author_kind", String(16), nullable=False),
    Column("author_id", ID, nullable=True),
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
    Index("ix_tasks_workspace_id_status", "workspace_id", "status"),
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
    Column("token_hash", String(255), nullable=False, unique=True),
    Column("user_id", ID, nullable=False),
    Column("csrf_token_hash", String(255), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
    Index("ix_sessions_user_id", "user_id"),
)

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
