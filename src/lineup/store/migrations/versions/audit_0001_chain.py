"""The audit chain and its head.

Revision ID: audit_0001_chain
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type

revision: str = "audit_0001_chain"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GENESIS = "sha256:" + "0" * 64


def upgrade() -> None:
    op.create_table(
        "audit_entries",
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(128), nullable=False),
        sa.Column("workspace_id", sa.String(64), nullable=True),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("data", json_column_type(), nullable=False),
        sa.Column("prev_hash", sa.String(100), nullable=False),
        sa.Column("hash", sa.String(100), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_entries")),
    )
    op.create_index(
        "ix_audit_entries_workspace_id_subject", "audit_entries", ["workspace_id", "subject"]
    )
    audit_head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(100), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_head")),
    )
    op.bulk_insert(audit_head, [{"id": 1, "seq": 0, "hash": GENESIS}])


def downgrade() -> None:
    op.drop_table("audit_head")
    op.drop_index("ix_audit_entries_workspace_id_subject", table_name="audit_entries")
    op.drop_table("audit_entries")
