"""Attempt limits (pairing redemption, sign-in): sliding windows per address, and backoff
per account; each with an injectable clock."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from lineup.protocol.errors import RateLimited


class AttemptLimiter:
    """At most ``limit`` attempts per key within ``window`` seconds."""

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._attempts: dict[str, deque[float]] = {}

    def check(self, key: str, what: str) -> None:
        """Count one attempt for ``key``; raise ``rate_limited`` when over the limit."""
        now = self._clock()
        attempts = self._attempts.setdefault(key, deque())
        while attempts and attempts[0] <= now - self.window:
            attempts.popleft()
        if len(attempts) >= self.limit:
            retry_ms = int((attempts[0] + self.window - now) * 1000) + 1
            raise RateLimited(
                f"Too many {what} attempts; wait {max(1, retry_ms // 1000)} s and try again.",
                details={"retryAfterMs": retry_ms},
            )
        attempts.append(now)
        if len(self._attempts) > 100_000:
            self._forget_idle(now)

    def _forget_idle(self, now: float) -> None:
        for key in [k for k, v in self._attempts.items() if not v or v[-1] <= now - self.window]:
            del self._attempts[key]


class FailureBackoff:
    """Growing waits after repeated failures for one key (an account's email), wherever they
    come from: a guesser spread over many addresses meets the same wait as one on one address.

    The first ``free`` failures cost nothing (people mistype); after that each failure makes the
    next attempt wait ``base`` seconds, doubled per further failure, up to ``cap``. A success
    clears the key; a key quiet for ``forget_after`` starts over. The clock is milliseconds,
    the hub's own, so tests move it instead of sleeping.
    """

    def __init__(
        self,
        clock: Callable[[], int],
        *,
        free: int = 5,
        base: float = 1.0,
        cap: float = 15 * 60.0,
        forget_after: float = 60 * 60.0,
    ) -> None:
        self.free = free
        self.base_ms = int(base * 1000)
        self.cap_ms = int(cap * 1000)
        self.forget_after_ms = int(forget_after * 1000)
        self._clock = clock
        self._failures: dict[str, tuple[int, int]] = {}  # key -> (count, last failure ms)

    def attempt(self, key: str, what: str) -> None:
        """Raise ``rate_limited`` while ``key`` must wait; otherwise count this attempt as a
        failure until :meth:`succeeded` says otherwise, so that many attempts sent at once
        cannot all pass while their passwords are still being checked."""
        self.check(key, what)
        self.failed(key)

    def check(self, key: str, what: str) -> None:
        """Raise ``rate_limited`` while ``key`` must still wait; counts nothing."""
        now = self._clock()
        wait_ms = self._wait_ms(key, now)
        if wait_ms > 0:
            raise RateLimited(
                f"Too many failed {what} attempts; wait {_seconds_text(wait_ms)} and try again.",
                details={"retryAfterMs": wait_ms},
            )

    def failed(self, key: str) -> None:
        now = self._clock()
        count, last = self._failures.get(key, (0, now))
        if now - last > self.forget_after_ms:
            count = 0
        self._failures[key] = (count + 1, now)
        if len(self._failures) > 100_000:
            self._forget_idle(now)

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)

    def _wait_ms(self, key: str, now: int) -> int:
        entry = self._failures.get(key)
        if entry is None:
            return 0
        count, last = entry
        if now - last > self.forget_after_ms:
            del self._failures[key]
            return 0
        if count < self.free:
            return 0
        delay: int = min(self.cap_ms, self.base_ms << min(count - self.free, 30))
        return max(0, last + delay - now)

    def _forget_idle(self, now: int) -> None:
        idle = [k for k, (_, last) in self._failures.items() if now - last > self.forget_after_ms]
        for key in idle:
            del self._failures[key]


def _seconds_text(ms: int) -> str:
    seconds = max(1, -(-ms // 1000))
    return f"{seconds} s" if seconds < 120 else f"{-(-seconds // 60)} min"
