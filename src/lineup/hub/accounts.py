"""People's accounts: sign-up (with a first workspace, or into the workspace of an
invitation), sign-in sessions, password changes, workspaces.

A session is a random token in an HttpOnly, SameSite=Lax cookie, stored hashed; a second
random token, readable by the page, must come back in ``X-CSRF-Token`` on every state-changing
request (double submit, bound to the session).

Passwords are hashed off the event loop (:mod:`lineup.hub.security`); wrong ones slow down
further tries of the same account from anywhere (``limits.signin_by_account``), counted the
same whether or not the account exists, so the wait says nothing about who has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineup.hub import invitations
from lineup.hub.actors import Person
from lineup.hub.password_policy import check_password
from lineup.hub.recorder import Writing
from lineup.hub.security import (
    hash_password,
    hash_password_off_loop,
    new_token,
    token_hash,
    verify_password_off_loop,
)
from lineup.hub.state import HubState
from lineup.protocol import facts, fields
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.store import Reader, SessionRecord, User
from lineup.store import auth as store_auth


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str
    csrf_token: str
    user: User
    expires_at_ms: int


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


async def sign_in(hub: HubState, email: str, password: str) -> NewSession:
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
    return await start_session(hub, user)


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
        return store_auth.revoke_other_sessions(w.connection, user.id, signed.session.id, w.now_ms)

    ended = await hub.recorder.run(job)
    hub.live_sessions.ended(user.id, keep=signed.session.id)
    return ended


async def sign_out_other_sessions(hub: HubState, signed: SignedIn) -> int:
    """End every session of this person but the one asking; returns how many were ended."""

    def job(w: Writing) -> int:
        return store_auth.revoke_other_sessions(
            w.connection, signed.user.id, signed.session.id, w.now_ms
        )

    ended = await hub.recorder.run(job)
    hub.live_sessions.ended(signed.user.id, keep=signed.session.id)
    return ended


async def any_accounts(hub: HubState) -> bool:
    return await hub.store.read(lambda r: store_auth.any_password_account(r.connection))


async def start_session(hub: HubState, user: User) -> NewSession:
    token = new_token("lns")
    csrf = new_token("csrf")
    ttl_ms = int(hub.settings.session_ttl * 1000)

    def job(w: Writing) -> NewSession:
        record = SessionRecord(
            id=new_id("sess"),
            token_hash=token_hash(token),
            user_id=user.id,
            csrf_token_hash=token_hash(csrf),
            created_at=w.now_ms,
            expires_at=w.now_ms + ttl_ms,
        )
        store_auth.insert_session(w.connection, record)
        return NewSession(token, csrf, user, record.expires_at)

    return await hub.recorder.run(job)


@dataclass(frozen=True, slots=True)
class SignedIn:
    session: SessionRecord
    user: User


async def session_user(hub: HubState, token: str | None) -> SignedIn:
    if not token:
        raise Unauthenticated("Sign in to continue.")

    def read(r: Reader) -> tuple[SessionRecord | None, User | None]:
        session = store_auth.get_session_by_token_hash(r.connection, token_hash(token))
        return session, None if session is None else r.get_user(session.user_id)

    session, user = await hub.store.read(read)
    if session is None or session.revoked_at is not None or session.expires_at <= hub.clock():
        raise Unauthenticated("Your session has ended; sign in again.")
    if user is None:
        raise Unauthenticated("Your session has ended; sign in again.")
    return SignedIn(session, user)


async def sign_out(hub: HubState, session: SessionRecord) -> None:
    def job(w: Writing) -> None:
        store_auth.revoke_session(w.connection, session.id, w.now_ms)

    await hub.recorder.run(job)
    hub.live_sessions.ended(session.user_id, only=session.id)


async def person_in(hub: HubState, user: User, workspace_id: str) -> Person:
    """The signed-in user acting in ``workspace_id``; a non-member is told nothing about it."""
    membership = await hub.store.read(lambda r: r.get_membership(workspace_id, user.id))
    if membership is None:
        raise Forbidden("You are not a member of this workspace.")
    return Person(user.id, user.display_name, workspace_id, membership.role)


_DUMMY_HASH = hash_password("lineup-timing-equaliser")
