"""Request context: the hub, the signed-in person, CSRF, and the idempotency key."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Path, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from lineup.domain.errors import DomainError
from lineup.hub import tokens
from lineup.hub.accounts import SignedIn, person_in, session_user
from lineup.hub.actors import Person
from lineup.hub.config import Settings
from lineup.hub.security import same_secret, token_hash
from lineup.hub.state import HubState
from lineup.protocol.errors import (
    Conflict,
    Forbidden,
    InvalidArgument,
    LineupError,
    Unauthenticated,
    UnknownResult,
)
from lineup.store import DeveloperTokenRecord, User, idempotency
from lineup.store.idempotency import KeyBinding

CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_KEY = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
MAX_SEQUENCE = 2**53 - 1
"""The largest sequence a query may name: the largest integer every JSON client holds
exactly, well inside the databases' BIGINT (with room for the reads' own arithmetic)."""


class Body(BaseModel):
    """Request bodies: camelCase on the wire like everything else."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


async def hub_of(request: Request) -> HubState:
    # async, as every dependency here: FastAPI runs a plain ``def`` in its thread pool,
    # a hop that costs a busy hub milliseconds
    hub: HubState = request.app.state.hub
    return hub


Hub = Annotated[HubState, Depends(hub_of)]


def session_cookie(settings: Settings) -> str:
    return f"{settings.cookie_prefix}_session"


REFRESH_PATH = "/api/auth/refresh"
"""The one route the refresh cookie is sent to."""


def refresh_cookie(settings: Settings) -> str:
    """The session's refresh token, sent by the browser to :data:`REFRESH_PATH` only."""
    return f"{settings.cookie_prefix}_refresh"


def csrf_cookie(settings: Settings) -> str:
    """Read by the web app (its name is in ``GET /api/direct``) for the CSRF header."""
    return f"{settings.cookie_prefix}_csrf"


def developer_token(request: Request) -> str | None:
    """A ``lut_…`` token sent as ``Authorization: Bearer``, if any."""
    scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
    sent = sent.strip()
    return sent if scheme.lower() == "bearer" and tokens.looks_like_token(sent) else None


async def signed_in(request: Request, hub: Hub) -> SignedIn:
    """A browser's session. A developer token is refused here: the routes that need a session
    (tokens, passwords, sessions, workspaces) are the ones a script's key must not reach."""
    if developer_token(request) is not None:
        raise Forbidden(
            "A developer token works only on a workspace's routes (/api/workspaces/{ws}/…); "
            "sign in to manage tokens, passwords and sessions.",
            details={"header": "Authorization"},
        )
    signed = await session_user(hub, request.cookies.get(session_cookie(hub.settings)))
    if request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not sent or not same_secret(token_hash(sent), signed.session.csrf_token_hash):
            raise Forbidden(
                "This request lacks a valid CSRF token; reload the page and try again.",
                details={"header": CSRF_HEADER},
            )
    return signed


SignedInUser = Annotated[SignedIn, Depends(signed_in)]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request to a workspace's route: a signed-in browser, or a script with one
    of the person's developer tokens (``token``)."""

    user: User
    token: DeveloperTokenRecord | None = None


async def caller(request: Request, hub: Hub) -> Caller:
    sent = developer_token(request)
    if sent is None:
        return Caller((await signed_in(request, hub)).user)
    record, user = await tokens.authenticate(hub, sent)
    if request.method not in SAFE_METHODS and "write" not in record.scopes:
        raise Forbidden(
            "This developer token may only read (scope read); make one with the write scope "
            "to change things.",
            details={"scope": "write"},
        )
    return Caller(user, record)


WorkspaceCaller = Annotated[Caller, Depends(caller)]


async def person(
    hub: Hub, who: WorkspaceCaller, workspace_id: Annotated[str, Path(max_length=128)]
) -> Person:
    if who.token is not None and who.token.workspace_id not in (None, workspace_id):
        raise Forbidden("You are not a member of this workspace.")
    return await person_in(hub, who.user, workspace_id)


Member = Annotated[Person, Depends(person)]


async def idempotency_header(
    key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> str | None:
    """The ``Idempotency-Key`` header, checked: for a route that binds the key to its caller
    and content itself (an agent's upload names its file by agent and key)."""
    if key is None:
        return None
    if not _KEY.match(key):
        raise InvalidArgument(
            "Idempotency-Key must be 1–100 letters, digits or _ . : -",
            details={"header": "Idempotency-Key"},
        )
    return f"http.{key}"


IdempotencyHeader = Annotated[str | None, Depends(idempotency_header)]


async def idempotency_key(
    request: Request,
    hub: Hub,
    signed: WorkspaceCaller,
    header: IdempotencyHeader,
) -> AsyncIterator[str | None]:
    """A client's key for a state change, bound to the caller, the method, the path and the
    body of its first request: a retry does nothing twice, and the same key on another
    request is a ``conflict`` rather than a silent replay of the first answer.

    Yields the event id the route records under: made from the caller and the key, so two
    people's keys never meet and a key names one event. A request refused outright (invalid,
    not found, a conflict…) did nothing, so it releases a key it bound: the person may correct
    the request and send it again with the same key. One whose outcome is unknown keeps it.
    """
    if header is None:
        yield None
        return
    scoped = hashlib.sha256(f"{signed.user.id}\x1f{header}".encode()).hexdigest()
    asked = KeyBinding(request.method, request.url.path, _body_hash(await request.body()))
    bound, new = await hub.store.write(
        lambda tx: idempotency.bind_key(tx.connection, scoped, asked, hub.clock())
    )
    if bound != asked:
        same_request = (bound.method, bound.path) == (asked.method, asked.path)
        raise Conflict(
            (
                "This Idempotency-Key was first sent with a different body; "
                if same_request
                else f"This Idempotency-Key was first used for {bound.method} {bound.path}; "
            )
            + "use a new key for a new request.",
            details={
                "header": "Idempotency-Key",
                "reason": "different_body" if same_request else "different_request",
            },
        )
    try:
        yield f"http.{scoped[:40]}"
    except (LineupError, DomainError, RequestValidationError) as exc:
        if new and not isinstance(exc, UnknownResult):
            await hub.store.write(lambda tx: idempotency.release_key(tx.connection, scoped, asked))
        raise


def _body_hash(body: bytes) -> str:
    """The body's SHA-256; JSON in one canonical form, so a resend that orders its keys or
    spaces its text differently is still the same request."""
    try:
        canonical = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    except ValueError:
        canonical = body
    return hashlib.sha256(canonical).hexdigest()


IdempotencyKey = Annotated[str | None, Depends(idempotency_key)]


async def operator_only(request: Request, hub: Hub) -> None:
    """The operators' endpoints (metrics, the cluster's state): with ``LINEUP_METRICS_TOKEN``
    set, for whoever sends it as a bearer token; without, only for callers on this machine.
    They name nodes, leases and traffic, nothing a stranger on the network should read."""
    token = hub.settings.metrics_token
    if token:
        scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not same_secret(sent.strip(), token):
            raise Unauthenticated(
                "This endpoint needs the metrics token as a bearer token.",
                details={"header": "Authorization"},
            )
        return
    if not _is_loopback(request.client.host if request.client else ""):
        raise Forbidden(
            "This endpoint answers only on the hub's own machine unless the hub has a metrics "
            "token (LINEUP_METRICS_TOKEN)."
        )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
