"""In-process fan-out of committed events to the connections that follow a workspace.

Events are published only after their transaction committed, in sequence order. A subscriber
that cannot keep up is not allowed to grow without bound: its queue overflows, it is marked
lagging, and its follower catches up from the database — the log stays the source of truth.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lineup.store import StoredEvent

QUEUE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Ephemeral:
    """A live-only frame (a streamed text delta): not in the log, lost if nobody listens."""

    workspace_id: str
    frame: dict[str, Any]


Item = StoredEvent | Ephemeral


@dataclass(eq=False)
class Subscription:
    workspace_id: str
    queue: asyncio.Queue[Item] = field(default_factory=lambda: asyncio.Queue(QUEUE_LIMIT))
    lagging: bool = False

    def offer(self, item: Item) -> None:
        if self.lagging:
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.lagging = True


class Broker:
    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}
        self.published = 0

    def subscribe(self, workspace_id: str) -> Subscription:
        subscription = Subscription(workspace_id)
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

    def publish_ephemeral(self, workspace_id: str, frame: dict[str, Any]) -> None:
        item = Ephemeral(workspace_id, frame)
        for subscription in self._subscribers.get(workspace_id, ()):
            subscription.offer(item)

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._subscribers.values())
