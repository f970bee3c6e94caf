"""The agent-link registry: which node instance holds each connected agent's socket.

Written inside the same write transactions as the events they go with, so the registry and
the log never disagree: ``link`` with ``agent.connected``; ``unlink`` before recording an
agent offline — and only the node named in the row may do that, so a node that lost an agent
to a newer connection elsewhere does not mark it offline. An agent recorded online whose
row names a node that stopped renewing its ``node:<instance>`` lease (killed, cut off) is
stale; the node holding the ``monitor`` lease records it offline.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from lineup.hub.leases import node_lease
from lineup.store.schema import agent_links, leases


@dataclass(frozen=True)
class Link:
    agent_id: str
    node: str
    connected_at: int


def link(conn: Connection, agent_id: str, workspace_id: str, node: str, now_ms: int) -> None:
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


def links_of(conn: Connection, agent_ids: list[str]) -> dict[str, Link]:
    found: dict[str, Link] = {}
    for start in range(0, len(agent_ids), 500):
        chunk = agent_ids[start : start + 500]
        stmt = select(agent_links).where(agent_links.c.agent_id.in_(chunk))
        for row in conn.execute(stmt):
            found[row.agent_id] = Link(row.agent_id, row.node, row.connected_at)
    return found


def node_expiries(conn: Connection, nodes: set[str]) -> dict[str, int]:
    """``expires_at`` of each node's liveness lease (absent: released or never taken)."""
    names = {node_lease(n): n for n in nodes}
    if not names:
        return {}
    stmt = select(leases.c.name, leases.c.expires_at).where(leases.c.name.in_(list(names)))
    return {names[row.name]: row.expires_at for row in conn.execute(stmt)}


def alive_at(connected_at: int, node_expiry: int | None, ttl_ms: int) -> int:
    """When the node holding a link was last known alive: its lease's last renewal
    (``expires_at - ttl``), or the link's own start if later."""
    return max(connected_at, node_expiry - ttl_ms if node_expiry is not None else 0)


def unlink_if_stale(
    conn: Connection, agent_id: str, me: str, now_ms: int, offline_after_ms: int, ttl_ms: int
) -> tuple[bool, int | None]:
    """Remove the agent's link if the node holding it has not been heard of for
    ``offline_after_ms`` (its lease's last renewal is ``expires_at - ttl``). Returns whether
    the agent is stale, and when its node was last known alive (None: no link row)."""
    row = conn.execute(select(agent_links).where(agent_links.c.agent_id == agent_id)).first()
    if row is None:
        return True, None
    if row.node == me:
        return False, None
    last_alive = alive_at(row.connected_at, node_expiries(conn, {row.node}).get(row.node), ttl_ms)
    if now_ms - last_alive < offline_after_ms:
        return False, None
    conn.execute(delete(agent_links).where(agent_links.c.agent_id == agent_id))
    return True, last_alive
