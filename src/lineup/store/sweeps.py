"""Cross-workspace reads for the hub's background checks: who went silent, what is overdue.

These are the only reads that span workspaces; they feed system-actor events (offline,
``agent_unreachable``, expiry) and never reach a client directly.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from lineup.domain.tasks import ACTIVE_STATUSES, TERMINAL_STATUSES
from lineup.store.records import Agent, Interaction, Task
from lineup.store.schema import agents, interactions, tasks


def agents_with_status(
    conn: Connection, status: str, *, after: str = "", limit: int = 1000
) -> list[Agent]:
    """One page of the agents recorded ``status``, by id from after ``after``: a sweep pages
    through them all, so no agent is beyond its reach however many are online."""
    stmt = (
        select(agents)
        .where(agents.c.status == status, agents.c.id > after)
        .order_by(agents.c.id)
        .limit(limit)
    )
    return [Agent.from_row(r) for r in conn.execute(stmt).all()]


def unreachable_tasks(conn: Connection, offline_since_ms: int) -> list[Task]:
    """Active tasks whose agent is offline and was recorded so at ``offline_since_ms`` or
    earlier (not when it last beat: the grace period counts from the offline record)."""
    stmt = (
        select(tasks)
        .join(
            agents,
            (agents.c.id == tasks.c.target_agent_id)
            & (agents.c.workspace_id == tasks.c.workspace_id),
        )
        .where(
            tasks.c.status.in_(ACTIVE_STATUSES),
            agents.c.status == "offline",
            agents.c.offline_at <= offline_since_ms,
        )
        .order_by(tasks.c.id)
        .limit(1000)
    )
    return [Task.from_row(r) for r in conn.execute(stmt).all()]


def overdue_cancels(conn: Connection, now_ms: int) -> list[Task]:
    """Tasks whose requested cancel went unconfirmed to its deadline (``now_ms`` or earlier),
    still not ended: the hub records them cancelled itself."""
    stmt = (
        select(tasks)
        .where(
            tasks.c.cancel_deadline.is_not(None),
            tasks.c.cancel_deadline <= now_ms,
            tasks.c.status.not_in([s.value for s in TERMINAL_STATUSES]),
        )
        .order_by(tasks.c.cancel_deadline, tasks.c.id)
        .limit(1000)
    )
    return [Task.from_row(r) for r in conn.execute(stmt).all()]


def overdue_interactions(conn: Connection, now_ms: int) -> list[Interaction]:
    stmt = (
        select(interactions)
        .where(
            interactions.c.status == "requested",
            interactions.c.expires_at.is_not(None),
            interactions.c.expires_at <= now_ms,
        )
        .order_by(interactions.c.id)
        .limit(1000)
    )
    return [Interaction.from_row(r) for r in conn.execute(stmt).all()]
