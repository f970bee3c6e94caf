"""The agent-link registry's rules: when the node holding an agent counts as dead.

Links are written inside the same write transactions as the events they go with
(:mod:`lineup.store.agent_links`), so the registry and the log never disagree: a link with
``agent.connected``; an unlink before recording an agent offline — and only the node named in
the row may do that, so a node that lost an agent to a newer connection elsewhere does not
mark it offline.

The node that holds an agent's socket is the one that decides it went silent: it sees the
heartbeats, in memory. Another node (the one holding the ``monitor`` lease) records an agent
offline only when the node named in its row is dead — its ``node:<instance>`` lease expired,
``ttl`` without a renewal — and has been for the heartbeat window since it was last alive. A
live node renews that lease from a thread of its own (:mod:`lineup.hub.leases`), so load on
it does not make it look dead.
"""

from __future__ import annotations

from lineup.hub.leases import node_lease
from lineup.store import Reader, WriteTx, agent_links
from lineup.store import leases as lease_rows


def node_expiries(r: Reader, nodes: set[str]) -> dict[str, int]:
    """``expires_at`` of each node's liveness lease (absent: released or never taken)."""
    names = {node_lease(n): n for n in nodes}
    found = lease_rows.expiries(r.connection, list(names))
    return {names[name]: expires_at for name, expires_at in found.items()}


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
    tx: WriteTx, agent_id: str, me: str, now_ms: int, offline_after_ms: int, ttl_ms: int
) -> tuple[bool, int | None]:
    """Remove the agent's link if the node holding it is dead (:func:`holder_dead`). Returns
    whether the agent is stale, and when its node was last known alive (None: no link row)."""
    link = agent_links.link_of(tx.connection, agent_id)
    if link is None:
        return True, None
    if link.node == me:
        return False, None
    expiry = node_expiries(tx, {link.node}).get(link.node)
    if not holder_dead(link.connected_at, expiry, now_ms, offline_after_ms, ttl_ms):
        return False, None
    agent_links.remove(tx.connection, agent_id)
    return True, alive_at(link.connected_at, expiry, ttl_ms)
