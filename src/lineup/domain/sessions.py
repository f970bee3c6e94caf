"""The rules of a person's session: short-lived access tokens and rotating refresh tokens.

A session is a family of tokens that lives at most until its own end (the hub's session
lifetime). An access token opens the API for minutes; a refresh token buys the next pair once
and is spent doing so. A spent refresh token presented again means two holders have it — the
person and someone who copied it — so the whole family ends: both must sign in again, and
only the person can. One exception keeps two tabs of one browser from signing their person
out: the browser's tabs share one refresh cookie, and two of them may both find the access
token expired and refresh at once; a spent token presented again within
:data:`REFRESH_RACE_MS` of its spending is refused without a new pair (the other tab's new
cookies are already in the browser) and without ending the family.

Pure: the caller reads the rows and passes the clock's time in; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

ACCESS = "access"
REFRESH = "refresh"

REFRESH_RACE_MS = 10_000
"""How long after its spending a refresh token presented again is taken for a sibling tab's
race, not a theft: refused, but the family lives on."""


class Refusal(StrEnum):
    """Why a token does not open the API; sent as ``details.reason`` of ``unauthenticated``."""

    TOKEN_EXPIRED = "token_expired"  # noqa: S105 - a reason, not a secret
    """The access token's minutes are over: refresh, then send the request again."""
    SESSION_ENDED = "session_ended"
    """Signed out, ended from Settings, past its lifetime or unknown: sign in again."""
    REFRESH_REUSED = "refresh_reused"
    """A spent refresh token came back: the family has just been ended; sign in again."""
    REFRESH_SUPERSEDED = "refresh_superseded"
    """A sibling refresh won the race: the new tokens are already with the client."""


@dataclass(frozen=True, slots=True)
class Family:
    """What the rules need of a session row."""

    expires_at: int
    revoked_at: int | None = None

    def live(self, now_ms: int) -> bool:
        return self.revoked_at is None and now_ms < self.expires_at


@dataclass(frozen=True, slots=True)
class Token:
    """What the rules need of a token row."""

    kind: str
    expires_at: int
    spent_at: int | None = None


def check_access(token: Token | None, family: Family | None, now_ms: int) -> Refusal | None:
    """``None`` when ``token`` opens the API now; otherwise why not."""
    if token is None or family is None or token.kind != ACCESS or not family.live(now_ms):
        return Refusal.SESSION_ENDED
    if now_ms >= token.expires_at:
        return Refusal.TOKEN_EXPIRED
    return None


class Decision(StrEnum):
    ROTATE = "rotate"
    """Spend the token and issue the next pair."""
    REVOKE_FAMILY = "revoke_family"
    """A spent token came back: end the whole family and record it."""
    REFUSE = "refuse"
    """Nothing to change: the session is over, or a sibling refresh won."""


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    decision: Decision
    refusal: Refusal | None = None


def decide_refresh(token: Token | None, family: Family | None, now_ms: int) -> RefreshOutcome:
    """What presenting the refresh token ``token`` (of ``family``) at ``now_ms`` does."""
    if token is None or family is None or token.kind != REFRESH or not family.live(now_ms):
        return RefreshOutcome(Decision.REFUSE, Refusal.SESSION_ENDED)
    if token.spent_at is not None:
        if now_ms - token.spent_at < REFRESH_RACE_MS:
            return RefreshOutcome(Decision.REFUSE, Refusal.REFRESH_SUPERSEDED)
        return RefreshOutcome(Decision.REVOKE_FAMILY, Refusal.REFRESH_REUSED)
    if now_ms >= token.expires_at:
        return RefreshOutcome(Decision.REFUSE, Refusal.SESSION_ENDED)
    return RefreshOutcome(Decision.ROTATE)


def access_expiry(now_ms: int, access_ttl_ms: int, family: Family) -> int:
    """An access token lasts its minutes, never beyond its family's end."""
    return min(now_ms + access_ttl_ms, family.expires_at)
