"""HTTP idempotency keys: which request a key was first used for.

A key is bound by its first request and kept while that request may have done something:
the hub compares a later request's method, path and body hash with the binding. A request
refused outright (its command never ran) releases the key. Each function takes the connection
of a ``WriteTx`` (``tx.connection``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from lineup.store.schema import idempotency_keys

KEY_TTL_MS = 24 * 3600 * 1000
"""How long a key is remembered: a client retries within minutes, not days."""


@dataclass(frozen=True, slots=True)
class KeyBinding:
    method: str
    path: str
    body_hash: str


def bind_key(
    conn: Connection, key_id: str, binding: KeyBinding, now_ms: int
) -> tuple[KeyBinding, bool]:
    """Bind ``key_id`` to ``binding`` unless it is bound already; returns the key's binding
    (the first request's, which the caller compares with its own) and whether it is new."""
    found = _binding(conn, key_id)
    if found is not None:
        return found, False
    try:
        # another hub node may bind the same key at the same moment: its row wins
        with conn.begin_nested():
            conn.execute(
                insert(idempotency_keys).values(
                    id=key_id,
                    method=binding.method,
                    path=binding.path,
                    body_hash=binding.body_hash,
                    created_at=now_ms,
                )
            )
    except IntegrityError:
        found = _binding(conn, key_id)
        if found is not None:
            return found, False
        raise
    return binding, True


def release_key(conn: Connection, key_id: str, binding: KeyBinding) -> None:
    """Forget a binding whose request was refused: nothing was done under the key, so the
    client may use it again, for another request too."""
    conn.execute(
        delete(idempotency_keys).where(
            idempotency_keys.c.id == key_id,
            idempotency_keys.c.method == binding.method,
            idempotency_keys.c.path == binding.path,
            idempotency_keys.c.body_hash == binding.body_hash,
        )
    )


def _binding(conn: Connection, key_id: str) -> KeyBinding | None:
    row = conn.execute(
        select(
            idempotency_keys.c.method, idempotency_keys.c.path, idempotency_keys.c.body_hash
        ).where(idempotency_keys.c.id == key_id)
    ).first()
    return None if row is None else KeyBinding(row.method, row.path, row.body_hash)


def forget_keys_before(conn: Connection, before_ms: int) -> int:
    """Forget bindings made before ``before_ms``; returns how many."""
    result = conn.execute(delete(idempotency_keys).where(idempotency_keys.c.created_at < before_ms))
    return int(result.rowcount)
