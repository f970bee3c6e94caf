"""This node's part in a cluster of hub nodes (DESIGN principle 7, "Realtime model").

On SQLite the hub is one process and none of this is needed: commits go straight to the local
broker, every lease is held, presence is the node's memory. On PostgreSQL the same code runs
as a cluster of any number of nodes, one or many:

- committed events go through the :class:`~lineup.hub.cluster.sequencer.Sequencer` (order per
  workspace, holes read from the database) to the local broker, and — with ``LINEUP_REDIS_URL``
  — onto Redis Streams, which every node reads (:mod:`lineup.hub.streams`); without Redis, or
  while it is down, a periodic check reads what other nodes committed from the database;
- once-only work runs under leases (:mod:`lineup.hub.leases`);
- the agent-link registry (:mod:`lineup.store.agent_links`, its rules in
  :mod:`lineup.hub.cluster.links`) says which node holds each agent:
  that node alone decides from the heartbeats it sees that its agent went silent, and another
  node marks the agent offline only once the holder itself is dead (its lease expired).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from lineup.hub import commands
from lineup.hub.cluster import links
from lineup.hub.cluster.sequencer import Sequencer
from lineup.hub.commands import Recorded
from lineup.hub.config import Settings
from lineup.hub.fanout import Broker
from lineup.hub.leases import DatabaseLeases, LeaseBook, LocalLeases
from lineup.hub.metrics import Metrics
from lineup.hub.recorder import Clock, Writing
from lineup.hub.streams import StreamBus
from lineup.store import Agent, Reader, Store, StoredEvent, agent_links

log = logging.getLogger("lineup.hub.cluster")

MONITOR_LEASE = "monitor"
"""The hub's periodic once-only work (offline sweeps, grace expiry, interaction expiry)."""


class Cluster:
    def __init__(
        self, settings: Settings, store: Store, broker: Broker, metrics: Metrics, clock: Clock
    ) -> None:
        self.settings = settings
        self.store = store
        self.broker = broker
        self.metrics = metrics
        self.clock = clock
        self.enabled = store.dialect == "postgresql"
        self.instance = f"{settings.node_id}-{secrets.token_hex(3)}"
        """Unique per process: two nodes started with the same ``--node-id`` stay apart."""
        self.leases: LeaseBook
        self.sequencer: Sequencer | None = None
        self.bus: StreamBus | None = None
        self._tasks: list[asyncio.Task[None]] = []
        if not self.enabled:
            self.leases = LocalLeases(self.instance, settings.lease_ttl)
            return
        self.leases = DatabaseLeases(store, self.instance, clock, settings.lease_ttl)
        self.sequencer = Sequencer(store, broker, on_fill=metrics.gap_fills.inc)
        if settings.redis_url:
            self.bus = StreamBus(
                settings.redis_url,
                self.instance,
                on_events=self.sequencer.offer,
                on_ephemeral=self._remote_ephemeral,
                on_recovered=self._stream_recovered,
                on_received=metrics.stream_received,
                on_dropped=metrics.stream_dropped.inc,
            )
            broker.ephemeral_forward = self.bus.publish_ephemeral

    # --- fan-out ---------------------------------------------------------------------------

    def on_commit(self, events: Sequence[StoredEvent]) -> None:
        """The store's commit listener: local followers first, then the other nodes."""
        self.metrics.committed(events)
        if self.sequencer is None:
            self.broker.publish(events)
            return
        self.sequencer.offer(events)
        if self.bus is not None:
            self.bus.publish(events)

    def _remote_ephemeral(self, workspace_id: str, frame: dict[str, object]) -> None:
        self.broker.publish_ephemeral(workspace_id, dict(frame), forward=False)

    def _stream_recovered(self) -> None:
        if self.sequencer is not None:
            self._spawn(self.sequencer.check(immediate=True), "lineup-stream-catch-up")

    @property
    def stream_healthy(self) -> bool:
        return self.bus is None or self.bus.healthy

    async def _check_loop(self) -> None:
        assert self.sequencer is not None
        interval = self.settings.cluster_check_interval
        while True:
            healthy = self.bus is not None and self.bus.healthy
            await asyncio.sleep(interval if healthy else min(interval, 0.25))
            try:
                await self.sequencer.check(immediate=not healthy)
            except Exception:
                log.warning("cluster check failed", exc_info=True)

    # --- the agent-link registry (inside write jobs) ---------------------------------------

    def link(self, w: Writing, agent_id: str, workspace_id: str) -> None:
        if self.enabled:
            agent_links.link(w.connection, agent_id, workspace_id, self.instance, w.now_ms)

    def offline_job(
        self, workspace_id: str, agent_id: str, last_beat_ms: int
    ) -> Callable[[Writing], Recorded]:
        """This node lost the agent's socket: offline, unless another node holds it now."""

        def job(w: Writing) -> Recorded:
            if self.enabled and not agent_links.unlink(w.connection, agent_id, self.instance):
                return Recorded(None)
            return commands.agent_went_offline(w, workspace_id, agent_id, last_beat_ms)

        return job

    def stale_job(self, agent: Agent, now_ms: int) -> Callable[[Writing], Recorded]:
        """An agent recorded online that no live node holds: offline."""
        offline_after = int(self.settings.offline_after * 1000)
        ttl = int(self.leases.ttl * 1000)
        fallback = agent.last_heartbeat_at or agent.connected_at or now_ms

        def job(w: Writing) -> Recorded:
            last = fallback
            if self.enabled:
                stale, alive_at = links.unlink_if_stale(
                    w.tx, agent.id, self.instance, now_ms, offline_after, ttl
                )
                if not stale:
                    return Recorded(None)
                last = alive_at or fallback
            return commands.agent_went_offline(w, agent.workspace_id, agent.id, last)

        return job

    async def stale_candidates(self, agents: list[Agent], now_ms: int) -> list[Agent]:
        """Of ``agents`` (online in the log, not linked to this node's memory), those that look
        stale: read-only, so that live agents on other nodes cost no write."""
        if not self.enabled or not agents:
            return agents
        offline_after = int(self.settings.offline_after * 1000)
        ttl = int(self.leases.ttl * 1000)

        def read(r: Reader) -> list[Agent]:
            found = agent_links.links_of(r.connection, [a.id for a in agents])
            nodes = {link.node for link in found.values()}
            expiries = links.node_expiries(r, nodes)
            stale = []
            for agent in agents:
                link = found.get(agent.id)
                if link is None:
                    stale.append(agent)
                    continue
                if link.node == self.instance:
                    continue
                expiry = expiries.get(link.node)
                if links.holder_dead(link.connected_at, expiry, now_ms, offline_after, ttl):
                    stale.append(agent)
            return stale

        return await self.store.read(read)

    # --- life ------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.leases.renew()
        self._spawn(self.leases.run(), "lineup-leases")
        if self.bus is not None:
            await self.bus.start()
        if self.sequencer is not None:
            self._spawn(self._check_loop(), "lineup-cluster-check")

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        if self.bus is not None:
            await self.bus.stop()

    async def release(self) -> None:
        """Give the leases back (graceful shutdown), after the last writes."""
        await self.leases.release_all()

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.append(task)
        task.add_done_callback(self._forget_task)

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        if task in self._tasks:
            self._tasks.remove(task)

    def describe(self) -> dict[str, object]:
        """For ``/readyz``."""
        info: dict[str, object] = {
            "node": self.settings.node_id,
            "instance": self.instance,
            "mode": "cluster" if self.enabled else "single",
            "leases": self.leases.held_names(),
        }
        if self.bus is not None:
            info["stream"] = {
                "healthy": self.bus.healthy,
                "lagMs": self.bus.last_lag_ms,
                "dropped": self.bus.dropped_events,
            }
        return info
