"""Event ids are unique per sender within a workspace, not across the hub.

Two agents (or two tenants) that number their events alike both get them recorded; the
fingerprint lets a reused id with other content be refused rather than taken for a resend.
Ids get the 128 characters the protocol allows them, also where a notification names one.

Revision ID: protocol_0005_sender_event_ids
Revises: 0003_notifications
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "protocol_0005_sender_event_ids"
down_revision: str | Sequence[str] | None = "0003_notifications"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("uq_events_id", type_="unique")
        batch.alter_column(
            "id", existing_type=sa.String(64), type_=sa.String(128), existing_nullable=False
        )
        batch.add_column(sa.Column("fingerprint", sa.String(32), nullable=True))
        batch.create_unique_constraint(
            "uq_events_workspace_id_actor_id", ["workspace_id", "actor", "id"]
        )
    with op.batch_alter_table("notifications") as batch:
        batch.alter_column(
            "event_id", existing_type=sa.String(64), type_=sa.String(128), existing_nullable=True
        )


def downgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.alter_column(
            "event_id", existing_type=sa.String(128), type_=sa.String(64), existing_nullable=True
        )
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("uq_events_workspace_id_actor_id", type_="unique")
        batch.drop_column("fingerprint")
        batch.alter_column(
            "id", existing_type=sa.String(128), type_=sa.String(64), existing_nullable=False
        )
        batch.create_unique_constraint("uq_events_id", ["id"])
