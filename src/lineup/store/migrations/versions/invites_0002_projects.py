"""Invitations may name a project and the role the invited person gets there.

Revision ID: invites_0002_projects
Revises: auth_0001_invitations
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "invites_0002_projects"
down_revision: str | Sequence[str] | None = "auth_0001_invitations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("invitations", sa.Column("project_id", sa.String(64), nullable=True))
    op.add_column("invitations", sa.Column("project_role", sa.String(20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column("project_role")
        batch.drop_column("project_id")
