"""Provider packages: each workspace's installs and their lifecycle changes, the verified
packages themselves, and health probes.

Revision ID: prov_0001_packages
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "prov_0001_packages"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "provider_installs",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("provider_id", sa.String(64), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("previous_version", sa.String(64), nullable=True),
        sa.Column("previous_digest", sa.String(80), nullable=True),
        sa.Column("installed_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_by", sa.String(200), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_provider_installs_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "provider_id", name=op.f("pk_provider_installs")),
    )
    op.create_table(
        "provider_changes",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("provider_id", sa.String(64), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("from_version", sa.String(64), nullable=True),
        sa.Column("from_digest", sa.String(80), nullable=True),
        sa.Column("to_version", sa.String(64), nullable=True),
        sa.Column("to_digest", sa.String(80), nullable=True),
        sa.Column("surface", json(), nullable=False),
        sa.Column("contract_passed", sa.Boolean(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("requested_by", sa.String(200), nullable=False),
        sa.Column("requested_at", sa.BigInteger(), nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("decided_at", sa.BigInteger(), nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_provider_changes_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_changes")),
    )
    op.create_index(
        "ix_provider_changes_workspace_id_status", "provider_changes", ["workspace_id", "status"]
    )
    op.create_table(
        "provider_packages",
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("provider_id", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("manifest", json(), nullable=False),
        sa.Column("archive", sa.LargeBinary(), nullable=False),
        sa.Column("signer", sa.String(100), nullable=False),
        sa.Column("development", sa.Boolean(), nullable=False),
        sa.Column("contract", json(), nullable=True),
        sa.Column("added_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_provider_packages")),
    )
    op.create_table(
        "provider_health",
        sa.Column("id", ID, nullable=False),
        sa.Column("provider_id", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("checked_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_health")),
    )
    op.create_index(
        "ix_provider_health_digest_checked_at", "provider_health", ["digest", "checked_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_provider_health_digest_checked_at", table_name="provider_health")
    op.drop_table("provider_health")
    op.drop_table("provider_packages")
    op.drop_index("ix_provider_changes_workspace_id_status", table_name="provider_changes")
    op.drop_table("provider_changes")
    op.drop_table("provider_installs")
