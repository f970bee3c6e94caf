"""Replay-then-live delivery of a workspace's log, in order, with no gaps and no repeats.

The follower subscribes *before* it reads the database, so nothing committed during the replay
is missed; it then skips what it already sent and backfills any hole from the database. The
same loop serves people's apps (every event) and agents (their downlink only).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from lineup.hub.fanout import Broker, Ephemeral, Subscription
from lineup.store import Store, StoredEvent

PAGE = 1000

SendEvent = Callable[[StoredEvent], Awaitable[bool | None]]
"""Sends one event; may return False when it chose not to (not the agent's business)."""
SendEphemeral = Callable[[Ephemeral], Awaitable[None]]


class Follower:
    def __init__(
        self,
        store: Store,
        broker: Broker,
        workspace_id: str,
        after: int,
        send: SendEvent,
        send_ephemeral: SendEphemeral | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.workspace_id = workspace_id
        self.last = after
        self._send = send
        self._send_ephemeral = send_ephemeral
        self.subscription: Subscription | None = None
        self.replayed = 0

    async def replay(self) -> int:
        """Subscribe, then send everything committed after the cursor; return the cursor."""
        if self.subscription is None:
            self.subscription = self.broker.subscribe(self.workspace_id)
            self.subscription.cursor = self.last  # cluster (issue 7)
        before = self.replayed
        await self._backfill(until=None)
        if self.broker.observer is not None:  # metrics (issue 7)
            self.broker.observer.replayed(self.replayed - before)
        return self.last

    async def _backfill(self, until: int | None) -> None:
        # issue 7: the next page is read while this one is sent (100,000 missed events are
        # a hundred pages; reading and sending overlap instead of taking turns)
        ahead: asyncio.Future[list[StoredEvent]] | None = None
        try:
            while until is None or self.last < until:
                if ahead is not None:
                    page, ahead = await ahead, None
                else:
                    page = await self.store.read_events(
                        self.workspace_id, after=self.last, limit=PAGE
                    )
                if len(page) == PAGE and (until is None or page[-1].sequence < until):
                    ahead = asyncio.ensure_future(
                        self.store.read_events(
                            self.workspace_id, after=page[-1].sequence, limit=PAGE
                        )
                    )
                for event in page:
                    if until is not None and event.sequence > until:
                        return
                    await self._deliver(event)
                    self.replayed += 1
                if len(page) < PAGE:
                    return
        finally:
            if ahead is not None:
                ahead.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ahead

    async def _deliver(self, event: StoredEvent) -> bool | None:
        if event.sequence <= self.last:
            return False
        self.last = event.sequence
        if self.subscription is not None:  # cluster (issue 7)
            self.subscription.cursor = event.sequence
        return await self._send(event)

    async def live(self) -> None:
        """Forward live events forever (until cancelled), healing gaps from the database."""
        if self.subscription is None:
            await self.replay()
        subscription = self.subscription
        assert subscription is not None
        subscription.live = True  # cluster (issue 7)
        observer = self.broker.observer
        try:
            while True:
                if subscription.lagging:
                    subscription = self._resubscribe()
                    await self._backfill(until=None)
                    subscription.live = True
                    continue
                item = await subscription.queue.get()
                if isinstance(item, Ephemeral):
                    if self._send_ephemeral is not None:
                        await self._send_ephemeral(item)
                    continue
                if item.sequence <= self.last:
                    continue
                if item.sequence > self.last + 1:
                    await self._backfill(until=item.sequence - 1)
                sent = await self._deliver(item)
                if observer is not None and sent is not False:  # metrics (issue 7)
                    observer.delivered(item)  # commit → written to the socket
        finally:
            self.close()

    def _resubscribe(self) -> Subscription:
        self.close()
        self.subscription = self.broker.subscribe(self.workspace_id)
        self.subscription.cursor = self.last  # cluster (issue 7)
        return self.subscription

    def close(self) -> None:
        if self.subscription is not None:
            self.broker.unsubscribe(self.subscription)
            self.subscription = None
