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
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from sqlalchemy import Integer, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from lineup.store import statements

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


def take(conn: Connection, scope: Scope) -> None:
    """Take the batch's locks, first thing in its transaction (PostgreSQL only)."""
    if conn.dialect.name != "postgresql":
        return
    if scope is None:
        statements.run(conn, _EXCLUSIVE_GLOBAL)
    else:
        statements.run(conn, _WORKSPACES, {"keys": sorted({workspace_key(w) for w in scope})})


__all__ = ["GLOBAL", "Scope", "scope_of", "take", "union", "workspace_key"]
