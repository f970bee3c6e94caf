"""How many of a workspace's agents' frames a node works on at once.

Each agent's connection keeps at most its own window of frames unanswered (the gateway stops
reading its socket beyond that); on top of that, all the agents of one workspace on a node
share one window. Without it, a workspace with many busy agents filled the writer's queue
with hundreds of frames per agent, and every other workspace's request waited behind the
batches they made. A connection waiting for a slot stops reading — the agent's frames wait
in its socket, nothing is refused, nothing is lost — and slots are handed over in the order
they were asked for, so the workspace's agents take turns. A workspace with nothing in
flight holds no entry.
"""

from __future__ import annotations

import asyncio
from collections import deque

WORKSPACE_IN_FLIGHT = 256
"""As much as one agent may have in flight alone (``agent_gateway.IN_FLIGHT``): a workspace's
agents together get what one of them could take, so a workspace of one agent runs as fast as
before, and a workspace of many cannot queue many times that ahead of everyone else. The
window is not work-conserving — it holds a workspace back even when nobody else is waiting —
so lowering it (``LINEUP_WORKSPACE_IN_FLIGHT``) trades that workspace's throughput for the
others' waits (docs/benchmarks.md)."""


class InFlight:
    """Counting slots per key, created when first taken and dropped when all are returned."""

    __slots__ = ("_held", "_waiting", "limit")

    def __init__(self, limit: int = WORKSPACE_IN_FLIGHT) -> None:
        self.limit = max(1, limit)
        self._held: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def held(self, key: str) -> int:
        return self._held.get(key, 0)

    def waiting(self, key: str) -> int:
        return len(self._waiting.get(key, ()))

    async def acquire(self, key: str) -> None:
        held = self._held.get(key, 0)
        if held < self.limit and key not in self._waiting:
            self._held[key] = held + 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(future)
        try:
            await future  # a release hands its slot over
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(key)  # handed over as the wait was cancelled: pass it on
            else:
                self._forget(key, future)
            raise

    def release(self, key: str) -> None:
        waiting = self._waiting.get(key)
        while waiting:
            future = waiting.popleft()
            if not waiting:
                del self._waiting[key]
            if not future.done():
                future.set_result(None)  # the slot goes to the next in line, still held
                return
            waiting = self._waiting.get(key)
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)

    def _forget(self, key: str, future: asyncio.Future[None]) -> None:
        waiting = self._waiting.get(key)
        if waiting is None:
            return
        try:
            waiting.remove(future)
        except ValueError:
            return
        if not waiting:
            del self._waiting[key]
