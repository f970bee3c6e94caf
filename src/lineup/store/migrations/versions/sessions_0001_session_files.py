"""Imported session files: their headers and every entry of every branch; messages keep
their author's name as recorded.

Revision ID: sessions_0001_session_files
Revises: 0001
Create Date: 2027-02-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "sessions_0001_session_files"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def upgrade() -> None:
    op.add_column("messages", sa.Column("author_name", sa.Text(), nullable=True))
    op.create_table(
        "imported_sessions",
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("session_id", sa.String(200), nullable=False),
        sa.Column("header", json(), nullable=False),
        sa.Column("format_version", sa.Integer(), nullable=False),
        sa.Column("source_format", sa.String(16), nullable=False),
        sa.Column("source_version", sa.Integer(), nullable=False),
        sa.Column("entry_count", sa.Integer(), nullable=False),
        sa.Column("leaf_id", sa.String(200), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_imported_sessions_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("conversation_id", name=op.f("pk_imported_sessions")),
    )
    op.create_table(
        "session_entries",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("entry_id", sa.String(200), nullable=False),
        sa.Column("parent_id", sa.String(200), nullable=True),
        sa.Column("format_version", sa.Integer(), nullable=False),
        sa.Column("entry", json(), nullable=False),
        sa.Column("shown", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_session_entries_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint(
            "workspace_id", "conversation_id", "position", name=op.f("pk_session_entries")
        ),
    )


def downgrade() -> None:
    op.drop_table("session_entries")
    op.drop_table("imported_sessions")
    op.drop_column("messages", "author_name")
