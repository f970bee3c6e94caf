"""Secrets: passwords hashed with argon2, tokens random and stored only as SHA-256 hashes.

Tokens (sessions, agent credentials, pairing codes) carry enough entropy that a fast hash is
safe to store; passwords do not, so they get argon2.

An argon2 hash is deliberately slow (about 0.1 s of CPU and 64 MiB), so the hub never runs one
on its event loop: :func:`hash_password_off_loop` and :func:`verify_password_off_loop` hand it
to a small thread pool (argon2 releases the GIL while it works) and keep at most
:data:`MAX_PENDING_HASHES` waiting, so a flood of sign-ins gets ``unavailable`` instead of a
queue that grows without end, and agents' heartbeats keep being answered meanwhile.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from lineup.protocol.errors import Unavailable

_hasher = PasswordHasher()
_PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

HASH_WORKERS = max(1, min(4, (os.cpu_count() or 2) // 2))
"""Threads that hash: half the cores, so the event loop always has one to itself."""
MAX_PENDING_HASHES = 32 * HASH_WORKERS
"""Hashes running or waiting at once; one more is refused rather than queued."""

_pool = ThreadPoolExecutor(max_workers=HASH_WORKERS, thread_name_prefix="lineup-hash")
_pending = threading.BoundedSemaphore(MAX_PENDING_HASHES)
_T = TypeVar("_T")


def hash_password(password: str) -> str:
    """Blocking; for code that is not on an event loop. The hub uses the off-loop form."""
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Blocking; for code that is not on an event loop. The hub uses the off-loop form."""
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


async def hash_password_off_loop(password: str) -> str:
    return await _off_loop(hash_password, password)


async def verify_password_off_loop(password_hash: str, password: str) -> bool:
    return await _off_loop(verify_password, password_hash, password)


async def _off_loop(fn: Callable[..., _T], *args: str) -> _T:
    if not _pending.acquire(blocking=False):
        raise Unavailable(
            "The hub is busy checking other passwords; try again in a few seconds.",
            details={"retryAfterMs": 2000},
        )
    try:
        return await asyncio.get_running_loop().run_in_executor(_pool, fn, *args)
    finally:
        _pending.release()


def new_token(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_secret(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def new_pairing_code() -> str:
    """Eight characters from an alphabet without look-alikes, shown as ``ABCD-EFGH``."""
    raw = "".join(secrets.choice(_PAIRING_ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def new_invitation_code() -> str:
    """Sixteen characters of the pairing alphabet (80 bits), ``ABCD-EFGH-JKLM-NPQR``: an
    invitation lives for days rather than minutes, so it needs more than a pairing code's 40."""
    raw = "".join(secrets.choice(_PAIRING_ALPHABET) for _ in range(16))
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def normalise_pairing_code(code: str) -> str:
    return "".join(ch for ch in code.upper() if ch.isalnum())
