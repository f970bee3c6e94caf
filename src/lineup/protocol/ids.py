"""ULIDs: sortable, application-made primary keys (ADR-0007).

Pure: the caller may inject the time and the randomness, so tests need no clock.
"""

from __future__ import annotations

import os

from lineup.protocol import times

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_ulid(now_ms: int | None = None, rand: bytes | None = None) -> str:
    """A 26-character ULID: 48 bits of milliseconds then 80 random bits, Crockford base32."""
    ms = times.now_ms() if now_ms is None else now_ms
    if not 0 <= ms < 1 << 48:
        raise ValueError("ULID time must fit in 48 bits")
    randomness = os.urandom(10) if rand is None else rand
    if len(randomness) != 10:
        raise ValueError("ULID randomness must be 10 bytes")
    value = (ms << 80) | int.from_bytes(randomness, "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def new_id(prefix: str) -> str:
    """A prefixed ULID such as ``task_01J…``, readable in logs and URLs."""
    return f"{prefix}_{new_ulid()}"
