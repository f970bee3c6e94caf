"""The hub's life: open and migrate the store, check the sealing keys, start the cluster, the
monitor and the notification worker; on the way out stop them in the reverse order, tell agents
the hub is restarting, flush what is queued and release the node's leases."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI

from lineup import __version__
from lineup.hub import hosted as hosted_agents
from lineup.hub.api import direct as direct_api
from lineup.hub.config import Settings
from lineup.hub.governance import providers as governance_providers
from lineup.hub.monitor import Monitor
from lineup.hub.recorder import Clock
from lineup.hub.secret_keys import key_file, reseal_stored
from lineup.hub.state import HubState
from lineup.protocol.session import CloseCode
from lineup.store import Store
from lineup.store.sealed import Keyring

log = logging.getLogger("lineup.hub")


def hub_lifespan(
    settings: Settings, clock: Clock, engine_host: Any = None
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The lifespan of an app serving ``settings``: it puts its ``HubState`` on ``app.state``."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await Store.open(
            settings.database_url, writer_connections=settings.writer_connections
        )
        try:
            await store.migrate()
            keyring = await _open_secrets(settings, store)
        except BaseException:
            await store.close()
            raise
        hub = HubState.create(settings, store, clock, keyring)
        hub.engine_host = engine_host
        app.state.hub = hub
        if settings.direct is not None:  # its workspace, person, agent
            await direct_api.prepare(hub, settings.direct)
        clockwork = Monitor(hub)
        await hub.cluster.start()  # leases, Redis Streams, hole checks
        await governance_providers.prepare(hub)
        if settings.redis_url is None:  # alone: what a previous run left is this node's
            await hub.governance.start()
        monitor = asyncio.create_task(clockwork.run(), name="lineup-monitor")
        notifier = _start_notifications(hub)
        hosted = await hosted_agents.start_all(hub)
        if hosted:
            log.info("hosting %d agents", hosted)
        log.info("LineUp hub %s ready (%s)", __version__, store.dialect)
        try:
            yield
        finally:
            if engine_host is not None:  # first: its agents and engines stop before the hub
                with contextlib.suppress(Exception):
                    await engine_host.close()
            monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await monitor
            if notifier is not None:
                notifier.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await notifier
            await hub.governance.close()
            for link in hub.presence.links():
                with contextlib.suppress(Exception):
                    await link.close(CloseCode.HUB_RESTARTING, "hub restarting")
            await hub.cluster.stop()
            with contextlib.suppress(Exception):
                await store.flush()
            await hub.cluster.release()
            await store.close()

    return lifespan


def _start_notifications(hub: HubState) -> asyncio.Task[None] | None:
    """The notification worker (``lineup.hub.notify``), unless turned off in the settings."""
    if not hub.settings.notify_enabled:
        return None
    from lineup.hub.notify import NotificationWorker

    worker = NotificationWorker(hub)
    hub.notifier = worker
    return asyncio.create_task(worker.run(), name="lineup-notifications")


async def _open_secrets(settings: Settings, store: Store) -> Keyring:
    """The hub's keys, checked against every stored secret before anything uses one; what is
    plain text (an older hub's database) or sealed with an older key is sealed again now."""
    if settings.redis_url and not settings.secret_keys:
        log.warning(
            "LINEUP_REDIS_URL is set but LINEUP_SECRET_KEY is not: every node of a cluster "
            "needs the same LINEUP_SECRET_KEY (this node uses %s)",
            key_file(settings),
        )
    keyring, changed = await reseal_stored(settings, store)
    if changed:
        log.info("sealed %d stored secrets under key %s", changed, keyring.current_id)
    return keyring
