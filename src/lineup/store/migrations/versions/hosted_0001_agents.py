"""Hosted agents: the definitions of agents the hub runs itself as engine subprocesses.

Revision ID: hosted_0001_agents
Revises: 0001
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "hosted_0001_agents"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hosted_agents",
        sa.Column("agent_id", sa.String(64), primary_key=True),
        sa.Column("workspace_id", sa.String(64), sa.ForeignKey("workspaces.id"), nullable=False),
        sa.Column("engine", sa.String(32), nullable=False),
        sa.Column("cwd", sa.Text(), nullable=False),
        sa.Column("api", sa.String(32), nullable=False),
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("sealed_credential", sa.Text(), nullable=False),
        sa.Column("sealed_api_key", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(100), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_hosted_agents_workspace_id", "hosted_agents", ["workspace_id"])


def downgrade() -> None:
    op.drop_index("ix_hosted_agents_workspace_id", table_name="hosted_agents")
    op.drop_table("hosted_agents")
