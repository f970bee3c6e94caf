"""People's accounts: sign-up (with a first workspace, or into the workspace of an
invitation), sign-in sessions, password changes, workspaces.

A session is a family of tokens (:mod:`lineup.domain.sessions`): a short-lived access token in
an HttpOnly, SameSite=Lax cookie, and a refresh token in an HttpOnly cookie sent only to the
refresh endpoint, each used once to get the next pair. Both are stored hashed. A third random
token, readable by the page, must come back in ``X-CSRF-Token`` on every state-changing
request (double submit, bound to the session).

Passwords are hashed off the event loop (:mod:`lineup.hub.security`); wrong ones slow down
further tries of the same account from anywhere (``limits.signin_by_account``), counted the
same whether or not the account exists, so the wait says nothing about who has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineup.domain import sessions as rules
from lineup.hub import audit, invitations
from lineup.hub.actors import Person
from lineup.hub.password_policy import check_password
from lineup.hub.recorder import Writing
from lineup.hub.security import (
    hash_password,
    hash_password_off_loop,
    new_token,
    same_secret,
    token_hash,
    verify_password_off_loop,
)
from lineup.hub.state import HubState
from lineup.protocol import facts, fields
from lineup.protocol.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    NotFound,
    Unauthenticated,
)
from lineup.protocol.ids import new_id
from lineup.store import Reader, SessionRecord, SessionTokenRecord, User
from lineup.store import auth as store_auth

ACCESS_PREFIX = "lsa"
REFRESH_PREFIX = "lsr"
TOUCH_EVERY_MS = 60_000
"""A session's ``last_used_at`` moves at most once a minute: no write per request."""
USER_AGENT_CHARS = 300


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session's new pair of tokens (at sign-in, or from a refresh)."""

    session_id: str
    access_token: str
    refresh_token: str
    csrf_token: str | None
    """Made at sign-in only; a refresh keeps the session's."""
    user: User
    access_expires_at_ms: int
    expires_at_ms: int
    """The family's end: no refresh goes past it."""


def normalise_email(email: str) -> str:
    clean = email.strip().lower()
    if not fields.is_email(clean) or len(clean) > 254:
        raise InvalidArgument("Enter a valid email address.", details={"field": "email"})
    return clean


def check_signup_allowed(mode: str, invitation_code: str | None) -> None:
    """The hub's ``LINEUP_SIGNUP`` rule for a sign-up from the API (``lineup user create``,
    run by whoever runs the hub, is not asked)."""
    if mode == "closed":
        raise Forbidden(
            "This hub does not take sign-ups; ask whoever runs it to create your account.",
            details={"signup": mode},
        )
    if mode == "invite" and not (invitation_code or "").strip():
        raise Forbidden(
            "This hub takes sign-ups by invitation only; enter the invitation code you were "
            "given, or ask a workspace owner for one.",
            details={"signup": mode, "field": "invitationCode"},
        )


def create_workspace(w: Writing, user: User, name: str, role: str = "owner") -> str:
    workspace_id = new_id("ws")
    w.append(
        workspace_id,
        facts.WorkspaceCreatedPayload(workspace_id=workspace_id, name=name, owner_user_id=user.id),
        actor=f"user:{user.id}",
    )
    w.append(
        workspace_id,
        facts.MemberJoinedPayload(
            user_id=user.id, email=user.email, display_name=user.display_name, role=role
        ),
        actor=f"user:{user.id}",
    )
    return workspace_id


async def sign_up(
    hub: HubState,
    email: str,
    password: str,
    display_name: str,
    workspace_name: str | None,
    invitation_code: str | None = None,
) -> tuple[User, str]:
    """Create a person and either their first workspace or, with an invitation, a membership
    of the workspace it is for; return the user and that workspace's id."""
    clean_email = normalise_email(email)
    name = display_name.strip() or clean_email.split("@")[0]
    check_password(password, (clean_email, name))
    code = (invitation_code or "").strip() or None
    if code is not None:  # a wrong code costs no hash; the write below checks it again
        await hub.store.read(lambda r: invitations.check_usable(r, code, hub.clock()))
    password_hash = await hash_password_off_loop(password)

    def job(w: Writing) -> tuple[User, str]:
        if w.read.get_user_by_email(clean_email) is not None:
            raise Conflict(
                "An account with this email already exists; sign in instead.",
                details={"field": "email"},
            )
        user = User(id=new_id("user"), email=clean_email, display_name=name, created_at=w.now_ms)
        if code is None:
            workspace_id = create_workspace(w, user, workspace_name or f"{name}'s workspace")
        else:
            workspace_id = invitations.join(w, user, code)
        store_auth.set_password_hash(w.connection, user.id, password_hash)
        return user, workspace_id

    return await hub.recorder.run(job)


async def sign_in(
    hub: HubState, email: str, password: str, user_agent: str | None = None
) -> NewSession:
    failure = Unauthenticated("The email or password is not right.")
    try:
        clean_email = normalise_email(email)
    except InvalidArgument:
        raise failure from None
    assert hub.limits is not None
    backoff = hub.limits.signin_by_account
    backoff.attempt(clean_email, "sign-in")

    def read(r: Reader) -> tuple[User | None, str | None]:
        user = r.get_user_by_email(clean_email)
        return user, None if user is None else store_auth.get_password_hash(r.connection, user.id)

    user, stored = await hub.store.read(read)
    if user is None or stored is None:
        # the same work either way: no user enumeration
        await verify_password_off_loop(_DUMMY_HASH, password)
        raise failure
    if not await verify_password_off_loop(stored, password):
        raise failure
    backoff.succeeded(clean_email)
    return await start_session(hub, user, user_agent)


async def change_password(
    hub: HubState, signed: SignedIn, current_password: str, new_password: str
) -> int:
    """Set a new password (the current one proves it is the person, not a borrowed session)
    and end every other session; returns how many were ended."""
    assert hub.limits is not None
    user = signed.user
    backoff = hub.limits.signin_by_account
    backoff.attempt(user.email, "password")
    stored = await hub.store.read(lambda r: store_auth.get_password_hash(r.connection, user.id))
    if stored is None or not await verify_password_off_loop(stored, current_password):
        raise InvalidArgument(
            "Your current password is not right.", details={"field": "currentPassword"}
        )
    backoff.succeeded(user.email)
    check_password(new_password, (user.email, user.display_name))
    if new_password == current_password:
        raise InvalidArgument(
            "Choose a password different from the current one.", details={"field": "password"}
        )
    password_hash = await hash_password_off_loop(new_password)

    def job(w: Writing) -> int:
        store_auth.set_password_hash(w.connection, user.id, password_hash)
        ended = store_auth.revoke_other_sessions(
            w.connection, user.id, signed.session.id, w.now_ms, "password_changed"
        )
        return len(ended)

    ended = await hub.recorder.run(job)
    hub.live_sessions.ended(user.id, keep=signed.session.id)
    return ended


async def sign_out_other_sessions(hub: HubState, signed: SignedIn) -> int:
    """End every session of this person but the one asking; returns how many were ended."""

    def job(w: Writing) -> int:
        ended = store_auth.revoke_other_sessions(
            w.connection, signed.user.id, signed.session.id, w.now_ms, "ended_elsewhere"
        )
        return len(ended)

    ended = await hub.recorder.run(job)
    hub.live_sessions.ended(signed.user.id, keep=signed.session.id)
    return ended


async def any_accounts(hub: HubState) -> bool:
    return await hub.store.read(lambda r: store_auth.any_password_account(r.connection))


def _issue_pair(
    w: Writing, hub: HubState, session_id: str, user: User, family_end: int
) -> tuple[str, str, int]:
    """A new access token and refresh token of ``session_id``, stored as hashes."""
    access, refresh = new_token(ACCESS_PREFIX), new_token(REFRESH_PREFIX)
    ttl_ms = int(hub.settings.access_token_ttl * 1000)
    access_end = rules.access_expiry(w.now_ms, ttl_ms, rules.Family(family_end))
    for kind, token, expires_at in (
        (rules.ACCESS, access, access_end),
        (rules.REFRESH, refresh, family_end),
    ):
        store_auth.insert_session_token(
            w.connection,
            SessionTokenRecord(token_hash(token), session_id, kind, w.now_ms, expires_at),
        )
    return access, refresh, access_end


async def start_session(hub: HubState, user: User, user_agent: str | None = None) -> NewSession:
    csrf = new_token("csrf")
    ttl_ms = int(hub.settings.session_ttl * 1000)

    def job(w: Writing) -> NewSession:
        record = SessionRecord(
            id=new_id("sess"),
            user_id=user.id,
            csrf_token_hash=token_hash(csrf),
            created_at=w.now_ms,
            expires_at=w.now_ms + ttl_ms,
            last_used_at=w.now_ms,
            user_agent=(user_agent or "")[:USER_AGENT_CHARS] or None,
        )
        store_auth.insert_session(w.connection, record)
        access, refresh, access_end = _issue_pair(w, hub, record.id, user, record.expires_at)
        return NewSession(record.id, access, refresh, csrf, user, access_end, record.expires_at)

    return await hub.recorder.run(job)


@dataclass(frozen=True, slots=True)
class SignedIn:
    session: SessionRecord
    user: User


_MESSAGES = {
    rules.Refusal.TOKEN_EXPIRED: "Your access token has expired; refresh it and try again.",
    rules.Refusal.SESSION_ENDED: "Your session has ended; sign in again.",
    rules.Refusal.REFRESH_REUSED: (
        "This sign-in was used from two places, so it has been ended everywhere to keep your "
        "account safe; sign in again."
    ),
    rules.Refusal.REFRESH_SUPERSEDED: (
        "Another tab refreshed this session a moment ago; send the request again."
    ),
}


def refused(reason: rules.Refusal) -> Unauthenticated:
    return Unauthenticated(_MESSAGES[reason], details={"reason": reason.value})


async def session_user(hub: HubState, token: str | None) -> SignedIn:
    """The person whose live access token ``token`` is; ``unauthenticated`` with a
    ``reason`` (``token_expired``: refresh; ``session_ended``: sign in) otherwise."""
    if not token:
        raise Unauthenticated("Sign in to continue.", details={"reason": "session_ended"})

    def read(r: Reader) -> tuple[SessionTokenRecord | None, SessionRecord | None, User | None]:
        return store_auth.signed_in_by_token(r.connection, token_hash(token)) or (None, None, None)

    record, session, user = await hub.store.read(read, brief=True)
    now = hub.clock()
    refusal = rules.check_access(_token(record), _family(session), now)
    if refusal is not None:
        raise refused(refusal)
    if session is None or user is None:
        raise refused(rules.Refusal.SESSION_ENDED)
    if now - session.last_used_at >= TOUCH_EVERY_MS:
        session_id = session.id
        await hub.store.write(lambda tx: store_auth.touch_session(tx.connection, session_id, now))
    return SignedIn(session, user)


async def session_live(hub: HubState, session_id: str) -> bool:
    """Whether the session (the family, whatever its access token's minutes) still holds."""
    session = await hub.store.read(
        lambda r: store_auth.get_session(r.connection, session_id), brief=True
    )
    family = _family(session)
    return family is not None and family.live(hub.clock())


def _token(record: SessionTokenRecord | None) -> rules.Token | None:
    return None if record is None else rules.Token(record.kind, record.expires_at, record.spent_at)


def _family(session: SessionRecord | None) -> rules.Family | None:
    return None if session is None else rules.Family(session.expires_at, session.revoked_at)


async def refresh(hub: HubState, refresh_token: str | None, csrf_sent: str) -> NewSession:
    """Spend ``refresh_token`` for its session's next pair. A spent one presented again ends
    the whole family (and says so in the audit log): see :mod:`lineup.domain.sessions`."""
    if not refresh_token:
        raise refused(rules.Refusal.SESSION_ENDED)
    presented = token_hash(refresh_token)

    def job(w: Writing) -> NewSession | rules.Refusal | None:
        found = store_auth.get_session_token(w.connection, presented)
        record, session = (None, None) if found is None else found
        outcome = rules.decide_refresh(_token(record), _family(session), w.now_ms)
        if session is None or outcome.decision is rules.Decision.REFUSE:
            return outcome.refusal or rules.Refusal.SESSION_ENDED
        if not csrf_sent or not same_secret(token_hash(csrf_sent), session.csrf_token_hash):
            return None
        user = w.read.get_user(session.user_id)
        if user is None:
            return rules.Refusal.SESSION_ENDED
        if outcome.decision is rules.Decision.REVOKE_FAMILY:
            store_auth.revoke_session(w.connection, session.id, w.now_ms, "refresh_reused")
            audit.record(
                w,
                "session.refresh_reused",
                workspace_id=None,
                actor=f"user:{user.id}",
                subject=f"session:{session.id}",
                data={"userAgent": session.user_agent, "createdAt": session.created_at},
            )
            return rules.Refusal.REFRESH_REUSED
        if not store_auth.spend_refresh_token(w.connection, presented, w.now_ms):
            return rules.Refusal.REFRESH_SUPERSEDED  # a sibling spent it in the same instant
        store_auth.touch_session(w.connection, session.id, w.now_ms)
        access, fresh, access_end = _issue_pair(w, hub, session.id, user, session.expires_at)
        return NewSession(session.id, access, fresh, None, user, access_end, session.expires_at)

    result = await hub.recorder.run(job)
    if result is None:
        raise Forbidden(
            "This request lacks a valid CSRF token; reload the page and try again.",
            details={"header": "X-CSRF-Token"},
        )
    if isinstance(result, rules.Refusal):
        if result is rules.Refusal.REFRESH_REUSED:
            found = await hub.store.read(
                lambda r: store_auth.get_session_token(r.connection, presented)
            )
            if found is not None:
                hub.live_sessions.ended(found[1].user_id, only=found[1].id)
        raise refused(result)
    return result


async def list_sessions(hub: HubState, user: User) -> list[SessionRecord]:
    return await hub.store.read(
        lambda r: store_auth.list_sessions(r.connection, user.id, hub.clock())
    )


async def end_session(hub: HubState, user: User, session_id: str) -> None:
    """End one of ``user``'s sessions (from Settings): its tokens stop working at once."""

    def job(w: Writing) -> bool:
        session = store_auth.get_session(w.connection, session_id)
        if session is None or session.user_id != user.id:
            return False
        return store_auth.revoke_session(w.connection, session_id, w.now_ms, "ended")

    if not await hub.recorder.run(job):
        raise NotFound("You have no live session with that id.", details={"sessionId": session_id})
    hub.live_sessions.ended(user.id, only=session_id)


async def sign_out(hub: HubState, session: SessionRecord) -> None:
    def job(w: Writing) -> None:
        store_auth.revoke_session(w.connection, session.id, w.now_ms, "signed_out")

    await hub.recorder.run(job)
    hub.live_sessions.ended(session.user_id, only=session.id)


async def person_in(hub: HubState, user: User, workspace_id: str) -> Person:
    """The signed-in user acting in ``workspace_id``; a non-member is told nothing about it."""
    membership = await hub.store.read(lambda r: r.get_membership(workspace_id, user.id), brief=True)
    if membership is None:
        raise Forbidden("You are not a member of this workspace.")
    return Person(user.id, user.display_name, workspace_id, membership.role)


_DUMMY_HASH = hash_password("lineup-timing-equaliser")
