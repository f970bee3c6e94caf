"""Cluster coordination: leases and the agent-link registry.

Revision ID: 0004_cluster
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_cluster"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("acquired_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "agent_links",
        sa.Column("agent_id", sa.String(64), nullable=False),
        sa.Column("workspace_id", sa.String(64), nullable=False),
        sa.Column("node", sa.String(200), nullable=False),
        sa.Column("connected_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("agent_id", name=op.f("pk_agent_links")),
    )
    op.create_index("ix_agent_links_node", "agent_links", ["node"])


def downgrade() -> None:
    op.drop_index("ix_agent_links_node", table_name="agent_links")
    op.drop_table("agent_links")
    op.drop_table("leases")
