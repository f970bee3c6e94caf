"""Account binding: each person's sealed account on a provider's system, and the OAuth
authorization-code flows under way.

Revision ID: bind_0001_identity
Revises: 0001
Create Date: 2026-12-15
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "bind_0001_identity"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def _ws_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["workspace_id"], ["workspaces.id"], name=op.f(f"fk_{table}_workspace_id_workspaces")
    )


def upgrade() -> None:
    op.create_table(
        "identity_bindings",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("auth_kind", sa.String(24), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=True),
        sa.Column("account", sa.Text(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("bound_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("expired_reason", sa.Text(), nullable=True),
        _ws_fk("identity_bindings"),
        sa.PrimaryKeyConstraint(
            "workspace_id",
            "user_id",
            "provider",
            "instance",
            name=op.f("pk_identity_bindings"),
        ),
    )
    op.create_index(
        op.f("ix_identity_bindings_provider_instance"),
        "identity_bindings",
        ["provider", "instance"],
        unique=False,
    )
    op.create_table(
        "oauth_flows",
        sa.Column("state_hash", sa.String(64), nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("sealed_verifier", sa.Text(), nullable=False),
        sa.Column("redirect", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        _ws_fk("oauth_flows"),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_oauth_flows")),
    )
    op.create_index(op.f("ix_oauth_flows_expires_at"), "oauth_flows", ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_table("oauth_flows")
    op.drop_table("identity_bindings")
