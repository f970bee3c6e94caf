"""What the core does after each attempt of an execution (seed 003 §5: idempotency and
timeouts), decided without I/O so every branch is tested.

An execution is recorded before the provider is called. After a timeout the core first asks
the provider for the receipt of the idempotency key: found, the receipt settles it; not found,
the call is retried only when the capability declares idempotent replay (the provider applies
a key once); otherwise the execution ends ``unknown_result``, saying so. Of the errors only
``rate_limited`` and ``unavailable`` are retried, a bounded number of times.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineup.protocol.errors import RETRYABLE, ErrorCode

MAX_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Retry:
    attempt: int
    why: str


@dataclass(frozen=True, slots=True)
class Fail:
    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class Unknown:
    message: str


def after_timeout(
    *, receipt_found: bool, idempotent_replay: bool, attempt: int, max_attempts: int = MAX_ATTEMPTS
) -> Retry | Unknown | None:
    """None: the receipt settles it (use it). Otherwise retry or give up as unknown."""
    if receipt_found:
        return None
    if idempotent_replay and attempt < max_attempts:
        return Retry(attempt + 1, "timed out with no receipt; the provider replays safely")
    if idempotent_replay:
        return Unknown(
            f"The provider did not answer in {max_attempts} attempts and has no record of the "
            "call; whether it took effect is unknown."
        )
    return Unknown(UNSAFE_TO_REPLAY)


UNSAFE_TO_REPLAY = (
    "The provider did not answer in time, has no receipt of the call, and cannot replay it "
    "safely; whether it took effect is unknown. Check the system before trying again."
)


def after_error(
    code: ErrorCode, message: str, *, attempt: int, max_attempts: int = MAX_ATTEMPTS
) -> Retry | Fail:
    if code in RETRYABLE and attempt < max_attempts:
        return Retry(attempt + 1, f"{code.value}: {message}")
    return Fail(code, message)


def resume(*, receipt_found: bool, idempotent_replay: bool) -> str:
    """After a crash, for an execution recorded but never finished: ``receipt`` (settle from
    the provider's record), ``call`` (safe to call: the provider dedups the key), or
    ``unknown``."""
    if receipt_found:
        return "receipt"
    return "call" if idempotent_replay else "unknown"
