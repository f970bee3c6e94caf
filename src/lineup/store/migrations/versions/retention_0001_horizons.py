"""The log's retention: each workspace's horizon, and each agent's last reported cursor.

Revision ID: retention_0001_horizons
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "retention_0001_horizons"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "log_horizons",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("horizon", sa.BigInteger(), nullable=False),
        sa.Column("compacted_events", sa.BigInteger(), nullable=False),
        sa.Column("compacted_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_log_horizons_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", name=op.f("pk_log_horizons")),
    )
    op.create_table(
        "agent_cursors",
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_agent_cursors_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("agent_id", name=op.f("pk_agent_cursors")),
    )


def downgrade() -> None:
    op.drop_table("agent_cursors")
    op.drop_table("log_horizons")
