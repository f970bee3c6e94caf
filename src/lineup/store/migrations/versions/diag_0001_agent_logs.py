"""Agents' diagnostic lines: the newest few hundred per agent, not event-sourced.

Revision ID: diag_0001_agent_logs
Revises: 0001
Create Date: 2027-01-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type

revision: str = "diag_0001_agent_logs"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_logs",
        sa.Column("agent_id", sa.String(64), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("workspace_id", sa.String(64), nullable=False),
        sa.Column("line_id", sa.String(128), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("level", sa.String(16), nullable=False),
        sa.Column("logger", sa.String(100), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("fields", json_column_type(), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_agent_logs_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("agent_id", "position", name=op.f("pk_agent_logs")),
        sa.UniqueConstraint("agent_id", "line_id", name=op.f("uq_agent_logs_agent_id_line_id")),
    )


def downgrade() -> None:
    op.drop_table("agent_logs")
