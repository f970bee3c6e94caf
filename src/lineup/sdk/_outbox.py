"""The outbox sender: the agent's events reach the hub one at a time, oldest first.

Each frame waits for its answer before the next goes, so the hub records the agent's events
in the order they happened. An ack settles the entry; a retryable error resends it after the
hub's ``retryAfterMs`` (or the backoff); any other error settles it as failed — its handler
hears the error — and it is never resent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lineup.protocol.frames import Ack, ErrorFrame
from lineup.sdk._backoff import Backoff
from lineup.sdk._requests import Requests
from lineup.sdk._state import StateStore
from lineup.sdk._transport import Connection

logger = logging.getLogger("lineup.sdk")

ExpectAnswer = Callable[[str], "asyncio.Future[Ack | ErrorFrame]"]


class NoAnswer(Exception):
    """The hub did not answer a frame in time; the connection is presumed broken."""


class Outbox:
    """Wakes the sender when a handler queued something; tells :meth:`drain` when empty."""

    def __init__(
        self,
        store: Callable[[], StateStore],
        requests: Requests,
        backoff: Backoff,
        answer_timeout: float,
    ) -> None:
        self._store = store
        self._requests = requests
        self._backoff = backoff
        self._answer_timeout = answer_timeout
        self._signal = asyncio.Event()
        self._drained = asyncio.Event()

    def changed(self) -> None:
        self._drained.clear()
        self._signal.set()

    async def drain(self) -> None:
        while self._store().first_unsent() is not None:
            self._drained.clear()
            await self._drained.wait()

    async def send(
        self,
        connection: Connection,
        expect_answer: ExpectAnswer,
    ) -> None:
        """Send until the connection ends (raises :class:`NoAnswer` when the hub is silent)."""
        attempt = 0
        while True:
            entry = self._store().first_unsent()
            if entry is None:
                self._drained.set()
                self._signal.clear()
                await self._signal.wait()
                continue
            pending = expect_answer(entry.envelope_id)
            await connection.send(entry.frame)
            try:
                async with asyncio.timeout(self._answer_timeout):
                    answer = await pending
            except TimeoutError:
                raise NoAnswer(entry.envelope_id) from None
            if isinstance(answer, Ack):
                attempt = 0
                self._requests.settle(entry, answer)
            elif answer.retryable:
                delay = _retry_after(answer) or self._backoff.delay(attempt)
                attempt += 1
                logger.warning(
                    "the hub asked to resend %s later (%s: %s); resending in %.2fs",
                    entry.envelope_id,
                    answer.code.value,
                    answer.message,
                    delay,
                )
                await asyncio.sleep(delay)
            else:
                attempt = 0
                logger.error(
                    "the hub refused %s (%s: %s); it will not be resent",
                    entry.envelope_id,
                    answer.code.value,
                    answer.message,
                )
                self._requests.settle(entry, answer)


def _retry_after(frame: ErrorFrame) -> float | None:
    value = (frame.details or {}).get("retryAfterMs")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) / 1000
    return None
