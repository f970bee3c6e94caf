"""In-process fan-out of committed events to the connections that follow a workspace.

Events are published only after their transaction committed, in sequence order. A subscriber
that cannot keep up is not allowed to grow without bound: its queue overflows, it is marked
lagging, and its follower catches up from the database — the log stays the source of truth.

A subscription either queues what it is offered or hands it to a callback. With 10,000 idle
agents connected, a queue per connection was 3 KiB of mostly empty deques, and a task per
connection waiting on it woke for every event of the workspace only to drop it; a callback
(``lineup.hub.follow``) drops what is not the connection's business without either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lineup.store import StoredEvent

QUEUE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Ephemeral:
    """A live-only frame (a streamed text delta): not in the log, lost if nobody listens."""

    workspace_id: str
    frame: dict[str, Any]


Item = StoredEvent | Ephemeral
Deliver = Callable[[Item], None]
"""Takes one offered item, synchronously, inside the publisher's call: it must not block."""


class Subscription:
    # slots: one of these lives as long as each connection (10,000 idle agents)
    __slots__ = ("_deliver", "_queue", "cursor", "lagging", "live", "workspace_id")

    def __init__(self, workspace_id: str, deliver: Deliver | None = None) -> None:
        self.workspace_id = workspace_id
        self._deliver = deliver
        self._queue: asyncio.Queue[Item] | None = None
        self.lagging = False
        # the follower's position, so a node can heal a hole for its followers
        self.cursor = 0
        self.live = False

    @property
    def queue(self) -> asyncio.Queue[Item]:
        """What was offered, for a subscription without a callback (made when first used)."""
        if self._queue is None:
            self._queue = asyncio.Queue(QUEUE_LIMIT)
        return self._queue

    def offer(self, item: Item) -> None:
        if self.lagging:
            return
        if self._deliver is not None:
            self._deliver(item)
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.lagging = True


class FanoutObserver(Protocol):
    """Metrics hooks (``lineup.hub.metrics``); the broker works without one."""

    def delivered(self, event: StoredEvent) -> None: ...
    def replayed(self, count: int) -> None: ...


class Broker:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}
        self.published = 0
        self.observer: FanoutObserver | None = None
        self.ephemeral_forward: Callable[[str, dict[str, Any]], None] | None = None
        """Called with every ephemeral frame published here, to carry it to other nodes."""

    def subscribe(self, workspace_id: str, deliver: Deliver | None = None) -> Subscription:
        """Follow ``workspace_id``: offered items go to ``deliver``, or else to the queue."""
        subscription = Subscription(workspace_id, deliver)
        self._subscribers.setdefault(workspace_id, set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.workspace_id)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[subscription.workspace_id]

    def publish(self, events: Sequence[StoredEvent]) -> None:
        for event in events:
            self.published += 1
            for subscription in self._subscribers.get(event.workspace_id, ()):
                subscription.offer(event)

    def publish_ephemeral(
        self, workspace_id: str, frame: dict[str, Any], *, forward: bool = True
    ) -> None:
        item = Ephemeral(workspace_id, frame)
        for subscription in self._subscribers.get(workspace_id, ()):
            subscription.offer(item)
        if forward and self.ephemeral_forward is not None:
            self.ephemeral_forward(workspace_id, frame)

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())

    def has_subscribers(self, workspace_id: str) -> bool:
        return workspace_id in self._subscribers

    def workspaces(self) -> list[str]:
        """The workspaces someone on this node follows."""
        return list(self._subscribers)

    def live_cursor(self, workspace_id: str) -> int | None:
        """The lowest position of the live followers of ``workspace_id`` (None: none live)."""
        cursors = [s.cursor for s in self._subscribers.get(workspace_id, ()) if s.live]
        return min(cursors) if cursors else None
