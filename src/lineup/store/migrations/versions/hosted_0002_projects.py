"""Hosted agents may belong to a project: their conversations start in it.

Revision ID: hosted_0002_projects
Revises: hosted_0001_agents
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "hosted_0002_projects"
down_revision: str | Sequence[str] | None = "hosted_0001_agents"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("hosted_agents", sa.Column("project_id", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("hosted_agents") as batch:
        batch.drop_column("project_id")
