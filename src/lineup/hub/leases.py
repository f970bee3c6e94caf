"""Named leases: work that must run once across a cluster of hub nodes, and each node's liveness.

A lease is a row ``(name, holder, expires_at)`` in the ``leases`` table. A node *keeps* the
leases it wants; a keeper task renews them every ``ttl / 3`` in one write (the store's writer
takes its cross-node write lock first, so two nodes never both take a lease). A lease whose
holder stopped renewing — the node was killed, lost the database — expires after ``ttl`` and
the next node to try takes it over. Every node also keeps ``node:<instance>``: its own
liveness, which the agent-link registry uses (see :mod:`lineup.hub.cluster`).

Use it for once-only work (the notifications worker, sweeps)::

    hub.leases.keep("notifications")           # once, at start: try to take and keep it
    ...
    if hub.leases.held("notifications"):       # in the work loop: a memory check, no I/O
        await deliver_due_notifications()

or ``await hub.leases.acquire(name)`` to try (and renew) at once. ``held`` is True only while
the last renewal is younger than ``ttl`` minus a safety margin, measured on this node's
monotonic clock, so a node cut off from the database stops acting before another may take
over. Expiry times in the table are wall-clock milliseconds: keep node clocks in sync (NTP);
a skew must stay well below ``ttl``.

On SQLite there is only one node: :class:`LocalLeases` holds every lease at once, no I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Protocol

from sqlalchemy import delete, insert, select, update

from lineup.store import Store, WriteTx
from lineup.store.schema import leases

log = logging.getLogger("lineup.hub.leases")

NODE_PREFIX = "node:"
SAFETY = 0.8
"""``held`` trusts a renewal for ``SAFETY * ttl`` only: margin for a slow renewal write."""


class LeaseBook(Protocol):
    """What the hub uses; both implementations below satisfy it."""

    instance: str
    ttl: float

    def keep(self, name: str) -> None: ...
    def held(self, name: str) -> bool: ...
    def held_names(self) -> list[str]: ...
    async def acquire(self, name: str) -> bool: ...
    async def renew(self) -> None: ...
    async def run(self) -> None: ...
    async def release_all(self) -> None: ...


class LocalLeases:
    """One node (SQLite): every lease is held, always."""

    def __init__(self, instance: str, ttl: float = 10.0) -> None:
        self.instance = instance
        self.ttl = ttl
        self._kept: set[str] = set()

    def keep(self, name: str) -> None:
        self._kept.add(name)

    def held(self, name: str) -> bool:
        return True

    def held_names(self) -> list[str]:
        return sorted(self._kept)

    async def acquire(self, name: str) -> bool:
        return True

    async def renew(self) -> None:
        return None

    async def run(self) -> None:
        await asyncio.Event().wait()

    async def release_all(self) -> None:
        return None


class DatabaseLeases:
    """Leases in the ``leases`` table, for several nodes sharing one PostgreSQL database."""

    def __init__(
        self,
        store: Store,
        instance: str,
        clock: Callable[[], int],
        ttl: float = 10.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.instance = instance
        self.ttl = ttl
        self._clock = clock
        self._monotonic = monotonic
        self._kept: set[str] = {node_lease(instance)}
        self._valid_until: dict[str, float] = {}

    def keep(self, name: str) -> None:
        self._kept.add(name)

    def held(self, name: str) -> bool:
        return self._valid_until.get(name, 0.0) > self._monotonic()

    def held_names(self) -> list[str]:
        return sorted(n for n in self._kept if self.held(n) and not n.startswith(NODE_PREFIX))

    async def acquire(self, name: str) -> bool:
        self._kept.add(name)
        return name in await self._take([name])

    async def renew(self) -> None:
        """Take or renew every kept lease in one write."""
        await self._take(sorted(self._kept))

    async def _take(self, names: list[str]) -> set[str]:
        started = self._monotonic()
        ttl_ms = int(self.ttl * 1000)
        me = self.instance
        clock = self._clock

        def job(tx: WriteTx) -> set[str]:
            now = clock()
            rows = {
                r.name: r for r in tx.execute(select(leases).where(leases.c.name.in_(names))).all()
            }
            taken: set[str] = set()
            for name in names:
                row = rows.get(name)
                if row is None:
                    tx.execute(
                        insert(leases).values(
                            name=name, holder=me, acquired_at=now, expires_at=now + ttl_ms
                        )
                    )
                elif row.holder == me or row.expires_at <= now:
                    acquired = row.acquired_at if row.holder == me else now
                    tx.execute(
                        update(leases)
                        .where(leases.c.name == name)
                        .values(holder=me, acquired_at=acquired, expires_at=now + ttl_ms)
                    )
                else:
                    continue
                taken.add(name)
            return taken

        try:
            taken = await self.store.write(job)
        except Exception:
            log.warning("could not renew leases %s", names, exc_info=True)
            return set()
        valid_until = started + self.ttl * SAFETY
        for name in names:
            if name in taken:
                if not self.held(name):
                    log.info("lease %s taken by %s", name, me)
                self._valid_until[name] = valid_until
            else:
                self._valid_until.pop(name, None)
        return taken

    async def run(self) -> None:
        interval = self.ttl / 3
        while True:
            await self.renew()
            await asyncio.sleep(interval)

    async def release_all(self) -> None:
        """Give every lease back at once (graceful shutdown): others need not wait for expiry."""
        names = sorted(self._kept)
        me = self.instance
        self._valid_until.clear()

        def job(tx: WriteTx) -> None:
            tx.execute(delete(leases).where(leases.c.name.in_(names), leases.c.holder == me))

        with contextlib.suppress(Exception):
            await self.store.write(job)


def node_lease(instance: str) -> str:
    return f"{NODE_PREFIX}{instance}"
