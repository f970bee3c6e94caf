"""The interaction lifecycle: a structured question an agent asks a person, answered once.

First answer wins, the same answer again is a no-op and a different one is a conflict that
names who answered first: two people (or two tabs, or a resent event) must never do two things.
Waiting is never an error: a request expires only if the agent gave it an expiry time.
Times are injected as integer milliseconds so that tests and replays need no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from lineup.domain._interaction_model import (
    OTHER_OPTION_ID,
    InteractionKind,
    InteractionRequest,
    InteractionResponse,
    Option,
    default_approval_options,
    default_review_options,
)
from lineup.domain._interaction_rules import (
    INPUT_FORMATS,
    MAX_CHOICE_OPTIONS,
    MIN_CHOICE_OPTIONS,
    RISKS,
    validate_request,
    validate_response,
)
from lineup.domain.errors import DomainError

__all__ = [
    "INPUT_FORMATS",
    "MAX_CHOICE_OPTIONS",
    "MIN_CHOICE_OPTIONS",
    "OTHER_OPTION_ID",
    "RISKS",
    "TERMINAL_INTERACTION_STATUSES",
    "InteractionKind",
    "InteractionRequest",
    "InteractionResponse",
    "InteractionState",
    "InteractionStatus",
    "Option",
    "RespondOutcome",
    "cancel",
    "default_approval_options",
    "default_review_options",
    "expire",
    "is_due",
    "open_interaction",
    "respond",
    "validate_request",
    "validate_response",
]


class InteractionStatus(StrEnum):
    REQUESTED = "requested"
    RESOLVED = "resolved"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


TERMINAL_INTERACTION_STATUSES: frozenset[InteractionStatus] = frozenset(
    {InteractionStatus.RESOLVED, InteractionStatus.EXPIRED, InteractionStatus.CANCELLED}
)


@dataclass(frozen=True, slots=True)
class InteractionState:
    request: InteractionRequest
    status: InteractionStatus = InteractionStatus.REQUESTED
    response: InteractionResponse | None = None
    responded_by: str | None = None
    responded_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RespondOutcome:
    """``changed`` tells the caller whether to record an event; False means nothing happened."""

    state: InteractionState
    changed: bool


def open_interaction(req: InteractionRequest) -> InteractionState:
    return InteractionState(request=validate_request(req))


def is_due(state: InteractionState, now_ms: int) -> bool:
    expires = state.request.expires_at_ms
    return state.status is InteractionStatus.REQUESTED and expires is not None and now_ms >= expires


def respond(
    state: InteractionState, resp: InteractionResponse, *, by: str, now_ms: int
) -> RespondOutcome:
    _check_clock(now_ms)
    if not isinstance(by, str) or not by.strip():
        raise DomainError("invalid_argument", "An answer needs to say who gave it.")
    if state.status is InteractionStatus.CANCELLED:
        raise DomainError(
            "conflict",
            "This request was cancelled (withdrawn); it can no longer be answered.",
            details={"reason": "cancelled"},
        )
    if state.status is InteractionStatus.EXPIRED or is_due(state, now_ms):
        # The caller records the expiry; the person learns why their answer did not count.
        expires = state.request.expires_at_ms
        when = f" at {_iso(expires)}" if expires is not None else ""
        raise DomainError(
            "conflict",
            f"This request expired{when}; it can no longer be answered.",
            details={"reason": "expired", "expiresAt": expires},
        )
    if state.status is InteractionStatus.RESOLVED:
        return _respond_again(state, resp)
    canonical = validate_response(state.request, resp)
    resolved = replace(
        state,
        status=InteractionStatus.RESOLVED,
        response=canonical,
        responded_by=by,
        responded_at_ms=now_ms,
    )
    return RespondOutcome(resolved, changed=True)


def expire(state: InteractionState, now_ms: int) -> RespondOutcome:
    """Expire a due request; a request that already ended is left alone (it won the race)."""
    _check_clock(now_ms)
    if state.status in TERMINAL_INTERACTION_STATUSES:
        return RespondOutcome(state, changed=False)
    expires = state.request.expires_at_ms
    if expires is None:
        raise DomainError(
            "conflict", "This request has no expiry time; it waits until someone answers."
        )
    if now_ms < expires:
        raise DomainError(
            "conflict",
            f"This request does not expire until {_iso(expires)}.",
            details={"expiresAt": expires},
        )
    return RespondOutcome(replace(state, status=InteractionStatus.EXPIRED), changed=True)


def cancel(state: InteractionState) -> RespondOutcome:
    if state.status in TERMINAL_INTERACTION_STATUSES:
        return RespondOutcome(state, changed=False)
    return RespondOutcome(replace(state, status=InteractionStatus.CANCELLED), changed=True)


def _respond_again(state: InteractionState, resp: InteractionResponse) -> RespondOutcome:
    try:
        candidate = validate_response(state.request, resp)
    except DomainError:
        candidate = resp  # cannot equal the stored answer; still report the conflict below
    if candidate == state.response:
        return RespondOutcome(state, changed=False)
    at = state.responded_at_ms
    who = state.responded_by or "someone"
    when = f" at {_iso(at)}" if at is not None else ""
    raise DomainError(
        "conflict",
        f"This request was already answered by {who}{when}; the first answer stands.",
        details={"respondedBy": state.responded_by, "respondedAt": at},
    )


def _check_clock(now_ms: object) -> None:
    if isinstance(now_ms, bool) or not isinstance(now_ms, int):
        raise DomainError(
            "invalid_argument", f"The time must be whole milliseconds; got {now_ms!r}."
        )


def _iso(ms: int) -> str:
    try:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    except (OverflowError, ValueError):
        return f"{ms} ms"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
