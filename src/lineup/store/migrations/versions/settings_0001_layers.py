"""Layered settings' values, and people's developer tokens.

Revision ID: settings_0001_layers
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "settings_0001_layers"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "settings_values",
        sa.Column("scope_kind", sa.String(20), nullable=False),
        sa.Column("scope_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("key", sa.String(100), nullable=False),
        sa.Column("value", json(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_by", sa.String(200), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_settings_values_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint(
            "workspace_id", "scope_kind", "scope_id", "key", name=op.f("pk_settings_values")
        ),
    )
    op.create_table(
        "developer_tokens",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(255), nullable=False),
        sa.Column("scopes", json(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("last_used_at", sa.BigInteger(), nullable=True),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_developer_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_developer_tokens_token_hash")),
    )
    op.create_index("ix_developer_tokens_user_id", "developer_tokens", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_developer_tokens_user_id", table_name="developer_tokens")
    op.drop_table("developer_tokens")
    op.drop_table("settings_values")
