"""Sliding-window attempt limits (pairing redemption, sign-in), with an injectable clock."""

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
