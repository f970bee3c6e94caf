"""The Store: one object per process that owns the engines, the writer and the migrations."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from lineup.protocol.errors import Unavailable
from lineup.store import eventlog
from lineup.store.engines import create_engines, parse_url
from lineup.store.eventlog import AppendResult, NewEvent, StoredEvent
from lineup.store.migrations import upgrade_head
from lineup.store.queries import Reader
from lineup.store.writer import (
    DEFAULT_MAX_BATCH,
    Clock,
    CommitListener,
    Writer,
    WriterStats,
    WriteTx,
)

T = TypeVar("T")


def system_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def database_url_from_env(
    home: Path | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """``LINEUP_DATABASE_URL`` if set, else SQLite in the LineUp home (created, private).

    The home is ``home`` if given, else ``LINEUP_HOME``, else ``~/.lineup``.
    """
    env = os.environ if environ is None else environ
    if url := env.get("LINEUP_DATABASE_URL"):
        return url
    if home is None:
        home = Path(env.get("LINEUP_HOME") or Path.home() / ".lineup")
    home = home.expanduser()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{home / 'lineup.db'}"


class Store:
    """Writes go through ``write`` (one writer, group commit); reads through ``reader``."""

    def __init__(
        self, url: URL, writer_engine: AsyncEngine, reader_engine: AsyncEngine, writer: Writer
    ) -> None:
        self.url = url
        self._writer_engine = writer_engine
        self._reader_engine = reader_engine
        self._writer = writer

    @classmethod
    async def open(
        cls,
        url: str | URL,
        *,
        clock: Clock = system_clock_ms,
        max_batch: int = DEFAULT_MAX_BATCH,
        read_pool_size: int = 4,
    ) -> Store:
        """Connect (failing fast with ``Unavailable``) and start the writer; does not migrate."""
        parsed = parse_url(url)
        writer_engine, reader_engine = create_engines(parsed, read_pool_size=read_pool_size)
        try:
            async with reader_engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except (DBAPIError, OSError) as exc:
            await writer_engine.dispose()
            await reader_engine.dispose()
            safe = parsed.render_as_string(hide_password=True)
            raise Unavailable(f"cannot reach the database at {safe}") from exc
        writer = Writer(writer_engine, clock=clock, max_batch=max_batch)
        writer.start()
        return cls(parsed, writer_engine, reader_engine, writer)

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.url.get_backend_name()

    async def migrate(self) -> None:
        """``alembic upgrade head``, in one transaction on the writer's connection."""
        async with self._writer_engine.begin() as conn:
            await conn.run_sync(upgrade_head)

    # --- writing ---------------------------------------------------------------------------

    async def write(self, fn: Callable[[WriteTx], Awaitable[T]]) -> T:
        """Run ``fn`` in the writer's next transaction; returns once that has committed.

        Cancelling the caller does not undo a job the writer has started: like an unacked
        send, its outcome is then unknown, and the envelope id makes a retry safe.
        """
        return await self._writer.submit(fn)

    async def append(self, event: NewEvent) -> AppendResult:
        """One event in its own job; to append several atomically, use ``write``."""
        return await self.write(lambda tx: tx.append(event))

    async def rebuild_projections(self) -> int:
        """Empty the projections and replay the whole log; returns the number of events."""
        return await self.write(lambda tx: eventlog.replay_all(tx.connection))

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        return self._writer.add_commit_listener(listener)

    @property
    def writer_stats(self) -> WriterStats:
        return replace(self._writer.stats)

    async def flush(self) -> None:
        await self._writer.flush()

    async def close(self) -> None:
        """Finish queued writes, then release every connection."""
        try:
            await self._writer.close()
        finally:
            await self._writer_engine.dispose()
            await self._reader_engine.dispose()

    # --- reading ---------------------------------------------------------------------------

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[Reader]:
        """One read transaction: every read through it sees the same snapshot."""
        async with self._reader_engine.connect() as conn, conn.begin():
            yield Reader(conn)

    async def read_events(
        self, workspace_id: str, after: int = 0, limit: int = 500
    ) -> list[StoredEvent]:
        async with self.reader() as r:
            return await r.read_events(workspace_id, after, limit)

    async def last_sequence(self, workspace_id: str) -> int:
        async with self.reader() as r:
            return await r.last_sequence(workspace_id)

    async def first_sequence(self, workspace_id: str) -> int | None:
        async with self.reader() as r:
            return await r.first_sequence(workspace_id)
