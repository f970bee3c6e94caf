"""Notifications: VAPID keys, push subscriptions, preferences, the outbox, attempts
and the log cursor.

Revision ID: 0003_notifications
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "0003_notifications"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)


def _ms(name: str, nullable: bool = False) -> sa.Column[int]:
    return sa.Column(name, sa.BigInteger(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "vapid_keys",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("private_key", sa.Text(), nullable=False),
        _ms("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vapid_keys")),
    )
    op.create_table(
        "push_subscriptions",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("endpoint", sa.Text(), nullable=False),
        sa.Column("endpoint_hash", sa.String(64), nullable=False),
        sa.Column("p256dh", sa.String(255), nullable=False),
        sa.Column("auth", sa.String(255), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        _ms("created_at"),
        _ms("last_attempt_at", True),
        _ms("last_delivered_at", True),
        _ms("failing_since", True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_push_subscriptions")),
        sa.UniqueConstraint("endpoint_hash", name=op.f("uq_push_subscriptions_endpoint_hash")),
    )
    op.create_index("ix_push_subscriptions_user_id", "push_subscriptions", ["user_id"])
    op.create_table(
        "notification_preferences",
        sa.Column("user_id", ID, nullable=False),
        sa.Column("events", json(), nullable=False),
        sa.Column("channels", json(), nullable=False),
        sa.Column("quiet_start", sa.String(5), nullable=True),
        sa.Column("quiet_end", sa.String(5), nullable=True),
        sa.Column("time_zone", sa.String(64), nullable=False),
        _ms("email_last_attempt_at", True),
        _ms("email_last_delivered_at", True),
        _ms("email_failing_since", True),
        sa.Column("email_last_error", sa.Text(), nullable=True),
        _ms("updated_at"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_notification_preferences")),
    )
    op.create_table(
        "notifications",
        sa.Column("id", ID, nullable=False),
        sa.Column("dedupe_key", sa.String(64), nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("target", ID, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject_type", sa.String(32), nullable=False),
        sa.Column("subject_id", sa.String(200), nullable=False),
        sa.Column("event_id", ID, nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("link", sa.Text(), nullable=False),
        sa.Column("tag", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        _ms("next_attempt_at"),
        sa.Column("claimed_by", sa.String(200), nullable=True),
        _ms("claimed_until", True),
        _ms("created_at"),
        _ms("updated_at"),
        _ms("delivered_at", True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_notifications_dedupe_key")),
    )
    op.create_index(
        "ix_notifications_status_next_attempt_at", "notifications", ["status", "next_attempt_at"]
    )
    op.create_index(
        "ix_notifications_user_id_created_at", "notifications", ["user_id", "created_at"]
    )
    op.create_table(
        "notification_attempts",
        sa.Column("id", ID, nullable=False),
        sa.Column("notification_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("target", ID, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        _ms("at"),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("node", sa.String(200), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_attempts")),
    )
    op.create_index(
        "ix_notification_attempts_notification_id", "notification_attempts", ["notification_id"]
    )
    op.create_index(
        "ix_notification_attempts_user_id_at", "notification_attempts", ["user_id", "at"]
    )
    cursors = op.create_table(
        "notification_cursors",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("last_sequence", sa.BigInteger(), nullable=False),
        _ms("updated_at"),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_notification_cursors_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", name=op.f("pk_notification_cursors")),
    )
    # Existing workspaces start at their latest event: turning notifications on must not
    # notify about everything that already happened.
    workspaces = sa.table(
        "workspaces",
        sa.column("id", ID),
        sa.column("last_sequence", sa.BigInteger()),
        sa.column("last_recorded_at", sa.BigInteger()),
    )
    op.execute(
        sa.insert(cursors).from_select(
            ["workspace_id", "last_sequence", "updated_at"],
            sa.select(workspaces.c.id, workspaces.c.last_sequence, workspaces.c.last_recorded_at),
        )
    )


def downgrade() -> None:
    op.drop_table("notification_cursors")
    op.drop_index("ix_notification_attempts_user_id_at", table_name="notification_attempts")
    op.drop_index("ix_notification_attempts_notification_id", table_name="notification_attempts")
    op.drop_table("notification_attempts")
    op.drop_index("ix_notifications_user_id_created_at", table_name="notifications")
    op.drop_index("ix_notifications_status_next_attempt_at", table_name="notifications")
    op.drop_table("notifications")
    op.drop_table("notification_preferences")
    op.drop_index("ix_push_subscriptions_user_id", table_name="push_subscriptions")
    op.drop_table("push_subscriptions")
    op.drop_table("vapid_keys")
