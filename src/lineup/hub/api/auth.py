"""Sign-up, sign-in, sign-out, passwords and the people's own workspaces."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request, Response
from pydantic import Field

from lineup.hub import accounts
from lineup.hub.api import responses, views
from lineup.hub.api.deps import (
    CSRF_HEADER,
    REFRESH_PATH,
    Body,
    Hub,
    Member,
    SignedInUser,
    csrf_cookie,
    refresh_cookie,
    session_cookie,
)
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import View
from lineup.hub.state import HubState
from lineup.protocol.times import iso

router = APIRouter(prefix="/api", tags=["accounts"])


class SignUp(Body):
    email: Annotated[str, Field(max_length=254)]
    password: Annotated[str, Field(max_length=1024)]
    display_name: Annotated[str, Field(max_length=100)] = ""
    workspace_name: Annotated[str, Field(max_length=100)] | None = None
    invitation_code: Annotated[str, Field(max_length=100)] | None = None


class SignIn(Body):
    email: Annotated[str, Field(max_length=254)]
    password: Annotated[str, Field(max_length=1024)]


class NewWorkspace(Body):
    name: Annotated[str, Field(min_length=1, max_length=100)]


class PasswordChange(Body):
    current_password: Annotated[str, Field(max_length=1024)]
    new_password: Annotated[str, Field(max_length=1024)]


class AuthOptions(View):
    signup: Literal["open", "invite", "closed"]
    """Who may create an account here (the hub's ``LINEUP_SIGNUP``)."""
    has_accounts: bool
    """False on a new hub: its first visitor creates the first account."""


class SessionsEnded(View):
    signed_out_sessions: int
    """How many of this person's other sessions were ended."""


class Refreshed(View):
    access_expires_at: str
    """When the new access token stops opening the API (the app refreshes again then)."""
    session_expires_at: str
    """When the session itself ends, however often it is refreshed: sign in again then."""


class SessionView(View):
    id: str
    created_at: str
    last_used_at: str
    expires_at: str
    user_agent: str | None
    """The browser or client that signed in, as it named itself."""
    current: bool
    """This is the session asking (this device)."""


class SessionList(View):
    sessions: list[SessionView]


def _set_cookies(response: Response, hub: HubState, session: accounts.NewSession) -> None:
    """The access token for every route, the refresh token for the refresh route only (both
    unreadable by the page), and the CSRF token the page reads. The cookies live as long as
    the session; the access token inside them lasts minutes (the hub says when it expired)."""
    max_age = max(1, (session.expires_at_ms - hub.clock()) // 1000)
    secure = hub.settings.secure_cookies
    response.set_cookie(
        session_cookie(hub.settings),
        session.access_token,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    response.set_cookie(
        refresh_cookie(hub.settings),
        session.refresh_token,
        max_age=max_age,
        httponly=True,
        samesite="strict",
        secure=secure,
        path=REFRESH_PATH,
    )
    if session.csrf_token is not None:
        response.set_cookie(
            csrf_cookie(hub.settings),
            session.csrf_token,
            max_age=max_age,
            httponly=False,
            samesite="lax",
            secure=secure,
            path="/",
        )


def _clear_cookies(response: Response, hub: HubState) -> None:
    response.delete_cookie(session_cookie(hub.settings), path="/")
    response.delete_cookie(refresh_cookie(hub.settings), path=REFRESH_PATH)
    response.delete_cookie(csrf_cookie(hub.settings), path="/")


def _user_agent(request: Request) -> str | None:
    return request.headers.get("user-agent")


async def _me(hub: HubState, user_id: str) -> dict[str, Any]:
    user, workspaces = await hub.store.read(
        lambda r: (r.get_user(user_id), r.list_user_workspaces(user_id))
    )
    assert user is not None
    return {"user": views.user(user), "workspaces": [views.workspace(w) for w in workspaces]}


@router.get("/auth/options", **answers(AuthOptions))
async def auth_options(hub: Hub) -> AuthOptions:
    """What the sign-in screen should offer; asked before anyone is signed in."""
    return AuthOptions(
        signup=hub.settings.signup,
        has_accounts=await accounts.any_accounts(hub),
    )


@router.post(
    "/auth/signup", status_code=201, **answers(responses.SignedUp, 400, 403, 409, 413, 429)
)
async def sign_up(body: SignUp, request: Request, response: Response, hub: Hub) -> dict[str, Any]:
    """Create an account and its first workspace — or, with an invitation code, join the
    invitation's workspace — and sign in."""
    assert hub.limits is not None
    accounts.check_signup_allowed(hub.settings.signup, body.invitation_code)
    hub.limits.signin_by_ip.check(_ip(request), "sign-up")
    user, workspace_id = await accounts.sign_up(
        hub,
        body.email,
        body.password,
        body.display_name,
        body.workspace_name,
        body.invitation_code,
    )
    session = await accounts.start_session(hub, user, _user_agent(request))
    _set_cookies(response, hub, session)
    return {**await _me(hub, user.id), "workspaceId": workspace_id, "csrfToken": session.csrf_token}


@router.post("/auth/signin", **answers(responses.SignedIn, 400, 401, 403, 413, 429))
async def sign_in(body: SignIn, request: Request, response: Response, hub: Hub) -> dict[str, Any]:
    assert hub.limits is not None
    hub.limits.signin_by_ip.check(_ip(request), "sign-in")
    session = await accounts.sign_in(hub, body.email, body.password, _user_agent(request))
    _set_cookies(response, hub, session)
    return {**await _me(hub, session.user.id), "csrfToken": session.csrf_token}


@router.post("/auth/signout", status_code=204, **answers(None, 401, 403))
async def sign_out(response: Response, hub: Hub, signed: SignedInUser) -> Response:
    await accounts.sign_out(hub, signed.session)
    _clear_cookies(response, hub)
    response.status_code = 204
    return response


@router.post(REFRESH_PATH.removeprefix("/api"), **answers(Refreshed, 401, 403))
async def refresh(request: Request, response: Response, hub: Hub) -> Refreshed:
    """Spend the refresh cookie for a new access token and refresh token (both set as
    cookies). A refresh token works once: presented again, it ends the whole session."""
    session = await accounts.refresh(
        hub,
        request.cookies.get(refresh_cookie(hub.settings)),
        request.headers.get(CSRF_HEADER, ""),
    )
    _set_cookies(response, hub, session)
    return Refreshed(
        access_expires_at=iso(session.access_expires_at_ms),
        session_expires_at=iso(session.expires_at_ms),
    )


@router.get("/auth/sessions", **answers(SessionList, 401, 403))
async def list_sessions(hub: Hub, signed: SignedInUser) -> SessionList:
    """This person's live sessions, the most recently used first; ``current`` is this one."""
    records = await accounts.list_sessions(hub, signed.user)
    return SessionList(
        sessions=[
            SessionView(
                id=r.id,
                created_at=iso(r.created_at),
                last_used_at=iso(r.last_used_at),
                expires_at=iso(r.expires_at),
                user_agent=r.user_agent,
                current=r.id == signed.session.id,
            )
            for r in records
        ]
    )


@router.delete("/auth/sessions/{session_id}", status_code=204, **answers(None, 400, 401, 403, 404))
async def end_session(
    hub: Hub, signed: SignedInUser, session_id: Annotated[str, Path(max_length=128)]
) -> Response:
    """End one of this person's sessions: its tokens stop working at once, its live updates
    close. Ending this very session signs this device out."""
    await accounts.end_session(hub, signed.user, session_id)
    response = Response(status_code=204)
    if session_id == signed.session.id:
        _clear_cookies(response, hub)
    return response


@router.post("/auth/password", **answers(SessionsEnded, 400, 401, 403, 413, 429))
async def change_password(body: PasswordChange, hub: Hub, signed: SignedInUser) -> SessionsEnded:
    """Change the password (the current one is needed); every other session ends."""
    ended = await accounts.change_password(hub, signed, body.current_password, body.new_password)
    return SessionsEnded(signed_out_sessions=ended)


@router.post("/auth/signout-others", **answers(SessionsEnded, 401, 403))
async def sign_out_others(hub: Hub, signed: SignedInUser) -> SessionsEnded:
    """End every session of this person except this one (a lost phone, a shared computer)."""
    ended = await accounts.sign_out_other_sessions(hub, signed)
    return SessionsEnded(signed_out_sessions=ended)


@router.get("/auth/me", **answers(responses.Me, 401))
async def me(hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    return await _me(hub, signed.user.id)


@router.get("/workspaces", **answers(responses.Workspaces, 401))
async def list_workspaces(hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    return {"workspaces": (await _me(hub, signed.user.id))["workspaces"]}


@router.post("/workspaces", status_code=201, **answers(responses.Workspace, 400, 401, 403, 413))
async def create_workspace(body: NewWorkspace, hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    workspace_id = await hub.recorder.run(
        lambda w: accounts.create_workspace(w, signed.user, body.name.strip())
    )
    return {"id": workspace_id, "name": body.name.strip(), "role": "owner"}


def _ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.get("/workspaces/{workspace_id}/members", **answers(responses.Members, 400, 401, 403))
async def list_members(hub: Hub, person: Member) -> dict[str, Any]:
    """Who belongs to the workspace, so apps can name the people in timelines."""
    members = await hub.store.read(lambda r: r.list_members(person.workspace_id))
    return {
        "members": [
            {**views.user(m.user), "role": m.role, "joinedAt": iso(m.joined_at)} for m in members
        ]
    }
