"""The initial schema: workspaces, the event log, projections, secrets and sessions.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def _pk(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*columns, name=op.f(f"pk_{table}"))


def _uq(table: str, column: str) -> sa.UniqueConstraint:
    return sa.UniqueConstraint(column, name=op.f(f"uq_{table}_{column}"))


def _ws_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["workspace_id"], ["workspaces.id"], name=op.f(f"fk_{table}_workspace_id_workspaces")
    )


def _ms(name: str, nullable: bool = False) -> sa.Column[int]:
    return sa.Column(name, sa.BigInteger(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("id", ID, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("last_recorded_at", sa.BigInteger(), server_default="0", nullable=False),
        _ms("created_at"),
        _pk("workspaces", "id"),
    )
    write_lock = op.create_table(
        "write_lock",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("batches", sa.BigInteger(), server_default="0", nullable=False),
        _pk("write_lock", "id"),
    )
    op.bulk_insert(write_lock, [{"id": 1, "batches": 0}])
    op.create_table(
        "events",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("id", ID, nullable=False),
        sa.Column("type", sa.String(128), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("correlation_id", ID, nullable=True),
        _ms("occurred_at"),
        _ms("recorded_at"),
        sa.Column("payload", json(), nullable=False),
        _ws_fk("events"),
        _pk("events", "workspace_id", "sequence"),
        _uq("events", "id"),
    )
    op.create_index("ix_events_workspace_id_type", "events", ["workspace_id", "type"])
    op.create_index("ix_events_workspace_id_task_id", "events", ["workspace_id", "task_id"])
    op.create_index("ix_events_replay_order", "events", ["recorded_at", "workspace_id", "sequence"])

    op.create_table(
        "users",
        sa.Column("id", ID, nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("display_name", sa.Text(), nullable=False),
        _ms("created_at"),
        _pk("users", "id"),
        _uq("users", "email"),
    )
    op.create_table(
        "memberships",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        _ms("created_at"),
        _ws_fk("memberships"),
        _pk("memberships", "workspace_id", "user_id"),
    )
    op.create_index("ix_memberships_user_id", "memberships", ["user_id"])

    op.create_table(
        "agents",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("runtime", sa.Text(), nullable=True),
        sa.Column("agent_version", sa.Text(), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("capabilities", json(), nullable=False),
        sa.Column("tools", json(), nullable=False),
        _ms("last_heartbeat_at", nullable=True),
        _ms("connected_at", nullable=True),
        _ms("revoked_at", nullable=True),
        _ms("created_at"),
        _ms("updated_at"),
        _ws_fk("agents"),
        _pk("agents", "id"),
    )
    op.create_index("ix_agents_workspace_id", "agents", ["workspace_id"])

    op.create_table(
        "conversations",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("agent_ids", json(), nullable=False),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        _ws_fk("conversations"),
        _pk("conversations", "id"),
    )
    op.create_index(
        "ix_conversations_workspace_id_last_sequence",
        "conversations",
        ["workspace_id", "last_sequence"],
    )

    op.create_table(
        "messages",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("author_kind", sa.String(16), nullable=False),
        sa.Column("author_id", ID, nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("blocks", json(), nullable=True),
        sa.Column("attachments", json(), nullable=True),
        sa.Column("target_agent_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        _ms("created_at"),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        _ws_fk("messages"),
        _pk("messages", "id"),
    )
    op.create_index(
        "ix_messages_conversation_id_sequence", "messages", ["conversation_id", "sequence"]
    )

    op.create_table(
        "tasks",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("parent_task_id", ID, nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("target_agent_id", ID, nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("progress", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("error", json(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("cancel_reason", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        _ws_fk("tasks"),
        _pk("tasks", "id"),
    )
    op.create_index("ix_tasks_workspace_id_status", "tasks", ["workspace_id", "status"])
    op.create_index("ix_tasks_workspace_id_created_at", "tasks", ["workspace_id", "created_at"])
    op.create_index("ix_tasks_parent_task_id", "tasks", ["parent_task_id"])

    op.create_table(
        "interactions",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("agent_id", ID, nullable=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("request", json(), nullable=False),
        sa.Column("response", json(), nullable=True),
        sa.Column("responded_by", sa.String(200), nullable=True),
        sa.Column("responded_by_name", sa.Text(), nullable=True),
        _ms("responded_at", nullable=True),
        _ms("expires_at", nullable=True),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        _ws_fk("interactions"),
        _pk("interactions", "id"),
    )
    op.create_index(
        "ix_interactions_workspace_id_status", "interactions", ["workspace_id", "status"]
    )
    op.create_index("ix_interactions_task_id_status", "interactions", ["task_id", "status"])

    op.create_table(
        "artifacts",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("mime_type", sa.String(255), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        _ms("created_at"),
        _ws_fk("artifacts"),
        _pk("artifacts", "id"),
    )
    op.create_index("ix_artifacts_task_id", "artifacts", ["task_id"])
    op.create_index("ix_artifacts_conversation_id", "artifacts", ["conversation_id"])

    op.create_table(
        "credentials",
        sa.Column("user_id", ID, nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        _pk("credentials", "user_id"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", ID, nullable=False),
        sa.Column("token_hash", sa.String(255), nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("csrf_token_hash", sa.String(255), nullable=False),
        _ms("created_at"),
        _ms("expires_at"),
        _ms("revoked_at", nullable=True),
        _pk("sessions", "id"),
        _uq("sessions", "token_hash"),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"])

    op.create_table(
        "pairing_codes",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("code_hash", sa.String(255), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("agent_name", sa.Text(), nullable=True),
        _ms("created_at"),
        _ms("expires_at"),
        _ms("used_at", nullable=True),
        sa.Column("failed_attempts", sa.Integer(), server_default="0", nullable=False),
        _ws_fk("pairing_codes"),
        _pk("pairing_codes", "id"),
        _uq("pairing_codes", "code_hash"),
    )
    op.create_index("ix_pairing_codes_workspace_id", "pairing_codes", ["workspace_id"])

    op.create_table(
        "agent_credentials",
        sa.Column("id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("secret_hash", sa.String(255), nullable=False),
        _ms("created_at"),
        _ms("revoked_at", nullable=True),
        _ws_fk("agent_credentials"),
        _pk("agent_credentials", "id"),
        _uq("agent_credentials", "secret_hash"),
    )
    op.create_index("ix_agent_credentials_agent_id", "agent_credentials", ["agent_id"])


def downgrade() -> None:
    for table in (
        "agent_credentials",
        "pairing_codes",
        "sessions",
        "credentials",
        "artifacts",
        "interactions",
        "tasks",
        "messages",
        "conversations",
        "agents",
        "memberships",
        "users",
        "events",
        "write_lock",
        "workspaces",
    ):
        op.drop_table(table)
