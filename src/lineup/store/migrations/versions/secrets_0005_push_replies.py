"""Push services' replies no longer kept: errors recorded by older hubs quoted up to 200
characters of what a push service answered (a third party's text, shown to people). Only the
status stays.

Revision ID: secrets_0005_push_replies
Revises: 0003_notifications
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "secrets_0005_push_replies"
down_revision: str | Sequence[str] | None = "0003_notifications"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUOTED = " from the push service: "
"""How older hubs introduced the quoted reply: ``503 from the push service: <reply>``."""


def _without_reply(text: str) -> str:
    return text[: text.index(QUOTED)] + " from the push service (its reply is not kept)"


def upgrade() -> None:
    connection = op.get_bind()
    for table, key, column in (
        ("push_subscriptions", "id", "last_error"),
        ("notifications", "id", "last_error"),
        ("notification_attempts", "id", "error"),
    ):
        rows = sa.table(table, sa.column(key), sa.column(column))
        found = connection.execute(
            sa.select(rows.c[key], rows.c[column]).where(rows.c[column].like(f"%{QUOTED}%"))
        ).all()
        for row_id, text in found:
            connection.execute(
                sa.update(rows).where(rows.c[key] == row_id).values({column: _without_reply(text)})
            )


def downgrade() -> None:
    """The replies are gone; nothing to put back."""
