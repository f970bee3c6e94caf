"""Exponential backoff with jitter, for reconnects and for retryable errors."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays of ``initial · multiplier^attempt`` seconds, capped at ``maximum``.

    Each delay is shortened by a random fraction up to ``jitter`` so that many agents cut off
    at once do not reconnect in step. Tests pass tiny values (``Backoff(initial=0.001)``).
    """

    initial: float = 0.2
    maximum: float = 10.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.initial < 0 or self.maximum < self.initial or self.multiplier < 1:
            raise ValueError("Backoff needs 0 <= initial <= maximum and multiplier >= 1.")
        if not 0 <= self.jitter <= 1:
            raise ValueError("Backoff jitter is a fraction from 0 to 1.")

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before try number ``attempt + 1`` (``attempt`` counts from 0)."""
        base = min(self.maximum, self.initial * self.multiplier ** min(attempt, 64))
        return base * (1 - self.jitter * rand())
