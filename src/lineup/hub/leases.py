"""Named leases: work that must run once across a cluster of hub nodes, and each node's liveness.

A lease is a row ``(name, holder, expires_at)`` in the ``leases`` table. A node *keeps* the
leases it wants; a keeper renews them every ``ttl / 3``. A lease whose holder stopped
renewing — the node was killed, lost the database — expires after ``ttl`` and the next node
to try takes it over. Every node also keeps ``node:<instance>``: its own liveness, which the
agent-link registry uses (see :mod:`lineup.hub.cluster`).

The keeper runs on a thread of its own with its own database connection, not on the event
loop and not through the store's writer: a node busy with thousands of events a second
delays its loop and queues its writes behind other nodes' batches, and a renewal stuck
behind that load would make a live node look dead to the others. The one thing the keeper
asks of the loop is that it still turns at all: a loop that has not run for ``ttl`` is a
node that serves nobody, so the keeper stops renewing and the others take over. Two nodes
never both take a lease: each row changes only where it is the renewer's own or expired
(the database's row lock decides a race), and two inserts of a new lease collide on its
primary key.

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
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from lineup.store import Store
from lineup.store import leases as lease_rows

log = logging.getLogger("lineup.hub.leases")

Take = Callable[[list[str]], Awaitable[set[str]]]
"""Takes or renews the named leases for this node, now; the names taken."""

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
    """Leases in the ``leases`` table, for several nodes sharing one PostgreSQL database.

    ``acquire``, ``renew`` and ``release_all`` write through the store; ``run`` renews from
    the keeper thread (see the module docstring) for as long as it runs."""

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
        self._kept: frozenset[str] = frozenset({node_lease(instance)})
        self._valid_until: dict[str, float] = {}
        self._loop_turned = monotonic()

    def keep(self, name: str) -> None:
        # replaced, never changed in place: the keeper thread reads it
        self._kept = self._kept | {name}

    def held(self, name: str) -> bool:
        return self._valid_until.get(name, 0.0) > self._monotonic()

    def held_names(self) -> list[str]:
        return sorted(n for n in self._kept if self.held(n) and not n.startswith(NODE_PREFIX))

    async def acquire(self, name: str) -> bool:
        self.keep(name)
        return name in await self._take([name], self._take_through_store)

    async def renew(self) -> None:
        """Take or renew every kept lease in one write."""
        await self._take(sorted(self._kept), self._take_through_store)

    def _take_through_store(self, names: list[str]) -> Awaitable[set[str]]:
        me, clock, ttl_ms = self.instance, self._clock, self.ttl_ms
        return self.store.write(
            lambda tx: lease_rows.take(tx.connection, names, me, clock(), ttl_ms)
        )

    @property
    def ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def _take(self, names: list[str], take: Take) -> set[str]:
        started = self._monotonic()
        me = self.instance
        try:
            taken = await take(names)
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
        """Renew from the keeper thread while this coroutine runs; it only marks, every few
        tenths of ``ttl``, that the event loop still turns."""
        keeper = _Keeper(self)
        keeper.start()
        try:
            while True:
                self._loop_turned = self._monotonic()
                await asyncio.sleep(self.ttl / 10)
        finally:
            keeper.stop()
            await asyncio.get_running_loop().run_in_executor(None, keeper.join)

    def _loop_alive(self) -> bool:
        return self._monotonic() - self._loop_turned < self.ttl

    async def release_all(self) -> None:
        """Give every lease back at once (graceful shutdown): others need not wait for expiry."""
        names = sorted(self._kept)
        me = self.instance
        self._valid_until.clear()

        with contextlib.suppress(Exception):
            await self.store.write(lambda tx: lease_rows.release(tx.connection, names, me))


class _Keeper:
    """The renewal loop on a thread of its own: its own event loop and database connection,
    so neither the node's event loop nor its writer's queue can hold a renewal back."""

    def __init__(self, leases: DatabaseLeases) -> None:
        self.leases = leases
        self._thread = threading.Thread(target=self._main, name="lineup-leases", daemon=True)
        self._started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    def start(self) -> None:
        self._thread.start()
        self._started.wait(5)

    def stop(self) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed: it stopped already
                loop.call_soon_threadsafe(stopping.set)

    def join(self) -> None:
        self._thread.join()

    def _main(self) -> None:
        try:
            asyncio.run(self._renewals())
        except Exception:  # renewals stop: the other nodes will find this one dead
            log.exception("the lease keeper stopped")

    async def _renewals(self) -> None:
        self._loop = asyncio.get_running_loop()
        stopping = self._stopping = asyncio.Event()
        self._started.set()
        book = self.leases
        own = lease_rows.OwnConnection(book.store.url)
        me, clock, ttl_ms = book.instance, book._clock, book.ttl_ms

        def take(names: list[str]) -> Awaitable[set[str]]:
            return own.take(names, me, clock, ttl_ms)

        try:
            while not stopping.is_set():
                if book._loop_alive():
                    await book._take(sorted(book._kept), take)
                else:
                    log.warning("the event loop has not turned for %s s: not renewing", book.ttl)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), book.ttl / 3)
        finally:
            await own.close()


def node_lease(instance: str) -> str:
    return f"{NODE_PREFIX}{instance}"
