"""Tools: registered app tools, agents' tool calls, canvas instances and operations.

Revision ID: 0002_tools
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "0002_tools"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def _pk(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*columns, name=op.f(f"pk_{table}"))


def _ws_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["workspace_id"], ["workspaces.id"], name=op.f(f"fk_{table}_workspace_id_workspaces")
    )


def _ms(name: str, nullable: bool = False) -> sa.Column[int]:
    return sa.Column(name, sa.BigInteger(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "tool_devices",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("device_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=True),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("tools", json(), nullable=False),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        _ws_fk("tool_devices"),
        _pk("tool_devices", "workspace_id", "device_id"),
    )
    op.create_table(
        "tool_calls",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("call_id", sa.String(128), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("action", sa.String(64), nullable=True),
        sa.Column("arguments", json(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("instance_id", ID, nullable=True),
        sa.Column("result", json(), nullable=True),
        sa.Column("error", json(), nullable=True),
        sa.Column("answered_by", sa.String(200), nullable=True),
        sa.Column("answered_by_name", sa.Text(), nullable=True),
        _ms("answered_at", nullable=True),
        sa.Column("cancel_reason", sa.Text(), nullable=True),
        _ms("timeout_ms", nullable=True),
        _ms("expires_at", nullable=True),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        _ws_fk("tool_calls"),
        _pk("tool_calls", "id"),
    )
    op.create_index(
        "ix_tool_calls_agent_call",
        "tool_calls",
        ["workspace_id", "agent_id", "call_id"],
        unique=True,
    )
    op.create_index("ix_tool_calls_workspace_id_status", "tool_calls", ["workspace_id", "status"])
    op.create_index("ix_tool_calls_instance_id_status", "tool_calls", ["instance_id", "status"])
    op.create_index("ix_tool_calls_status_expires_at", "tool_calls", ["status", "expires_at"])
    op.create_table(
        "canvas_instances",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("tool_call_id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        _ms("created_at"),
        _ms("updated_at"),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        _ws_fk("canvas_instances"),
        _pk("canvas_instances", "id"),
    )
    op.create_index(
        "ix_canvas_instances_workspace_id_conversation_id",
        "canvas_instances",
        ["workspace_id", "conversation_id"],
    )
    op.create_table(
        "canvas_ops",
        sa.Column("tool_call_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("instance_id", ID, nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("color", sa.String(64), nullable=True),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("undone", sa.Boolean(), nullable=False),
        _ms("created_at"),
        _ws_fk("canvas_ops"),
        _pk("canvas_ops", "tool_call_id"),
    )
    op.create_index("ix_canvas_ops_instance_id_sequence", "canvas_ops", ["instance_id", "sequence"])


def downgrade() -> None:
    for table in ("canvas_ops", "canvas_instances", "tool_calls", "tool_devices"):
        op.drop_table(table)
