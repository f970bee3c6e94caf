"""A person's accounts on the hub's outside systems (Settings → Accounts): what is bound,
binding by OAuth or by a username and password given once, and unbinding.

Each person sees and changes only their own bindings, in a workspace they are a member of.
The OAuth callback is where the system's authorization server sends the browser back: it
is a browser's navigation, not an API call, so it answers with a redirect to the web app and
is left out of the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import Field

from lineup.hub.accounts import session_user
from lineup.hub.api.deps import Body, Hub, Member, session_cookie
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import Timestamp, View
from lineup.hub.governance import bindings
from lineup.protocol.errors import Unauthenticated
from lineup.protocol.times import iso
from lineup.store import User

router = APIRouter(prefix="/api", tags=["accounts"])

ProviderId = Annotated[str, Path(min_length=1, max_length=64)]
Instance = Annotated[str, Path(min_length=1, max_length=100)]
SYSTEM = "/workspaces/{workspace_id}/bindings/{provider_id}/{instance}"


class AccountView(View):
    provider_id: str
    provider_name: str
    instance: str
    auth_kind: Literal["oauth", "password-exchange", "apikey"]
    """``apikey``: the hub's operator holds one key for everyone; nobody binds."""
    status: Literal["bound", "expired", "not_bound"]
    account: str | None
    """Who the system says the person is."""
    expires_at: Timestamp | None
    """When the credentials run out; an OAuth token is renewed before then."""
    bound_at: Timestamp | None
    expired_reason: str | None


class AccountList(View):
    accounts: list[AccountView]


class OAuthStart(Body):
    return_to: Annotated[str, Field(max_length=500)] | None = None
    """A path of the web app to come back to (default ``/settings``)."""


class OAuthStarted(View):
    authorization_url: str
    """Where to send the browser: the system's sign-in page."""


class PasswordExchange(Body):
    username: Annotated[str, Field(min_length=1, max_length=500)]
    password: Annotated[str, Field(min_length=1, max_length=1000, repr=False)]


def _view(a: bindings.AccountStatus) -> AccountView:
    return AccountView.model_validate(
        {
            "provider_id": a.provider,
            "provider_name": a.provider_name,
            "instance": a.instance,
            "auth_kind": a.auth_kind,
            "status": a.status,
            "account": a.account,
            "expires_at": iso(a.expires_at),
            "bound_at": iso(a.bound_at),
            "expired_reason": a.expired_reason,
        }
    )


@router.get("/workspaces/{workspace_id}/bindings", **answers(AccountList, 401, 403))
async def list_bindings(hub: Hub, person: Member) -> AccountList:
    """Every system that needs a sign-in, with the caller's standing on it."""
    found = await bindings.accounts(hub, person)
    return AccountList(accounts=[_view(a) for a in found])


@router.post(f"{SYSTEM}/oauth", **answers(OAuthStarted, 401, 403, 404, 409, 413, 429))
async def start_oauth(
    provider_id: ProviderId, instance: Instance, body: OAuthStart, hub: Hub, person: Member
) -> OAuthStarted:
    """Start binding by OAuth: the web app navigates to ``authorizationUrl``; the system's
    sign-in sends the browser back to the hub within ten minutes."""
    url = await bindings.start_oauth(hub, person, provider_id, instance, body.return_to)
    return OAuthStarted(authorization_url=url)


@router.post(f"{SYSTEM}/password", status_code=204, **answers(None, 401, 403, 404, 413, 429, 503))
async def bind_password(
    provider_id: ProviderId,
    instance: Instance,
    body: PasswordExchange,
    hub: Hub,
    person: Member,
) -> Response:
    """Exchange a username and password once; the hub keeps only what the system gave."""
    await bindings.bind_password(hub, person, provider_id, instance, body.username, body.password)
    return Response(status_code=204)


@router.delete(SYSTEM, status_code=204, **answers(None, 401, 403, 404))
async def unbind(provider_id: ProviderId, instance: Instance, hub: Hub, person: Member) -> Response:
    """Unbind: the secret goes; the history stays."""
    await bindings.unbind(hub, person, provider_id, instance)
    return Response(status_code=204)


@router.get(bindings.CALLBACK_PATH.removeprefix("/api"), include_in_schema=False)
async def oauth_callback(
    request: Request,
    hub: Hub,
    state: Annotated[str, Query(min_length=1, max_length=200)],
    code: Annotated[str | None, Query(max_length=4000)] = None,
    error: Annotated[str | None, Query(max_length=200)] = None,
) -> RedirectResponse:
    """The authorization server's redirect: bind, then back to the web app's settings."""
    user: User | None
    try:
        user = (await session_user(hub, request.cookies.get(session_cookie(hub.settings)))).user
    except Unauthenticated:
        user = None
    where = await bindings.finish_oauth(hub, state=state, code=code, error=error, user=user)
    return RedirectResponse(where, status_code=303)
