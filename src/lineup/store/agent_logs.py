"""The ``agent_logs`` table: each agent's newest diagnostic lines, a ring kept in rows.

Lines are numbered per agent as they arrive (``position`` 1, 2, 3, … with no gaps), so
keeping the newest ``keep`` is one delete below ``newest - keep``. A line whose ``line_id``
the agent already sent is skipped: a batch resent after a lost ack adds nothing. Plain
synchronous functions of a ``Connection``: :func:`keep_lines` inside a writer job, the read
in a reader. Not event-sourced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from lineup.store.schema import agent_logs


@dataclass(frozen=True, slots=True)
class NewLine:
    line_id: str
    at: int
    level: str
    logger: str
    message: str
    fields: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class StoredLine:
    position: int
    line_id: str
    at: int
    received_at: int
    level: str
    logger: str
    message: str
    fields: dict[str, Any] | None


def keep_lines(
    conn: Connection,
    workspace_id: str,
    agent_id: str,
    lines: Sequence[NewLine],
    *,
    received_at: int,
    keep: int,
) -> int:
    """Append the lines not seen before, drop all but the newest ``keep``; how many were new."""
    seen = set(
        conn.execute(
            select(agent_logs.c.line_id).where(
                agent_logs.c.agent_id == agent_id,
                agent_logs.c.line_id.in_([line.line_id for line in lines]),
            )
        ).scalars()
    )
    fresh: list[NewLine] = []
    for line in lines:
        if line.line_id not in seen:
            seen.add(line.line_id)
            fresh.append(line)
    if not fresh:
        return 0
    newest = conn.execute(
        select(func.max(agent_logs.c.position)).where(agent_logs.c.agent_id == agent_id)
    ).scalar()
    first = int(newest or 0) + 1
    conn.execute(
        insert(agent_logs),
        [
            {
                "agent_id": agent_id,
                "position": first + index,
                "workspace_id": workspace_id,
                "line_id": line.line_id,
                "at": line.at,
                "received_at": received_at,
                "level": line.level,
                "logger": line.logger,
                "message": line.message,
                "fields": line.fields,
            }
            for index, line in enumerate(fresh)
        ],
    )
    last = first + len(fresh) - 1
    conn.execute(
        delete(agent_logs).where(
            agent_logs.c.agent_id == agent_id, agent_logs.c.position <= last - keep
        )
    )
    return len(fresh)


def recent_lines(
    conn: Connection, workspace_id: str, agent_id: str, limit: int
) -> list[StoredLine]:
    """The agent's newest ``limit`` lines, newest first (none for another workspace's)."""
    rows = conn.execute(
        select(
            agent_logs.c.position,
            agent_logs.c.line_id,
            agent_logs.c.at,
            agent_logs.c.received_at,
            agent_logs.c.level,
            agent_logs.c.logger,
            agent_logs.c.message,
            agent_logs.c.fields,
        )
        .where(agent_logs.c.agent_id == agent_id, agent_logs.c.workspace_id == workspace_id)
        .order_by(agent_logs.c.position.desc())
        .limit(limit)
    )
    return [StoredLine(*row) for row in rows]
