"""The governance part of a running hub: its catalogue of capabilities and its executor."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lineup.core.provider import Provider
from lineup.hub.governance.bindings import Renewals
from lineup.hub.governance.catalogue import Catalogue, CatalogueView
from lineup.hub.governance.executor import Executor
from lineup.hub.governance.registry import Registry
from lineup.hub.recorder import Writing
from lineup.protocol.errors import LineupError
from lineup.store import governance as gov_store

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")


class Governance:
    def __init__(self, hub: HubState, providers: Sequence[Provider]) -> None:
        self.hub = hub
        self.catalogue = Catalogue(providers)
        self.registry = Registry(hub, self.catalogue)
        self.executor = Executor(hub, self.registry)
        self._next_probe_ms = 0
        self.renewals = Renewals()
        """People's OAuth tokens being renewed on this node (``bindings``)."""

    async def view(self, workspace_id: str) -> CatalogueView:
        """The providers ``workspace_id`` runs now (see :class:`Registry`)."""
        return await self.registry.view(workspace_id)

    async def start(self) -> None:
        """Resume what a previous run of this hub left unfinished (once per cluster: the
        caller holds the monitor's lease, or is alone)."""
        await self.registry.preload()
        resumed = await self.executor.resume_unfinished(self.hub.clock(), all_of_them=True)
        if resumed:
            log.info("resumed %d unfinished executions", resumed)

    async def tick(self, now_ms: int) -> None:
        """The monitor's pass: expire undecided approvals, resume orphaned executions."""
        from lineup.hub.governance import decisions

        due = await self.hub.store.read(lambda r: gov_store.due_approvals(r.connection, now_ms))
        for row in due:

            def job(w: Writing, ws: str = row.workspace_id, rid: str = row.id) -> bool:
                return decisions.expire_if_due(w, ws, rid)

            try:
                await self.hub.recorder.run(job)
            except LineupError:
                log.exception("could not expire approval %s", row.id)
        await self.executor.resume_unfinished(now_ms)
        if now_ms >= self._next_probe_ms:
            from lineup.hub.governance import lifecycle

            self._next_probe_ms = now_ms + int(self.hub.settings.provider_health_interval * 1000)
            await lifecycle.probe_all(self.hub)

    async def close(self) -> None:
        await self.executor.close()
        self.registry.close()
