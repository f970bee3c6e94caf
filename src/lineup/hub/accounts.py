"""People's accounts: sign-up (with a first workspace), sign-in sessions, workspaces.

A session is a random token in an HttpOnly, SameSite=Lax cookie, stored hashed; a second
random token, readable by the page, must come back in ``X-CSRF-Token`` on every state-changing
request (double submit, bound to the session).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lineup.hub.actors import Person
from lineup.hub.recorder import Writing
from lineup.hub.security import hash_password, new_token, token_hash, verify_password
from lineup.hub.state import HubState
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.store import Reader, SessionRecord, User
from lineup.store import auth as store_auth

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MIN_PASSWORD = 8


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str
    csrf_token: str
    user: User
    expires_at_ms: int


def normalise_email(email: str) -> str:
    clean = email.strip().lower()
    if not EMAIL.match(clean) or len(clean) > 254:
        raise InvalidArgument("Enter a valid email address.", details={"field": "email"})
    return clean


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise InvalidArgument(
            f"Choose a password of at least {MIN_PASSWORD} characters.",
            details={"field": "password"},
        )
    if len(password) > 1024:
        raise InvalidArgument("That password is too long.", details={"field": "password"})


def create_workspace(w: Writing, user: User, name: str, role: str = "owner") -> str:
    workspace_id = new_id("ws")
    w.append(
        workspace_id,
        "workspace.created",
        {"workspaceId": workspace_id, "name": name, "ownerUserId": user.id},
        actor=f"user:{user.id}",
    )
    w.append(
        workspace_id,
        "member.joined",
        {"userId": user.id, "email": user.email, "displayName": user.display_name, "role": role},
        actor=f"user:{user.id}",
    )
    return workspace_id


async def sign_up(
    hub: HubState, email: str, password: str, display_name: str, workspace_name: str | None
) -> tuple[User, str]:
    """Create a person and their first workspace; return the user and the workspace id."""
    clean_email = normalise_email(email)
    check_password(password)
    name = display_name.strip() or clean_email.split("@")[0]
    password_hash = hash_password(password)

    def job(w: Writing) -> tuple[User, str]:
        if w.read.get_user_by_email(clean_email) is not None:
            raise Conflict(
                "An account with this email already exists; sign in instead.",
                details={"field": "email"},
            )
        user = User(id=new_id("user"), email=clean_email, display_name=name, created_at=w.now_ms)
        workspace_id = create_workspace(w, user, workspace_name or f"{name}'s workspace")
        store_auth.set_password_hash(w.connection, user.id, password_hash)
        return user, workspace_id

    return await hub.recorder.run(job)


async def sign_in(hub: HubState, email: str, password: str) -> NewSession:
    failure = Unauthenticated("The email or password is not right.")
    try:
        clean_email = normalise_email(email)
    except InvalidArgument:
        raise failure from None

    def read(r: Reader) -> tuple[User | None, str | None]:
        user = r.get_user_by_email(clean_email)
        return user, None if user is None else store_auth.get_password_hash(r.connection, user.id)

    user, stored = await hub.store.read(read)
    if user is None or stored is None:
        verify_password(_DUMMY_HASH, password)  # same work either way: no user enumeration
        raise failure
    if not verify_password(stored, password):
        raise failure
    return await start_session(hub, user)


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


async def person_in(hub: HubState, user: User, workspace_id: str) -> Person:
    """The signed-in user acting in ``workspace_id``; a non-member is told nothing about it."""
    membership = await hub.store.read(lambda r: r.get_membership(workspace_id, user.id))
    if membership is None:
        raise Forbidden("You are not a member of this workspace.")
    return Person(user.id, user.display_name, workspace_id, membership.role)


_DUMMY_HASH = hash_password("lineup-timing-equaliser")
