"""The agent-link registry: which node instance holds each connected agent's socket.

Written inside the same write transactions as the events they go with, so the registry and
the log never disagree: ``link`` with ``agent.connected``; ``unlink`` before recording an
agent offline — and only the node named in the row may do that, so a node that lost an agent
to a newer connection elsewhere does not mark it offline.

The node that holds an agent's socket is the one that decides it went silent: it sees the
heartbeats, in memory. Another node (the one holding the ``monitor`` lease) records an agent
offline only when the node named in its row is dead — its ``node:<instance>`` lease expired,
``ttl`` without a renewal — and has been for the heartbeat window since it was last alive. A
live node renews that lease from a thread of its own (:mod:`lineup.hub.leases`), so load on
it does not make it look dead.
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


def holder_dead(
    connected_at: int, node_expiry: int | None, now_ms: int, offline_after_ms: int, ttl_ms: int
) -> bool:
    """Whether the node holding a link is dead for good: its liveness lease expired (or is
    gone) and it was last alive at least the heartbeat window ago."""
    expired = node_expiry is None or node_expiry <= now_ms
    last_alive = alive_at(connected_at, node_expiry, ttl_ms)
    return expired and now_ms - last_alive >= offline_after_ms


def unlink_if_stale(
    conn: Connection, agent_id: str, me: str, now_ms: int, offline_after_ms: int, ttl_ms: int
) -> tuple[bool, int | None]:
    """Remove the agent's link if the node holding it is dead (:func:`holder_dead`). Returns
    whether the agent is stale, and when its node was last known alive (None: no link row)."""
    row = conn.execute(select(agent_links).where(agent_links.c.agent_id == agent_id)).first()
    if row is None:
        return True, None
    if row.node == me:
        return False, None
    expiry = node_expiries(conn, {row.node}).get(row.node)
    if not holder_dead(row.connected_at, expiry, now_ms, offline_after_ms, ttl_ms):
        return False, None
    conn.execute(delete(agent_links).where(agent_links.c.agent_id == agent_id))
    return True, alive_at(row.connected_at, expiry, ttl_ms)
