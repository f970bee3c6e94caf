"""Agents: confirmed by a person after pairing, and their settings (schema and values).

Agents paired before this revision were never asked for confirmation: they count as
confirmed when they paired.

Revision ID: pairing_0001_confirmation
Revises: 0001
Create Date: 2027-01-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "pairing_0001_confirmation"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("confirmed_at", sa.BigInteger(), nullable=True))
    op.add_column("agents", sa.Column("settings_schema", json(), nullable=True))
    op.add_column("agents", sa.Column("settings", json(), nullable=True))
    op.execute("UPDATE agents SET confirmed_at = created_at")


def downgrade() -> None:
    for column in ("settings", "settings_schema", "confirmed_at"):
        op.drop_column("agents", column)
