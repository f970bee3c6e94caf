"""A requested cancel's deadline, after which the hub records the task cancelled itself, and
the cause the hub records when it ends a task itself.

Revision ID: cancel_0001_deadlines
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "cancel_0001_deadlines"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("cancel_deadline", sa.BigInteger(), nullable=True))
    op.create_index("ix_tasks_cancel_deadline", "tasks", ["cancel_deadline"])
    op.add_column("tasks", sa.Column("end_cause", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("tasks", "end_cause")
    op.drop_index("ix_tasks_cancel_deadline", table_name="tasks")
    op.drop_column("tasks", "cancel_deadline")
