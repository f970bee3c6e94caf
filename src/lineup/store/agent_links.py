"""The ``agent_links`` table: which hub node instance holds each connected agent's socket.

Rows are written inside the same write transactions as the events they go with, so the
registry and the log never disagree. When a link's node counts as dead is the hub's rule
(:mod:`lineup.hub.cluster.links`); here is only how links are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from lineup.store.schema import agent_links

CHUNK = 500
"""Agent ids per ``IN (…)`` list: well below any driver's limit on bound parameters."""


@dataclass(frozen=True)
class Link:
    agent_id: str
    node: str
    connected_at: int


def link(conn: Connection, agent_id: str, workspace_id: str, node: str, now_ms: int) -> None:
    """``node`` holds the agent now, whichever node held it before."""
    conn.execute(delete(agent_links).where(agent_links.c.agent_id == agent_id))
    conn.execute(
        insert(agent_links).values(
            agent_id=agent_id, workspace_id=workspace_id, node=node, connected_at=now_ms
        )
    )


def unlink(conn: Connection, agent_id: str, node: str) -> bool:
    """Remove ``node``'s link of the agent; False when another node holds it now."""
    result = conn.execute(
        delete(agent_links).where(agent_links.c.agent_id == agent_id, agent_links.c.node == node)
    )
    if result.rowcount == 1:
        return True
    # No row at all (linked before the registry existed): nobody else claims it either.
    row = conn.execute(select(agent_links.c.node).where(agent_links.c.agent_id == agent_id))
    return row.first() is None


def remove(conn: Connection, agent_id: str) -> None:
    """Remove the agent's link, whichever node holds it."""
    conn.execute(delete(agent_links).where(agent_links.c.agent_id == agent_id))


def link_of(conn: Connection, agent_id: str) -> Link | None:
    row = conn.execute(select(agent_links).where(agent_links.c.agent_id == agent_id)).first()
    return None if row is None else Link(row.agent_id, row.node, row.connected_at)


def links_of(conn: Connection, agent_ids: list[str]) -> dict[str, Link]:
    found: dict[str, Link] = {}
    for start in range(0, len(agent_ids), CHUNK):
        chunk = agent_ids[start : start + CHUNK]
        stmt = select(agent_links).where(agent_links.c.agent_id.in_(chunk))
        for row in conn.execute(stmt):
            found[row.agent_id] = Link(row.agent_id, row.node, row.connected_at)
    return found
