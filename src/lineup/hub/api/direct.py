"""Direct mode's part of the hub (seed 000 §3.1): the hub embedded in one agent's
process, for one person, with a pre-shared token instead of accounts and pairing.

* ``GET /api/direct`` tells the web app which mode it talks to (``hub`` or ``direct``), so it
  shows the token screen instead of sign-in.
* ``POST /api/direct/session {token}`` exchanges the pre-shared token for the same session
  cookie and CSRF token that sign-in gives. The token is compared in constant time (as
  SHA-256 digests, so its length does not leak either); attempts are throttled per client
  address; it is never logged or echoed.
* :func:`prepare` makes the one workspace, person and agent (with the in-process agent's
  credential) when the embedded hub starts.
* :class:`RefuseInDirectMode` answers the endpoints that make no sense with one person and one
  agent (sign-up, sign-in, more workspaces, pairing, revoking the agent, notifications, the
  unauthenticated ``/metrics``) with ``forbidden`` and a ``details.diagnostic`` of
  ``LNP-DIRECT-MODE``.

The embedding itself (the temporary database, the server, the runner) is :mod:`lineup.direct`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send

from lineup.hub import accounts
from lineup.hub.api import responses
from lineup.hub.api.auth import _ip, _me, _set_cookies
from lineup.hub.api.deps import Body, Hub, csrf_cookie
from lineup.hub.api.openapi import answers
from lineup.hub.config import DirectMode
from lineup.hub.credentials import CREDENTIAL_PREFIX
from lineup.hub.errors import error_response
from lineup.hub.recorder import Writing
from lineup.hub.security import new_token, same_secret, token_hash
from lineup.hub.state import HubState
from lineup.protocol import facts
from lineup.protocol.errors import Forbidden, NotFound, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.store import AgentCredentialRecord
from lineup.store import auth as store_auth

router = APIRouter(prefix="/api", tags=["direct mode"])

DIAGNOSTIC = "LNP-DIRECT-MODE"
PERSON_EMAIL = "direct-mode@lineup.invalid"
_NEXT_STEP = (
    "This LineUp runs inside one agent in direct mode: there are no accounts, no pairing and "
    "no notifications. Open it with the token printed where the agent runs (lineup direct)."
)


class TokenSignIn(Body):
    token: Annotated[str, Field(min_length=1, max_length=512)]


@router.get("/direct", **answers(responses.DirectInfo, database=False))
async def direct_info(hub: Hub) -> dict[str, Any]:
    """Which LineUp this is: a hub (``{"mode": "hub"}``) or one agent in direct mode."""
    direct = hub.settings.direct
    cookie = csrf_cookie(hub.settings)
    if direct is None:
        return {"mode": "hub", "csrfCookie": cookie}
    return {"mode": "direct", "agentName": direct.agent_name, "csrfCookie": cookie}


@router.post("/direct/session", **answers(responses.SignedUp, 400, 401, 404, 413, 429))
async def direct_session(
    body: TokenSignIn, request: Request, response: Response, hub: Hub
) -> dict[str, Any]:
    """Exchange the pre-shared token for a session (direct mode only)."""
    direct = hub.settings.direct
    if direct is None:
        raise NotFound("This LineUp is a hub, not an agent in direct mode; sign in instead.")
    assert hub.limits is not None
    # Sign-in is off in direct mode, so its per-address limiter guards the token alone.
    # Every attempt counts, checked before comparing: a throttled guess is never tried.
    hub.limits.signin_by_ip.check(_ip(request), "token")
    if not token_matches(direct, body.token):
        raise Unauthenticated(
            "That token is not right. Use the token printed where the agent runs.",
            details={"field": "token"},
        )
    user = await hub.store.read(lambda r: r.get_user(direct.user_id))
    if user is None:  # prepare() made it at start; only a broken start gets here
        raise Unauthenticated("Direct mode is not ready yet; try again in a moment.")
    session = await accounts.start_session(hub, user, request.headers.get("user-agent"))
    _set_cookies(response, hub, session)
    return {
        **await _me(hub, user.id),
        "workspaceId": direct.workspace_id,
        "csrfToken": session.csrf_token,
    }


def token_matches(direct: DirectMode, given: str) -> bool:
    """Constant time: digests of equal length are compared, whatever was sent."""
    return same_secret(token_hash(given.strip()), token_hash(direct.token))


async def prepare(hub: HubState, direct: DirectMode) -> None:
    """Make the workspace, the person and the agent (with its credential) of direct mode."""

    def job(w: Writing) -> None:
        if w.read.get_workspace(direct.workspace_id) is not None:
            return  # already made (a restarted lifespan on the same database)
        person = f"user:{direct.user_id}"
        ws = direct.workspace_id
        w.append(
            ws,
            facts.WorkspaceCreatedPayload(
                workspace_id=ws, name=direct.agent_name, owner_user_id=direct.user_id
            ),
            actor=person,
        )
        w.append(
            ws,
            facts.MemberJoinedPayload(
                user_id=direct.user_id,
                email=PERSON_EMAIL,
                display_name=direct.person_name,
                role="owner",
            ),
            actor=person,
        )
        w.append(
            ws,
            facts.AgentPairedPayload(agent_id=direct.agent_id, name=direct.agent_name),
            actor=person,
        )
        store_auth.insert_agent_credential(
            w.connection,
            AgentCredentialRecord(
                id=new_id("cred"),
                agent_id=direct.agent_id,
                workspace_id=ws,
                secret_hash=token_hash(direct.agent_credential),
                created_at=w.now_ms,
            ),
        )

    await hub.recorder.run(job)


def new_agent_credential() -> str:
    """A credential for the agent in the same process (never shown to anyone)."""
    return new_token(CREDENTIAL_PREFIX)


# --- what direct mode refuses ---------------------------------------------------------------

_REFUSED: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("POST", re.compile(r"^/api/auth/signup/?$"), "Creating an account"),
    ("POST", re.compile(r"^/api/auth/signin/?$"), "Signing in with a password"),
    ("POST", re.compile(r"^/api/auth/password/?$"), "Changing a password"),
    ("POST", re.compile(r"^/api/workspaces/[^/]+/invitations/?$"), "Inviting people"),
    ("POST", re.compile(r"^/api/invitations/accept/?$"), "Joining another workspace"),
    ("POST", re.compile(r"^/api/workspaces/?$"), "Creating another workspace"),
    ("POST", re.compile(r"^/api/pairing/redeem/?$"), "Pairing"),
    ("POST", re.compile(r"^/api/workspaces/[^/]+/pairing-codes/?$"), "Pairing"),
    ("POST", re.compile(r"^/api/workspaces/[^/]+/agents/[^/]+/revoke/?$"), "Revoking the agent"),
    (
        "POST",
        re.compile(r"^/api/workspaces/[^/]+/agents/[^/]+/credential/rotate/?$"),
        "Rotating the credential",
    ),
    ("POST", re.compile(r"^/api/agent/credential/rotate/?$"), "Rotating the credential"),
    ("POST", re.compile(r"^/api/notifications/devices/?$"), "Notifications"),
    ("PUT", re.compile(r"^/api/notifications/preferences/?$"), "Notifications"),
    ("POST", re.compile(r"^/api/notifications/test/?$"), "Notifications"),
    # the hub's Prometheus counters would tell anyone on the network what the agent does
    ("GET", re.compile(r"^/metrics/?$"), "Metrics"),
)


def refusal(method: str, path: str) -> Forbidden | None:
    """The error for an endpoint direct mode does not offer, or None when it is offered."""
    for refused_method, pattern, what in _REFUSED:
        if method == refused_method and pattern.match(path):
            return Forbidden(
                f"{what} is not available in direct mode.",
                details={"diagnostic": DIAGNOSTIC, "nextStep": _NEXT_STEP},
            )
    return None


class RefuseInDirectMode:
    """ASGI middleware, installed only in direct mode: answers refused endpoints itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            error = refusal(scope["method"], scope["path"])
            if error is not None:
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


__all__ = [
    "DIAGNOSTIC",
    "RefuseInDirectMode",
    "TokenSignIn",
    "new_agent_credential",
    "prepare",
    "refusal",
    "router",
    "token_matches",
]
