"""Request context: the hub, the signed-in person, CSRF, and the idempotency key."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Header, Path, Request
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from lineup.hub.accounts import SignedIn, person_in, session_user
from lineup.hub.actors import Person
from lineup.hub.config import Settings
from lineup.hub.security import same_secret, token_hash
from lineup.hub.state import HubState
from lineup.protocol.errors import Forbidden, InvalidArgument

CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_SEQUENCE = 2**63 - 1
"""The largest sequence a query may name: both databases store sequences as signed 64-bit."""
_KEY = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")


class Body(BaseModel):
    """Request bodies: camelCase on the wire like everything else."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


def hub_of(request: Request) -> HubState:
    hub: HubState = request.app.state.hub
    return hub


Hub = Annotated[HubState, Depends(hub_of)]


def session_cookie(settings: Settings) -> str:
    return f"{settings.cookie_prefix}_session"


def csrf_cookie(settings: Settings) -> str:
    """Read by the web app (its name is in ``GET /api/direct``) for the CSRF header."""
    return f"{settings.cookie_prefix}_csrf"


async def signed_in(request: Request, hub: Hub) -> SignedIn:
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


async def person(
    hub: Hub, signed: SignedInUser, workspace_id: Annotated[str, Path(max_length=128)]
) -> Person:
    return await person_in(hub, signed.user, workspace_id)


Member = Annotated[Person, Depends(person)]


def idempotency_key(
    key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> str | None:
    """A client's key for a state change, used as the event id: a retry does nothing twice."""
    if key is None:
        return None
    if not _KEY.match(key):
        raise InvalidArgument(
            "Idempotency-Key must be 1–100 letters, digits or _ . : -",
            details={"header": "Idempotency-Key"},
        )
    return f"http.{key}"


IdempotencyKey = Annotated[str | None, Depends(idempotency_key)]
