"""Agents: the sequence of the event that paired each, where its downlink can begin.

Revision ID: replay_0001_paired_sequence
Revises: 0001
Create Date: 2026-12-05

An agent that connects without a cursor is replayed its downlink from here rather than from
the workspace's first event: nothing recorded before an agent was paired can be addressed to
it. Agents paired before this revision keep no sequence (NULL) and are replayed from the
start, as before: their pairing may have been compacted away, and a guess from what is left
could start after a kept event that is still theirs.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "replay_0001_paired_sequence"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("paired_sequence", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("agents", "paired_sequence")
