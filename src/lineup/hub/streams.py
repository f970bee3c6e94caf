"""Committed events between hub nodes over Redis Streams (seed 001 §9.1; DESIGN "Realtime").

Every node appends what it committed to one stream, ``lineup:events`` (an entry per commit
batch, after COMMIT, from the store's commit listener), and reads everyone's entries with a
blocking ``XREAD``; entries a node wrote itself are skipped (it published them locally at
commit). Ephemeral frames (``message.delta``) ride the same stream, best effort.

Redis is a fast path, not the truth: an entry may be lost (Redis restarted, the stream was
trimmed, the node was cut off) and then the node's sequencer notices the hole and reads it
from the database (:mod:`lineup.hub.cluster.sequencer`). Publishing never blocks a commit and
never fails one: while Redis is down, events are counted as dropped and the other nodes
catch up from the database; the reader reconnects with a backoff and resumes at the stream's
end (what it missed meanwhile is in the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from lineup.protocol.times import now_ms
from lineup.store import StoredEvent

log = logging.getLogger("lineup.hub.streams")

STREAM = "lineup:events"
MAXLEN = 20_000
"""Entries kept (approximately); an entry is one commit batch, so usually far more events."""
READ_COUNT = 1000
BLOCK_MS = 1000
OUTBOX_LIMIT = 10_000
"""Entries waiting for Redis beyond this are dropped: other nodes read them from the database."""
RECONNECT_DELAYS = (0.05, 0.1, 0.25, 0.5, 1.0)


def encode_events(events: Sequence[StoredEvent]) -> str:
    return json.dumps(
        [
            [
                e.workspace_id,
                e.sequence,
                e.id,
                e.type,
                e.actor,
                e.payload,
                e.occurred_at,
                e.recorded_at,
                e.conversation_id,
                e.task_id,
                e.correlation_id,
            ]
            for e in events
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode_events(raw: str | bytes) -> list[StoredEvent]:
    return [
        StoredEvent(
            workspace_id=ws,
            sequence=seq,
            id=id_,
            type=type_,
            actor=actor,
            payload=payload,
            occurred_at=occurred,
            recorded_at=recorded,
            conversation_id=conversation,
            task_id=task,
            correlation_id=correlation,
        )
        for (
            ws,
            seq,
            id_,
            type_,
            actor,
            payload,
            occurred,
            recorded,
            conversation,
            task,
            correlation,
        ) in json.loads(raw)
    ]


class StreamBus:
    """This node's end of the stream: ``publish`` (sync, at commit) and a reader task."""

    def __init__(
        self,
        url: str,
        instance: str,
        *,
        on_events: Callable[[list[StoredEvent]], None],
        on_ephemeral: Callable[[str, dict[str, Any]], None],
        on_recovered: Callable[[], None],
        on_received: Callable[[list[StoredEvent]], None] | None = None,
        on_dropped: Callable[[int], None] | None = None,
        stream: str = STREAM,
        maxlen: int = MAXLEN,
    ) -> None:
        self.url = url
        self.instance = instance
        self.stream = stream
        self.maxlen = maxlen
        self._on_events = on_events
        self._on_ephemeral = on_ephemeral
        self._on_recovered = on_recovered
        self._on_received = on_received
        self._on_dropped = on_dropped
        self._outbox: list[dict[str, str]] = []
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.writer_ok = True
        self.reader_ok = False
        self.dropped_events = 0
        self.last_lag_ms: int | None = None

    @property
    def healthy(self) -> bool:
        return self.writer_ok and self.reader_ok

    def _client(self) -> Redis:
        return Redis.from_url(
            self.url,
            socket_timeout=(BLOCK_MS / 1000) + 5,
            socket_connect_timeout=2,
            retry=Retry(NoBackoff(), 1),
        )

    async def start(self) -> None:
        self._writer = self._client()
        self._reader = self._client()
        self._tasks = [
            asyncio.create_task(self._write_loop(), name="lineup-stream-writer"),
            asyncio.create_task(self._read_loop(), name="lineup-stream-reader"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        for client in (self._writer, self._reader):
            with contextlib.suppress(Exception):
                await client.aclose()

    # --- publishing (called on the event loop, must not block) ------------------------------

    def publish(self, events: Sequence[StoredEvent]) -> None:
        if events:
            self._put({"o": self.instance, "k": "e", "e": encode_events(events)}, len(events))

    def publish_ephemeral(self, workspace_id: str, frame: dict[str, Any]) -> None:
        body = json.dumps(frame, separators=(",", ":"), ensure_ascii=False)
        self._put({"o": self.instance, "k": "d", "w": workspace_id, "f": body}, 0)

    def _put(self, fields: dict[str, str], events: int) -> None:
        if len(self._outbox) >= OUTBOX_LIMIT:
            self._dropped(events)
            return
        fields["n"] = str(events)
        self._outbox.append(fields)
        self._wake.set()

    def _dropped(self, events: int) -> None:
        if events:
            self.dropped_events += events
            if self._on_dropped is not None:
                self._on_dropped(events)

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            entries, self._outbox = self._outbox, []
            if not entries:
                continue
            try:
                pipe = self._writer.pipeline(transaction=False)
                for fields in entries:
                    pipe.xadd(self.stream, fields, maxlen=self.maxlen, approximate=True)  # type: ignore[arg-type]
                await pipe.execute()
            except (RedisError, OSError) as exc:
                if self.writer_ok:
                    log.warning("cannot publish to Redis (%r); other nodes read the database", exc)
                self.writer_ok = False
                self._dropped(sum(int(f["n"]) for f in entries))
                continue
            if not self.writer_ok:
                log.info("publishing to Redis again")
                self.writer_ok = True

    # --- reading -------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        failures = 0
        last_id: str | None = None
        while True:
            try:
                if last_id is None:
                    # (Re)connected: start at the stream's end; the database has the rest.
                    tail: Any = await self._reader.xrevrange(self.stream, count=1)
                    last_id = _text(tail[0][0]) if tail else "0-0"
                    if not self.reader_ok:
                        self.reader_ok = True
                        if failures:
                            log.info("reading from Redis again")
                        failures = 0
                        self._on_recovered()
                response = await self._reader.xread(
                    {self.stream: last_id}, count=READ_COUNT, block=BLOCK_MS
                )
            except (RedisError, OSError) as exc:
                if self.reader_ok:
                    log.warning("lost the Redis stream (%r); catching up from the database", exc)
                self.reader_ok = False
                last_id = None
                delay = RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)]
                failures += 1
                await asyncio.sleep(delay)
                continue
            streams: list[Any] = list(response or ())
            for _stream, entries in streams:
                for entry_id, fields in entries:
                    last_id = _text(entry_id)
                    try:
                        self._handle(fields)
                    except Exception:
                        log.exception("bad stream entry %s", last_id)

    def _handle(self, fields: dict[bytes, bytes]) -> None:
        if fields.get(b"o", b"").decode() == self.instance:
            return
        kind = fields.get(b"k")
        if kind == b"e":
            events = decode_events(fields[b"e"])
            if events:
                self.last_lag_ms = max(0, now_ms() - events[-1].recorded_at)
                if self._on_received is not None:
                    self._on_received(events)
                self._on_events(events)
        elif kind == b"d":
            self._on_ephemeral(fields[b"w"].decode(), json.loads(fields[b"f"]))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
