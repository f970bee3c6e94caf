"""The interaction lifecycle: a structured question an agent asks a person, answered once.

An interaction is a pending request (``lineup.domain.pending`` holds that lifecycle: first
answer wins, the same answer again is a no-op, a different one is a conflict that names who
answered first); this module adds the card — its kinds, options and answer rules — and words
the refusals for the person. Waiting is never an error: a request expires only if the agent
gave it an expiry time. Times are injected as integer milliseconds so that tests and replays
need no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from lineup.domain import pending
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
    "answer",
    "as_pending",
    "cancel",
    "default_approval_options",
    "default_review_options",
    "expire",
    "from_pending",
    "is_due",
    "open_interaction",
    "refusal",
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
    return pending.is_due(as_pending(state), now_ms)


def answer(
    state: InteractionState, resp: InteractionResponse, *, by: str, now_ms: int
) -> pending.AnswerDecision[InteractionResponse]:
    """What ``by``'s answer does, as the pending-request lifecycle decides it; an answer that
    breaks the card's rules is ``invalid_argument`` only if it would otherwise count.

    A recorded answer is the canonical one (see :func:`validate_response`), so the same
    selection sent again in another order is "the same answer"."""
    try:
        candidate, problem = validate_response(state.request, resp), None
    except DomainError as exc:
        candidate, problem = resp, exc  # cannot equal the stored answer; a conflict stays one
    decision = pending.answer(as_pending(state), candidate, by=by, at_ms=now_ms)
    if problem is not None and isinstance(decision, pending.Record):
        raise problem
    return decision


def respond(
    state: InteractionState, resp: InteractionResponse, *, by: str, now_ms: int
) -> RespondOutcome:
    decision = answer(state, resp, by=by, now_ms=now_ms)
    if isinstance(decision, pending.Record):
        return RespondOutcome(from_pending(state, decision.pending), changed=True)
    if isinstance(decision, pending.NoOp):
        return RespondOutcome(state, changed=False)
    raise refusal(decision)


def refusal(
    decision: pending.AnsweredFirst[InteractionResponse] | pending.Refused[InteractionResponse],
) -> DomainError:
    """Why an answer did not count, as a ``conflict`` for the person who gave it."""
    if isinstance(decision, pending.AnsweredFirst):
        at = decision.at_ms
        who = decision.by or "someone"
        when = f" at {_iso(at)}" if at is not None else ""
        return DomainError(
            "conflict",
            f"This request was already answered by {who}{when}; the first answer stands.",
            details={"respondedBy": decision.by, "respondedAt": at},
        )
    if decision.reason == "cancelled":
        return DomainError(
            "conflict",
            "This request was cancelled (withdrawn); it can no longer be answered.",
            details={"reason": "cancelled"},
        )
    # The caller records a due expiry; the person learns why their answer did not count.
    expires = decision.pending.expires_at_ms
    when = f" at {_iso(expires)}" if expires is not None else ""
    return DomainError(
        "conflict",
        f"This request expired{when}; it can no longer be answered.",
        details={"reason": "expired", "expiresAt": expires},
    )


def expire(state: InteractionState, now_ms: int) -> RespondOutcome:
    """Expire a due request; a request that already ended is left alone (it won the race)."""
    decision = pending.expire(as_pending(state), now_ms)
    if isinstance(decision, pending.Record):
        return RespondOutcome(from_pending(state, decision.pending), changed=True)
    if isinstance(decision, pending.NoOp):
        return RespondOutcome(state, changed=False)
    expires = state.request.expires_at_ms
    if expires is None:
        raise DomainError(
            "conflict", "This request has no expiry time; it waits until someone answers."
        )
    raise DomainError(
        "conflict",
        f"This request does not expire until {_iso(expires)}.",
        details={"expiresAt": expires},
    )


def cancel(state: InteractionState) -> RespondOutcome:
    decision = pending.withdraw(as_pending(state))
    if isinstance(decision, pending.NoOp):
        return RespondOutcome(state, changed=False)
    return RespondOutcome(from_pending(state, decision.pending), changed=True)


_AS_PENDING = {
    InteractionStatus.REQUESTED: pending.PendingStatus.OPEN,
    InteractionStatus.RESOLVED: pending.PendingStatus.ANSWERED,
    InteractionStatus.EXPIRED: pending.PendingStatus.EXPIRED,
    InteractionStatus.CANCELLED: pending.PendingStatus.CANCELLED,
}
_FROM_PENDING = {v: k for k, v in _AS_PENDING.items()}


def as_pending(state: InteractionState) -> pending.Pending[InteractionResponse]:
    """The interaction as a pending request: its lifecycle, without the card."""
    return pending.Pending(
        status=_AS_PENDING[state.status],
        answer=state.response,
        answered_by=state.responded_by,
        answered_at_ms=state.responded_at_ms,
        expires_at_ms=state.request.expires_at_ms,
    )


def from_pending(
    state: InteractionState, request: pending.Pending[InteractionResponse]
) -> InteractionState:
    return replace(
        state,
        status=_FROM_PENDING[request.status],
        response=request.answer,
        responded_by=request.answered_by,
        responded_at_ms=request.answered_at_ms,
    )


def _iso(ms: int) -> str:
    try:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    except (OverflowError, ValueError):
        return f"{ms} ms"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
