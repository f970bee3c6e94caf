"""The hub's clockwork (seed 001 §7.4, §11): silent agents go offline, their running tasks fail
with ``agent_unreachable`` after the grace period, a cancel the agent did not confirm by its
deadline is recorded by the hub, and overdue requests — interactions and tool calls on
people's apps — expire; and the event log is compacted by each workspace's retention policy.

Each pass is a plain coroutine (:meth:`Monitor.tick`) with the time passed in, so tests drive
it directly; :meth:`Monitor.run` only repeats it.

With several hub nodes, each closes its own silent links — the node holding an
agent's socket is the one that sees its heartbeats — and everything else runs on the one node
that holds the ``monitor`` lease; an agent another node holds is stale only once that node is
dead (:func:`lineup.hub.cluster.links.holder_dead`). The grace period of an offline agent's
tasks counts from the moment the hub recorded it offline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

from lineup.hub import app_tools, commands, retention
from lineup.hub.cluster import MONITOR_LEASE
from lineup.hub.recorder import Writing
from lineup.hub.state import HubState
from lineup.protocol.errors import LineupError
from lineup.protocol.session import CloseCode
from lineup.store import Agent, Reader, Task, auth, idempotency, sweeps

log = logging.getLogger("lineup.hub.monitor")

KEY_SWEEP_INTERVAL_MS = 5 * 60 * 1000
STALE_SWEEP_PAGE = 1000
"""Agents recorded online read at a time by the sweep for those no live node holds."""


class Overdue(Protocol):
    """A pending request a sweep found past its time."""

    @property
    def workspace_id(self) -> str: ...

    @property
    def id(self) -> str: ...


ExpireIfDue = Callable[[Writing, str, str], bool]
"""Expire one request (workspace, id) if it is still open and due; says whether it did."""


class Monitor:
    def __init__(self, hub: HubState) -> None:
        self.hub = hub
        hub.leases.keep(MONITOR_LEASE)
        self._next_key_sweep_ms = 0
        self._next_compaction_ms = 0
        self.lag_ms = 0
        """How late the last pass woke up: time in which this node read no heartbeat."""

    async def tick(self, now_ms: int) -> None:
        await self.close_silent_links(now_ms)
        if not self.hub.leases.held(MONITOR_LEASE):  # once per cluster
            return
        await self.mark_stale_agents_offline(now_ms)
        await self.fail_unreachable_tasks(now_ms)
        await self.end_overdue_cancels(now_ms)
        await self.expire_interactions(now_ms)
        await self.expire_tool_calls(now_ms)
        await self.hub.governance.tick(now_ms)  # approvals' expiry, orphaned executions
        await self.forget_old_keys_and_sessions(now_ms)
        await self.compact_log(now_ms)

    async def close_silent_links(self, now_ms: int) -> None:
        """Two missed heartbeats: the link is dead even if TCP has not noticed. A pass that
        woke up late gives the links that much longer: heartbeats that arrived while this
        node's event loop was busy elsewhere may not have been read yet."""
        deadline = now_ms - int(self.hub.settings.offline_after * 1000) - self.lag_ms
        for link in self.hub.presence.silent_since(deadline):
            log.info("agent %s missed its heartbeats; closing", link.agent_id)
            await link.close(CloseCode.SILENT, "heartbeats missed")
            if self.hub.presence.detach(link):
                await self._offline(link.workspace_id, link.agent_id, link.last_beat_ms)

    async def mark_stale_agents_offline(self, now_ms: int) -> None:
        """Agents recorded online with no connection here (the hub restarted) go offline once
        they have had the heartbeat window to come back."""
        offline_after = int(self.hub.settings.offline_after * 1000)
        if now_ms - self.hub.started_ms < offline_after:
            return
        after = ""
        while True:
            page = partial(_online_after, after)
            online = await self.hub.store.read(page)
            await self._record_stale_offline(online, now_ms)
            if len(online) < STALE_SWEEP_PAGE:
                return
            after = online[-1].id

    async def _record_stale_offline(self, online: Sequence[Agent], now_ms: int) -> None:
        # not held here, and not held by a live node either
        cluster = self.hub.cluster
        unlinked = [a for a in online if self.hub.presence.get(a.id) is None]
        for agent in await cluster.stale_candidates(unlinked, now_ms):
            try:
                await self.hub.recorder.run(cluster.stale_job(agent, now_ms))
            except LineupError:
                log.exception("could not record agent %s offline", agent.id)

    async def fail_unreachable_tasks(self, now_ms: int) -> None:
        """Tasks of agents recorded offline a grace period ago or more fail."""
        grace_ms = int(self.hub.settings.grace_period * 1000)

        def read(r: Reader) -> tuple[list[Task], dict[str | None, Agent | None]]:
            overdue = sweeps.unreachable_tasks(r.connection, now_ms - grace_ms)
            agents = {
                t.target_agent_id: r.get_agent(t.workspace_id, t.target_agent_id or "")
                for t in overdue
            }
            return overdue, agents

        overdue, last_beats = await self.hub.store.read(read)
        for task in overdue:
            agent = last_beats.get(task.target_agent_id)
            beat = agent.last_heartbeat_at if agent is not None else None
            try:
                await self.hub.recorder.run(
                    partial(commands.fail_unreachable, task=task, last_beat_ms=beat)
                )
            except LineupError:
                log.exception(
                    "could not fail unreachable task %s", task.id, extra={"task_id": task.id}
                )

    async def end_overdue_cancels(self, now_ms: int) -> None:
        """Tasks whose cancel went unconfirmed past its deadline are recorded ``cancelled``
        (cause ``cancel_timeout``): an agent offline, stuck or buggy cannot hold one open."""
        overdue = await self.hub.store.read(lambda r: sweeps.overdue_cancels(r.connection, now_ms))
        for task in overdue:
            try:
                await self.hub.recorder.run(partial(commands.cancel_timed_out, task=task))
            except LineupError:
                log.exception(
                    "could not end overdue cancel of task %s", task.id, extra={"task_id": task.id}
                )

    async def expire_interactions(self, now_ms: int) -> None:
        """Interactions whose ``expiresAt`` passed unanswered expire."""
        overdue = await self.hub.store.read(
            lambda r: sweeps.overdue_interactions(r.connection, now_ms)
        )
        await self._expire("interaction", overdue, commands.expire_if_due)

    async def expire_tool_calls(self, now_ms: int) -> None:
        """Tool calls whose ``timeout_ms`` passed complete with ``unavailable``."""
        overdue = await self.hub.store.read(lambda r: r.overdue_tool_calls(now_ms))
        await self._expire("tool call", overdue, app_tools.expire_if_due)

    async def _expire(
        self, what: str, overdue: Sequence[Overdue], expire_if_due: ExpireIfDue
    ) -> int:
        """One job per overdue request, each deciding afresh: an answer may have won."""
        expired = 0
        for row in overdue:

            def job(w: Writing, ws: str = row.workspace_id, rid: str = row.id) -> bool:
                return expire_if_due(w, ws, rid)

            try:
                expired += await self.hub.recorder.run(job)
            except LineupError:
                log.exception("could not expire %s %s", what, row.id)
        return expired

    async def forget_old_keys_and_sessions(self, now_ms: int) -> None:
        """HTTP Idempotency-Keys older than a day, and sessions whose family has ended with
        their tokens, once every few minutes: neither can be used again, so neither is kept."""
        if now_ms < self._next_key_sweep_ms:
            return
        self._next_key_sweep_ms = now_ms + KEY_SWEEP_INTERVAL_MS
        before = now_ms - idempotency.KEY_TTL_MS
        await self.hub.store.write(lambda tx: idempotency.forget_keys_before(tx.connection, before))
        await self.hub.store.write(lambda tx: auth.delete_expired_sessions(tx.connection, now_ms))

    async def compact_log(self, now_ms: int) -> None:
        """The event log compacted by each workspace's retention, every
        ``retention_interval`` (see :mod:`lineup.hub.retention`)."""
        if now_ms < self._next_compaction_ms:
            return
        self._next_compaction_ms = now_ms + int(self.hub.settings.retention_interval * 1000)
        await retention.compact(self.hub.store, self.hub.settings, now_ms)

    async def _offline(self, workspace_id: str, agent_id: str, last_beat_ms: int) -> None:
        try:
            # unless another node holds the agent by now
            await self.hub.recorder.run(
                self.hub.cluster.offline_job(workspace_id, agent_id, last_beat_ms),
                workspace=workspace_id,
            )
        except LineupError:
            log.exception("could not record agent %s offline", agent_id)

    async def run(self) -> None:
        interval = self.hub.settings.monitor_interval
        loop = asyncio.get_running_loop()
        while True:
            try:
                await self.tick(self.hub.clock())
            except Exception:
                log.exception("monitor pass failed")
            due = loop.time() + interval
            await asyncio.sleep(interval)
            self.lag_ms = max(0, int((loop.time() - due) * 1000))


def _online_after(after: str, r: Reader) -> list[Agent]:
    return sweeps.agents_with_status(r.connection, "online", after=after, limit=STALE_SWEEP_PAGE)
