"""Password hashing off the event loop, with a bounded queue."""

from __future__ import annotations

import asyncio
import threading

import pytest

from lineup.hub import security
from lineup.protocol.errors import Unavailable


def test_a_password_hashed_off_the_loop_verifies_only_with_itself() -> None:
    async def check() -> tuple[bool, bool]:
        stored = await security.hash_password_off_loop("correct horse battery")
        right = await security.verify_password_off_loop(stored, "correct horse battery")
        wrong = await security.verify_password_off_loop(stored, "wrong horse battery")
        return right, wrong

    assert asyncio.run(check()) == (True, False)


def test_the_hash_runs_on_another_thread_than_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[threading.Thread] = []

    def noting(password_hash: str, password: str) -> bool:
        threads.append(threading.current_thread())
        return True

    monkeypatch.setattr(security, "verify_password", noting)

    async def check() -> threading.Thread:
        await security.verify_password_off_loop("hash", "password")
        return threading.current_thread()

    loop_thread = asyncio.run(check())
    assert threads and threads[0] is not loop_thread


def test_when_too_many_hashes_wait_one_more_is_refused_as_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(security, "_pending", threading.BoundedSemaphore(1))
    security._pending.acquire()  # the one place is taken

    with pytest.raises(Unavailable) as refused:
        asyncio.run(security.verify_password_off_loop("hash", "password"))
    assert refused.value.details["retryAfterMs"] > 0
