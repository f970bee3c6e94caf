"""Per-workspace ordering of the events a node fans out, whichever node committed them.

Several nodes commit to one workspace; the database orders them (the workspace row lock makes
the sequence), but their stream entries may arrive here out of that order, late, or not at
all. The sequencer hands the local broker each workspace's events in sequence order:

- the next expected sequence is published at once (the common case: no wait, no read);
- one that runs ahead is held for a moment (``hold``) while the missing ones arrive from the
  stream; if they do not, the node reads the hole from the database — one read for all its
  followers of that workspace — and publishes it in order;
- a periodic check (:meth:`check`) compares each followed workspace's ``last_sequence`` in
  the database with what was published here: a difference that outlives one check (an
  event the stream lost at the tail, Redis down) is read from the database the same way.

Only workspaces someone on this node follows are tracked. Followers still skip what they
have seen and heal holes themselves (``lineup.hub.follow``); the sequencer only saves them
the reads, and bounds how long a lost event can go unnoticed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from functools import partial

from lineup.hub.fanout import Broker
from lineup.store import Reader, Store, StoredEvent

log = logging.getLogger("lineup.hub.cluster")

PAGE = 1000
HELD_LIMIT = 20_000
CHECK_CHUNK = 500


class Sequencer:
    def __init__(
        self,
        store: Store,
        broker: Broker,
        *,
        hold: float = 0.05,
        on_fill: Callable[[int], None] | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.hold = hold
        self._on_fill = on_fill
        self._high: dict[str, int] = {}
        """Per workspace: the highest sequence published here, all before it included."""
        self._seen: dict[str, int] = {}
        """Per workspace: the highest sequence known to exist (offered, or in the database)."""
        self._held: dict[str, dict[int, StoredEvent]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._filling: dict[str, asyncio.Task[None]] = {}
        self._suspect: dict[str, int] = {}
        self.fills = 0

    # --- events in ------------------------------------------------------------------------

    def offer(self, events: Sequence[StoredEvent]) -> None:
        """Committed events, from this node's commits or the stream, in any order."""
        run: list[StoredEvent] = []
        run_ws: str | None = None
        for event in events:
            ws = event.workspace_id
            if run and ws != run_ws:
                self.broker.publish(run)
                run = []
            run_ws = ws
            if not self.broker.has_subscribers(ws):
                self._forget(ws)
                continue
            seq = event.sequence
            if seq > self._seen.get(ws, 0):
                self._seen[ws] = seq
            high = self._high.get(ws)
            if high is None or seq == high + 1:
                self._high[ws] = seq
                run.append(event)
                if self._held.get(ws):
                    self.broker.publish(run)
                    run = []
                    self._drain(ws)
            elif seq <= high:
                continue  # already published (the stream repeated it, or a fill read it)
            else:
                held = self._held.setdefault(ws, {})
                if len(held) < HELD_LIMIT:
                    held[seq] = event
                self._schedule(ws)
        if run:
            self.broker.publish(run)

    def _drain(self, ws: str) -> None:
        held = self._held.get(ws)
        if not held:
            return
        high = self._high[ws]
        out: list[StoredEvent] = []
        for seq in sorted(held):
            if seq <= high:
                del held[seq]
            elif seq == high + 1:
                out.append(held.pop(seq))
                high = seq
            else:
                break
        self._high[ws] = high
        if out:
            self.broker.publish(out)
        if held:
            self._schedule(ws)
        else:
            self._held.pop(ws, None)
            timer = self._timers.pop(ws, None)
            if timer is not None:
                timer.cancel()

    def _schedule(self, ws: str) -> None:
        if ws in self._timers or ws in self._filling:
            return
        loop = asyncio.get_running_loop()
        self._timers[ws] = loop.call_later(self.hold, self._hold_expired, ws)

    def _hold_expired(self, ws: str) -> None:
        self._timers.pop(ws, None)
        if self._held.get(ws):
            self.fill(ws)

    def _forget(self, ws: str) -> None:
        self._high.pop(ws, None)
        self._seen.pop(ws, None)
        self._held.pop(ws, None)
        self._suspect.pop(ws, None)
        timer = self._timers.pop(ws, None)
        if timer is not None:
            timer.cancel()

    # --- holes from the database ---------------------------------------------------------

    def fill(self, ws: str, until: int | None = None) -> None:
        """Read the hole after what was published here up to ``until`` (default: the highest
        sequence known) from the database, and publish it in order; once per workspace."""
        if until is not None and until > self._seen.get(ws, 0):
            self._seen[ws] = until
        if ws in self._filling:
            return
        task = asyncio.get_running_loop().create_task(self._fill(ws), name=f"lineup-fill-{ws}")
        self._filling[ws] = task
        task.add_done_callback(partial(self._filled, ws))

    def _filled(self, ws: str, _task: object = None) -> None:
        self._filling.pop(ws, None)
        if ws in self._high:
            self._drain(ws)

    def _base(self, ws: str) -> int | None:
        high = self._high.get(ws)
        return high if high is not None else self.broker.live_cursor(ws)

    async def _fill(self, ws: str) -> None:
        self.fills += 1
        try:
            while self.broker.has_subscribers(ws):
                base = self._base(ws)
                target = self._seen.get(ws, 0)
                if base is None or base >= target:
                    return
                page = await self.store.read_events(ws, after=base, limit=PAGE)
                if not page:
                    return
                published = [e for e in page if e.sequence > self._high.get(ws, base)]
                if published:
                    self._high[ws] = published[-1].sequence
                    if self._on_fill is not None:
                        self._on_fill(len(published))
                    self.broker.publish(published)
                if len(page) < PAGE and page[-1].sequence >= target:
                    return
        except Exception:
            log.exception("could not read the hole in %s from the database", ws)
            # Followers heal holes themselves; hand them what is held, in order.
            held = self._held.pop(ws, {})
            if held:
                ordered = [held[s] for s in sorted(held)]
                self._high[ws] = ordered[-1].sequence
                self.broker.publish(ordered)

    async def check(self, *, immediate: bool) -> None:
        """Compare the database's ``last_sequence`` of every followed workspace with what was
        published here; fill a difference that persisted since the previous check (or at once
        when ``immediate``: the stream is down, nothing else will bring the events)."""
        followed = self.broker.workspaces()
        if not followed:
            self._suspect.clear()
            return
        lasts: dict[str, int] = {}
        for start in range(0, len(followed), CHECK_CHUNK):
            chunk = followed[start : start + CHECK_CHUNK]
            lasts.update(await self.store.read(partial(Reader.last_sequences, ids=chunk)))
        suspects: dict[str, int] = {}
        for ws, db_last in lasts.items():
            base = self._base(ws)
            if base is None or db_last <= base:
                continue
            previous = self._suspect.get(ws)
            if immediate or (previous is not None and base < previous):
                self.fill(ws, until=db_last)
            else:
                suspects[ws] = db_last
        self._suspect = suspects
