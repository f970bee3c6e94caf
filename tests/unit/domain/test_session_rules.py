"""The rules of a session's tokens, with the clock passed in: access expiry, rotation, and a
spent refresh token's reuse ending the family (seed 001 §9.1)."""

from __future__ import annotations

from lineup.domain.sessions import (
    ACCESS,
    REFRESH,
    REFRESH_RACE_MS,
    Decision,
    Family,
    Refusal,
    Token,
    access_expiry,
    check_access,
    decide_refresh,
)

FAMILY = Family(expires_at=10_000_000)


def test_a_live_access_token_opens_the_api_until_its_minutes_are_over() -> None:
    token = Token(ACCESS, expires_at=1_000)
    assert check_access(token, FAMILY, 999) is None
    assert check_access(token, FAMILY, 1_000) is Refusal.TOKEN_EXPIRED


def test_an_ended_or_expired_family_ends_its_access_tokens_at_once() -> None:
    token = Token(ACCESS, expires_at=1_000)
    assert check_access(token, Family(10_000, revoked_at=5), 10) is Refusal.SESSION_ENDED
    assert check_access(token, Family(500), 600) is Refusal.SESSION_ENDED


def test_a_refresh_token_does_not_open_the_api_and_an_unknown_token_is_an_ended_session() -> None:
    assert check_access(Token(REFRESH, 1_000), FAMILY, 1) is Refusal.SESSION_ENDED
    assert check_access(None, None, 1) is Refusal.SESSION_ENDED


def test_an_unspent_refresh_token_rotates() -> None:
    assert decide_refresh(Token(REFRESH, 5_000), FAMILY, 10).decision is Decision.ROTATE


def test_a_spent_refresh_token_presented_again_revokes_the_family() -> None:
    spent = Token(REFRESH, 5_000_000, spent_at=100)
    outcome = decide_refresh(spent, FAMILY, 100 + REFRESH_RACE_MS)
    assert outcome.decision is Decision.REVOKE_FAMILY
    assert outcome.refusal is Refusal.REFRESH_REUSED


def test_a_spent_refresh_token_presented_within_the_race_window_is_only_refused() -> None:
    spent = Token(REFRESH, 5_000_000, spent_at=100)
    outcome = decide_refresh(spent, FAMILY, 100 + REFRESH_RACE_MS - 1)
    assert outcome.decision is Decision.REFUSE
    assert outcome.refusal is Refusal.REFRESH_SUPERSEDED


def test_no_refresh_outlives_its_family() -> None:
    token = Token(REFRESH, 10_000_000)
    assert decide_refresh(token, FAMILY, 10_000_000).refusal is Refusal.SESSION_ENDED
    ended = Family(10_000_000, revoked_at=3)
    assert decide_refresh(token, ended, 4).refusal is Refusal.SESSION_ENDED
    spent_in_ended = Token(REFRESH, 10_000_000, spent_at=1)
    assert decide_refresh(spent_in_ended, ended, 99_999).decision is Decision.REFUSE


def test_an_access_token_never_lasts_past_its_family() -> None:
    assert access_expiry(0, 900_000, FAMILY) == 900_000
    assert access_expiry(9_500_000, 900_000, FAMILY) == 10_000_000
