"""The ``leases`` table: named leases that one hub node holds at a time, until they expire.

Which leases a node wants, how often it renews them and when it trusts them is the hub's
business (:mod:`lineup.hub.leases`); here is only how a row is taken, renewed, read and given
back. A row changes only where it is the renewer's own or has expired, so of two nodes racing
for a lease the database's row lock lets one win, and two inserts of a new lease collide on
its primary key.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import case, delete, insert, or_, select, update
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import IntegrityError

from lineup.store.engines import create_backend
from lineup.store.schema import leases


def take(conn: Connection, names: list[str], holder: str, now_ms: int, ttl_ms: int) -> set[str]:
    """Take or renew ``names`` for ``holder`` until ``now_ms + ttl_ms``; the names taken."""
    taken: set[str] = set()
    for name in names:
        renewed = conn.execute(
            update(leases)
            .where(
                leases.c.name == name, or_(leases.c.holder == holder, leases.c.expires_at <= now_ms)
            )
            .values(
                holder=holder,
                acquired_at=case((leases.c.holder == holder, leases.c.acquired_at), else_=now_ms),
                expires_at=now_ms + ttl_ms,
            )
        )
        if renewed.rowcount == 1:
            taken.add(name)
            continue
        if conn.execute(select(leases.c.name).where(leases.c.name == name)).first() is not None:
            continue  # another node's, and not expired
        try:
            with conn.begin_nested():
                conn.execute(
                    insert(leases).values(
                        name=name, holder=holder, acquired_at=now_ms, expires_at=now_ms + ttl_ms
                    )
                )
        except IntegrityError:
            continue  # another node inserted it first
        taken.add(name)
    return taken


def release(conn: Connection, names: list[str], holder: str) -> None:
    """Give back those of ``names`` that ``holder`` holds."""
    conn.execute(delete(leases).where(leases.c.name.in_(names), leases.c.holder == holder))


def expiries(conn: Connection, names: list[str]) -> dict[str, int]:
    """``expires_at`` of each named lease that has a row (absent: released or never taken)."""
    if not names:
        return {}
    stmt = select(leases.c.name, leases.c.expires_at).where(leases.c.name.in_(names))
    return {row.name: row.expires_at for row in conn.execute(stmt)}


class OwnConnection:
    """A writer connection of its own, beside the store's writer and its queue: a renewal
    that waited behind a busy node's batches would make a live node look dead to the others.
    Open it on the event loop that will use it."""

    def __init__(self, url: URL) -> None:
        self._backend = create_backend(url, read_pool_size=1)

    async def take(
        self, names: list[str], holder: str, now_ms: Callable[[], int], ttl_ms: int
    ) -> set[str]:
        """:func:`take` in a transaction of its own; ``now_ms`` is read inside it."""

        def in_transaction(conn: Connection) -> set[str]:
            with conn.begin():
                return take(conn, names, holder, now_ms(), ttl_ms)

        return await self._backend.run_writer(in_transaction)

    async def close(self) -> None:
        await self._backend.dispose()
