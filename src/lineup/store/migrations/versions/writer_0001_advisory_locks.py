"""Writers lock what they write (advisory locks per workspace), not one row for everyone.

Revision ID: writer_0001_advisory_locks
Revises: 0001
Create Date: 2026-12-03

Every writer transaction used to update the one ``write_lock`` row first; it now takes
PostgreSQL advisory locks on the workspaces its jobs write (``lineup.store.write_locks``).
The row goes: a node of the earlier version still running against this schema then finds no
row and refuses to write ("not migrated") rather than writing beside the new nodes under a
lock they no longer take. Upgrade every node together.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "writer_0001_advisory_locks"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("write_lock")


def downgrade() -> None:
    write_lock = op.create_table(
        "write_lock",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("batches", sa.BigInteger(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_write_lock")),
    )
    op.bulk_insert(write_lock, [{"id": 1, "batches": 0}])
