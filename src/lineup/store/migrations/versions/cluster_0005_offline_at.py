"""Agents: when the hub recorded each offline, which the grace period counts from.

Revision ID: cluster_0005_offline_at
Revises: 0004_cluster
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "cluster_0005_offline_at"
down_revision: str | Sequence[str] | None = "0004_cluster"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("offline_at", sa.BigInteger(), nullable=True))
    # agents offline already: their last change is the best record of when they went
    op.execute("UPDATE agents SET offline_at = updated_at WHERE status = 'offline'")


def downgrade() -> None:
    op.drop_column("agents", "offline_at")
