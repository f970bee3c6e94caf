"""What a write job writes, and the locks that let writer transactions run side by side.

A job names the workspaces it writes (its scope), or none, and then it may write anything: its
scope is ``GLOBAL``. On PostgreSQL each writer transaction first takes, in one statement and
always in this order, transaction-level advisory locks:

1. the global key, *shared* when every job of the batch named its workspaces, *exclusive*
   when one did not;
2. with a shared global key, each named workspace's key, *exclusive*, in ascending key order.

Transactions of different workspaces therefore commit in parallel, on one node's several
writer connections and across nodes; two that share a workspace queue on its key; a global
job waits for every transaction in flight and holds off the rest until it commits, which is
what made the old single lock row safe, now only for the jobs that need it. Every transaction
takes all its keys up front and in one order, so they cannot deadlock on them, and a
transaction only ever touches the rows of the workspaces whose keys it holds (or holds the
global key alone): the workspace rows' counters — and so the sequences — see one writer at a
time, and a rolled-back append leaves no gap. The locks end with the transaction.

Two workspaces whose keys collide (32-bit digests) merely serialise. SQLite has one writer
(``BEGIN IMMEDIATE``) and needs none of this.

The locks go with the transaction's ``BEGIN``, in one round trip (``WriterConnection``), and
with them a check of the workspaces' counters the writer last committed: when no one else
moved them since, the batch need not read them (``Counters``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from sqlalchemy import Integer, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection
from sqlalchemy.util import await_only

from lineup.store import statements
from lineup.store.engines import writer_connection

Scope = frozenset[str] | None
"""The workspaces a job writes, or ``GLOBAL`` (``None``): anything, including rows that
workspaces share (users, sessions, notification state, the cluster's leases)."""

GLOBAL: Scope = None

GLOBAL_CLASS = 0x4C55_0001
WORKSPACE_CLASS = 0x4C55_0002
"""First halves of the two-key advisory locks (apart from the single-key ones, such as the
migration lock, by PostgreSQL's design)."""


def scope_of(workspace: str | None = None, workspaces: Iterable[str] | None = None) -> Scope:
    """The scope a caller declared: its workspace(s), or ``GLOBAL`` when it named none."""
    named = set(workspaces or ())
    if workspace is not None:
        named.add(workspace)
    return frozenset(named) if named else GLOBAL


def union(scopes: Iterable[Scope]) -> Scope:
    """What a batch of jobs writes: ``GLOBAL`` if any one of them is."""
    together: set[str] = set()
    for scope in scopes:
        if scope is None:
            return GLOBAL
        together |= scope
    return frozenset(together)


def workspace_key(workspace_id: str) -> int:
    """The second half of a workspace's advisory lock: a stable signed 32-bit digest."""
    digest = hashlib.blake2b(workspace_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


_EXCLUSIVE_GLOBAL = text("SELECT pg_advisory_xact_lock(:global_class, 0)").bindparams(
    global_class=GLOBAL_CLASS
)
_WORKSPACES = text(
    "SELECT pg_advisory_xact_lock_shared(:global_class, 0), "
    "(SELECT count(pg_advisory_xact_lock(:workspace_class, k)) "
    " FROM (SELECT unnest(:keys) AS k ORDER BY 1) AS ordered)"
).bindparams(
    bindparam("keys", type_=ARRAY(Integer)),
    global_class=GLOBAL_CLASS,
    workspace_class=WORKSPACE_CLASS,
)


Counters = Mapping[str, tuple[int, int]]
"""Workspaces' counters: the last event's sequence and recorded time."""

_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_NO_ROWS = "SELECT 0"


def take(conn: Connection, scope: Scope, known: Counters | None = None) -> bool:
    """Take the batch's locks, first thing in its transaction (PostgreSQL only): on the
    writer's connection before anything began, together with its ``BEGIN``.

    ``known``: counters of every workspace of ``scope`` as they were when this writer last
    committed; then returns whether the workspaces' rows, once locked, still hold exactly
    those (no one else wrote since), so the batch can count on from them. ``False`` when
    it did not check."""
    if conn.dialect.name != "postgresql":
        return False
    raw = conn.connection.dbapi_connection
    driver = writer_connection(conn)
    if raw is None or driver is None or raw._started:
        if scope is None:
            statements.run(conn, _EXCLUSIVE_GLOBAL)
        else:
            keys = sorted({workspace_key(w) for w in scope})
            statements.run(conn, _WORKSPACES, {"keys": keys})
        return False
    check = known is not None and scope is not None and all(map(_PLAIN_ID.fullmatch, known))
    sql = _locks_sql(scope)
    if check:
        assert known is not None
        sql += _unchanged_sql(known)
    driver.begin_with = sql
    try:
        await_only(raw._start_transaction())
    finally:
        driver.begin_with = None
    return check and driver.began == _NO_ROWS


def _locks_sql(scope: Scope) -> str:
    if scope is None:
        return f"SELECT pg_advisory_xact_lock({GLOBAL_CLASS}, 0);"
    keys = ",".join(str(k) for k in sorted({workspace_key(w) for w in scope}))
    return (
        f"SELECT pg_advisory_xact_lock_shared({GLOBAL_CLASS}, 0), "  # noqa: S608 - ints
        f"(SELECT count(pg_advisory_xact_lock({WORKSPACE_CLASS}, k)) "
        f"FROM (SELECT unnest('{{{keys}}}'::int[]) AS k ORDER BY 1) AS ordered);"
    )


def _unchanged_sql(known: Counters) -> str:
    """A query with a row per workspace whose counters are not ``known``'s (ids checked
    plain, so quoting them is enough)."""
    values = ", ".join(f"('{w}', {int(seq)}, {int(rec)})" for w, (seq, rec) in known.items())
    return (
        f" SELECT 1 FROM (VALUES {values}) AS k(id, seq, rec) "  # noqa: S608 - plain ids, ints
        "LEFT JOIN workspaces AS w ON w.id = k.id "
        "WHERE w.id IS NULL OR w.last_sequence <> k.seq OR w.last_recorded_at <> k.rec;"
    )


__all__ = ["GLOBAL", "Counters", "Scope", "scope_of", "take", "union", "workspace_key"]
