"""Which events are about which subject (task, message, card…), filled from the log so far.

Revision ID: rawevents_0001_event_subjects
Revises: 0001
Create Date: 2027-01-20
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from lineup.protocol.facts import FACTS
from lineup.protocol.subjects import subjects_of
from lineup.store.jsontype import json_column_type as json

revision: str = "rawevents_0001_event_subjects"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)
PAGE = 1000

_events = sa.table(
    "events",
    sa.column("workspace_id", ID),
    sa.column("sequence", sa.BigInteger()),
    sa.column("type", sa.String(128)),
    sa.column("conversation_id", ID),
    sa.column("task_id", ID),
    sa.column("payload", json()),
)


def upgrade() -> None:
    subjects = op.create_table(
        "event_subjects",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("subject_kind", sa.String(32), nullable=False),
        sa.Column("subject_id", sa.String(128), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_event_subjects_workspace_id_workspaces"),
        ),
        sa.PrimaryKeyConstraint(
            "workspace_id", "subject_kind", "subject_id", "sequence", name=op.f("pk_event_subjects")
        ),
    )
    op.create_index(
        "ix_event_subjects_workspace_id_sequence",
        "event_subjects",
        ["workspace_id", "sequence"],
    )
    assert subjects is not None
    _backfill(op.get_bind(), subjects)


def _backfill(conn: sa.Connection, subjects: sa.Table) -> None:
    """Index every stored event, a page at a time; a payload no model reads is left out, as
    the projections leave it."""
    cursor: tuple[str, int] | None = None
    order = (_events.c.workspace_id, _events.c.sequence)
    while True:
        stmt = sa.select(_events).order_by(*order).limit(PAGE)
        if cursor is not None:
            stmt = stmt.where(sa.tuple_(*order) > sa.tuple_(*(sa.literal(v) for v in cursor)))
        page = conn.execute(stmt).all()
        rows: list[dict[str, Any]] = []
        for event in page:
            rows.extend(_rows_of(event))
        if rows:
            conn.execute(sa.insert(subjects), rows)
        if len(page) < PAGE:
            return
        cursor = (page[-1].workspace_id, page[-1].sequence)


def _rows_of(event: Any) -> list[dict[str, Any]]:
    model = FACTS.get(event.type)
    if model is None or not isinstance(event.payload, dict):
        return []
    try:
        fact = model.model_validate(event.payload)
    except ValueError:
        return []
    named = subjects_of(fact, task_id=event.task_id, conversation_id=event.conversation_id)
    return [
        {
            "workspace_id": event.workspace_id,
            "subject_kind": kind,
            "subject_id": ident,
            "sequence": event.sequence,
        }
        for kind, ident in sorted(named)
    ]


def downgrade() -> None:
    op.drop_index("ix_event_subjects_workspace_id_sequence", table_name="event_subjects")
    op.drop_table("event_subjects")
