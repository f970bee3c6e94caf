"""The Store: one object per process that owns the engines, the writer and the migrations."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import DBAPIError

from lineup.protocol.errors import Unavailable
from lineup.protocol.times import now_ms
from lineup.store import append_buffer, eventlog
from lineup.store.engines import Backend, PostgresBackend, create_backend, parse_url, ping
from lineup.store.eventlog import AppendResult, NewEvent, StoredEvent
from lineup.store.migrations import upgrade_head
from lineup.store.queries import RawEvent, Reader
from lineup.store.write_locks import scope_of
from lineup.store.writer import (
    DEFAULT_BATCH_SLICE,
    DEFAULT_MAX_BATCH,
    DEFAULT_SHARDS,
    LOOP_TURN_EVERY,
    SHARED_FACTS,
    Clock,
    CommitListener,
    Writer,
    WriterStats,
    WriteTx,
)

T = TypeVar("T")


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
    return f"sqlite:///{home / 'lineup.db'}"


class Store:
    """Writes go through ``write`` (the writer: group commit, sharded by workspace); reads
    through ``read``."""

    def __init__(self, url: URL, backend: Backend, writer: Writer) -> None:
        self.url = url
        self._backend = backend
        self._writer = writer

    @classmethod
    async def open(
        cls,
        url: str | URL,
        *,
        clock: Clock = now_ms,
        max_batch: int = DEFAULT_MAX_BATCH,
        read_pool_size: int = 4,
        writer_connections: int = DEFAULT_SHARDS,
        batch_slice: float = DEFAULT_BATCH_SLICE,
        loop_turn_every: float = LOOP_TURN_EVERY,
    ) -> Store:
        """Connect (failing fast with ``Unavailable``) and start the writer; does not migrate.

        ``writer_connections`` is the writer's shards on PostgreSQL (SQLite has one writer);
        ``batch_slice`` how long a batch runs before it commits early for another workspace,
        ``loop_turn_every`` how long it runs between two turns it gives the event loop on
        PostgreSQL (``lineup.store.writer``)."""
        parsed = parse_url(url)
        backend = create_backend(
            parsed, read_pool_size=read_pool_size, writer_connections=writer_connections
        )
        try:
            await backend.run_reader(ping)
        except (DBAPIError, OSError) as exc:
            await backend.dispose()
            safe = parsed.render_as_string(hide_password=True)
            raise Unavailable(f"cannot reach the database at {safe}") from exc
        if isinstance(backend, PostgresBackend):
            append_buffer.flush_before_statements(backend.writer.sync_engine)
        writer = Writer(
            backend.run_writer,
            clock=clock,
            max_batch=max_batch,
            shards=backend.writer_connections,
            batch_slice=batch_slice,
            loop_turn_every=loop_turn_every,
        )
        writer.start()
        return cls(parsed, backend, writer)

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.url.get_backend_name()

    async def migrate(self) -> None:
        """``alembic upgrade head``, in one transaction on the writer's connection."""

        def upgrade(conn: Connection) -> None:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    # hub nodes started together migrate one at a time
                    conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7320518)")
                upgrade_head(conn)

        await self._backend.run_writer(upgrade)

    # --- writing ---------------------------------------------------------------------------

    def write(
        self,
        fn: Callable[[WriteTx], T],
        lane: Hashable | None = None,
        *,
        workspace: str | None = None,
        workspaces: Iterable[str] | None = None,
        brief: bool = False,
    ) -> Awaitable[T]:
        """Run ``fn`` in the writer's next transaction; the result resolves once that committed.

        ``fn`` is a plain (synchronous) function of the transaction, run by the writer
        (SQLite: on its thread, or on the event loop's for a ``brief`` batch; PostgreSQL: on
        the loop, through the driver). It must be re-runnable: the writer may roll a
        batch back and run it again (see ``lineup.store.writer``), so ``fn`` must be a pure
        function of the transaction — no effects outside it, no state carried between runs.
        It must not call ``write`` (refused with ``RuntimeError``).

        Cancelling the caller does not undo a job the writer has started: like an unacked
        send, its outcome is then unknown, and the envelope id makes a retry safe.

        Jobs of one ``lane`` (say, one agent's connection) run in order and share the writer
        fairly with other lanes; without one, the job is a lane of its own.

        ``workspace`` / ``workspaces`` name every workspace ``fn`` writes, and then it writes
        nothing else (appending elsewhere is refused): it runs beside other workspaces' jobs,
        on this node and others. A job that names none may write anything — users, sessions,
        rows of several workspaces it cannot name up front — and runs alone in the cluster
        (``lineup.store.write_locks``).

        ``brief`` says ``fn`` is a few statements, bounded by what one frame carries (an
        agent's report): a batch of a few such jobs may run on the event loop's own thread
        (SQLite), with no hand-over to the writer's thread.
        """
        return self._writer.submit(fn, lane, scope_of(workspace, workspaces), brief=brief)

    async def append(self, event: NewEvent) -> AppendResult:
        """One event in its own job; to append several atomically, use ``write``."""
        shared = event.type in SHARED_FACTS
        workspace = None if shared else event.workspace_id
        return await self.write(lambda tx: tx.append(event), workspace=workspace)

    async def rebuild_projections(self) -> int:
        """Empty the projections and replay the whole log; returns the number of events.
        Refused (``conflict``) once a workspace's log was compacted: its projections are then
        the only full record of its past."""
        return await self.write(lambda tx: eventlog.replay_all(tx.connection))

    def add_commit_listener(self, listener: CommitListener) -> Callable[[], None]:
        return self._writer.add_commit_listener(listener)

    @property
    def writer_shards(self) -> int:
        """Writer transactions this node runs at once (one on SQLite)."""
        return self._writer.shards

    @property
    def writer_stats(self) -> WriterStats:
        return replace(self._writer.stats)

    @property
    def writer_queued(self) -> int:
        """Write jobs waiting for the writer's next batch."""
        return self._writer.queued

    def writer_queued_for(self, workspace_id: str) -> int:
        """Write jobs of one workspace waiting for the writer's next batch."""
        return self._writer.queued_for(workspace_id)

    async def flush(self) -> None:
        await self._writer.flush()

    async def close(self) -> None:
        """Finish queued writes, then release every connection."""
        try:
            await self._writer.close()
        finally:
            await self._backend.dispose()

    # --- reading ---------------------------------------------------------------------------

    async def read(self, fn: Callable[[Reader], T], *, brief: bool = False) -> T:
        """``fn(reader)`` in one read transaction: every read through it sees one snapshot.

        ``fn`` is synchronous and runs away from the event loop (SQLite: in a reader thread);
        keep it to reads.

        ``brief``: ``fn`` is a lookup or two by key (a session, a membership, one row) that
        needs no snapshot in common. It then runs where it costs least under load: on SQLite
        on the event loop's thread, with no hop to a reader thread; on PostgreSQL without a
        transaction, with no round trips for BEGIN and COMMIT (``engines``). Never for a
        read whose size a caller decides: it would hold the event loop for as long.
        """
        return await self._backend.run_reader(lambda conn: fn(Reader(conn)), brief=brief)

    async def read_events(
        self, workspace_id: str, after: int = 0, limit: int = 500
    ) -> list[StoredEvent]:
        return await self.read(lambda r: r.read_events(workspace_id, after, limit))

    async def read_raw_events(
        self, workspace_id: str, after: int = 0, limit: int = 500
    ) -> list[RawEvent]:
        return await self.read(lambda r: r.read_raw_events(workspace_id, after, limit))

    async def last_sequence(self, workspace_id: str) -> int:
        return await self.read(lambda r: r.last_sequence(workspace_id))

    async def log_horizon(self, workspace_id: str) -> int:
        return await self.read(lambda r: r.log_horizon(workspace_id))

    async def first_sequence(self, workspace_id: str) -> int | None:
        return await self.read(lambda r: r.first_sequence(workspace_id))
