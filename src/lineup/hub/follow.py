"""Replay-then-live delivery of a workspace's log, in order, with no gaps and no repeats.

The follower subscribes *before* it reads the database, so nothing committed during the replay
is missed; it then skips what it already sent and backfills any hole from the database. The
same code serves people's apps (every event) and agents (their downlink only).

Live items reach the follower through the broker's callback. What needs no await — an event
already sent, or one that ``relevant`` says is not this connection's business — is settled in
the callback; anything to send (or a hole to fill from the database) starts a task that ends
once it has caught up. An idle agent's connection thus holds no task and no queue: with 10,000
of them on a node, the task and the queue each connection used to keep cost some 5 KiB apiece,
and every event woke 100 followers of its workspace to drop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from lineup.hub.fanout import QUEUE_LIMIT, Broker, Ephemeral, Item, Subscription
from lineup.store import RawEvent, Store, StoredEvent

log = logging.getLogger("lineup.hub.follow")

PAGE = 1000

SendEvent = Callable[[StoredEvent], Awaitable[bool | None]]
"""Sends one event; may return False when it chose not to (not the agent's business)."""
SendPage = Callable[[list[RawEvent]], Awaitable[None]]
"""Sends a page of the log read back, in order (each payload still its stored JSON text)."""
SendEphemeral = Callable[[Ephemeral], Awaitable[None]]
Relevant = Callable[[StoredEvent], bool]
"""False when ``send`` would surely decline the event: it is then skipped without an await.
Must never be False for an event ``send`` acts upon."""


class Follower:
    # slots: one per connection, for the connection's life (10,000 idle agents)
    __slots__ = (
        "_pending",
        "_relevant",
        "_send",
        "_send_ephemeral",
        "_send_page",
        "_started",
        "_stopped",
        "_task",
        "broker",
        "last",
        "replayed",
        "store",
        "subscription",
        "workspace_id",
    )

    def __init__(
        self,
        store: Store,
        broker: Broker,
        workspace_id: str,
        after: int,
        send: SendEvent,
        send_ephemeral: SendEphemeral | None = None,
        *,
        relevant: Relevant | None = None,
        send_page: SendPage | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.workspace_id = workspace_id
        self.last = after
        self._send = send
        self._send_ephemeral = send_ephemeral
        self._relevant = relevant
        self._send_page = send_page
        self.subscription: Subscription | None = None
        self.replayed = 0
        # live items not yet handled: made when needed, dropped once drained
        self._pending: deque[Item] | None = None
        self._started = False
        self._task: asyncio.Task[None] | None = None
        self._stopped: asyncio.Future[None] | None = None

    async def replay(self) -> int:
        """Subscribe, then send everything committed after the cursor; return the cursor.
        What is published meanwhile waits for :meth:`start`."""
        if self.subscription is None:
            self._subscribe()
        before = self.replayed
        await self._backfill(until=None)
        if self.broker.observer is not None:
            self.broker.observer.replayed(self.replayed - before)
        return self.last

    async def _backfill(self, until: int | None) -> None:
        if self._send_page is not None:
            await self._backfill_pages(until)
            return
        # the next page is read while this one is sent (100,000 missed events are
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

    async def _backfill_pages(self, until: int | None) -> None:
        """:meth:`_backfill` a page at a time, for ``send_page``: a replay to a person's app
        writes each stored payload's text into its frame as it is, and (when the app takes
        them) many frames a message; the frame built per event and written per message was
        most of the time an app that missed 100,000 events waited."""
        send_page = self._send_page
        assert send_page is not None
        read = self.store.read_raw_events
        ahead: asyncio.Future[list[RawEvent]] | None = None
        try:
            while until is None or self.last < until:
                if ahead is not None:
                    page, ahead = await ahead, None
                else:
                    page = await read(self.workspace_id, after=self.last, limit=PAGE)
                full = len(page) == PAGE
                if full and (until is None or page[-1].sequence < until):
                    ahead = asyncio.ensure_future(
                        read(self.workspace_id, after=page[-1].sequence, limit=PAGE)
                    )
                last = self.last
                if page and page[0].sequence <= last:
                    page = [raw for raw in page if raw.sequence > last]
                past = until is not None and bool(page) and page[-1].sequence > until
                if until is not None and past:
                    page = [raw for raw in page if raw.sequence <= until]
                if page:
                    self.last = page[-1].sequence
                    if self.subscription is not None:
                        self.subscription.cursor = self.last
                    await send_page(page)
                    self.replayed += len(page)
                if past or not full:
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
        if self.subscription is not None:
            self.subscription.cursor = event.sequence
        if self._relevant is not None and not self._relevant(event):
            return False
        return await self._send(event)

    def start(self) -> None:
        """Deliver live items from now on, until :meth:`close`: the end of a replay, or
        everything after the cursor when there was none."""
        subscription = self.subscription
        if subscription is None:
            subscription = self._subscribe()
            subscription.lagging = True  # the catch-up reads everything after the cursor
        self._started = True
        subscription.live = not subscription.lagging
        if self._pending or subscription.lagging:
            self._spawn()

    async def live(self) -> None:
        """Forward live events until cancelled, or until sending fails (raising its error):
        :meth:`start` for a caller that wants a task to stand for the follower's life."""
        if self.subscription is None:
            await self.replay()
        stopped = self._stopped = asyncio.get_running_loop().create_future()
        self.start()
        try:
            await stopped
        finally:
            await self.stop()

    def _subscribe(self) -> Subscription:
        subscription = self.subscription = self.broker.subscribe(self.workspace_id, self._offer)
        subscription.cursor = self.last
        return subscription

    def _offer(self, item: Item) -> None:
        """The broker's callback, inside its publish: must not block nor raise."""
        subscription = self.subscription
        if subscription is None:
            return
        if self._task is None and self._started and not self._pending:
            # nothing ahead of this item: settle it here when that needs no await
            if isinstance(item, Ephemeral):
                if self._send_ephemeral is None:
                    return
            else:
                sequence = item.sequence
                if sequence <= self.last:
                    return
                if sequence == self.last + 1 and self._relevant is not None:
                    try:
                        wanted = self._relevant(item)
                    except Exception:
                        log.exception("follower filter failed; sending the event")
                        wanted = True
                    if not wanted:
                        self.last = sequence
                        subscription.cursor = sequence
                        return
        pending = self._pending
        if pending is None:
            pending = self._pending = deque()
        elif len(pending) >= QUEUE_LIMIT:
            # too far behind to buffer: drop it all and catch up from the database
            self._pending = None
            subscription.lagging = True
            return
        pending.append(item)
        if self._started and self._task is None:
            self._spawn()

    def _spawn(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        """Send what is pending, healing gaps from the database; end when caught up."""
        observer = self.broker.observer
        try:
            while (subscription := self.subscription) is not None:
                if subscription.lagging:
                    subscription.lagging = False
                    subscription.live = False
                    self._pending = None  # all of it is in the database, read next
                    await self._backfill(until=None)
                    subscription.live = True
                    continue
                pending = self._pending
                if not pending:
                    self._pending = None
                    return
                item = pending.popleft()
                if isinstance(item, Ephemeral):
                    if self._send_ephemeral is not None:
                        await self._send_ephemeral(item)
                    continue
                if item.sequence <= self.last:
                    continue
                if item.sequence > self.last + 1:
                    await self._backfill(until=item.sequence - 1)
                sent = await self._deliver(item)
                if observer is not None and sent is not False:
                    observer.delivered(item)  # commit → written to the socket
        except Exception as exc:
            # the socket went under a send: stop following (its reader ends the connection)
            log.debug("follower of %s stopped: %r", self.workspace_id, exc)
            stopped = self._stopped
            if stopped is not None and not stopped.done():
                stopped.set_exception(exc)
            self.close()
        finally:
            if self._task is asyncio.current_task():
                self._task = None

    def close(self) -> None:
        """Stop following at once (a send under way is cancelled)."""
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        self._pending = None
        if self.subscription is not None:
            self.broker.unsubscribe(self.subscription)
            self.subscription = None
        stopped = self._stopped
        if stopped is not None and not stopped.done():
            stopped.set_result(None)

    async def stop(self) -> None:
        """:meth:`close`, then wait until a cancelled send has let go of the socket."""
        task = self._task
        self.close()
        if task is not None and task is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([task])
