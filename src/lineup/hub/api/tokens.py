"""A person's developer tokens: made, listed and revoked from a signed-in browser only."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Response
from pydantic import Field

from lineup.hub import tokens
from lineup.hub.api.deps import Body, Hub, SignedInUser
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import View
from lineup.protocol.times import iso
from lineup.store import DeveloperTokenRecord

router = APIRouter(prefix="/api", tags=["accounts"])

Scope = Literal["read", "write"]


class NewToken(Body):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    scopes: Annotated[
        list[Scope], Field(min_length=1, max_length=2, default_factory=lambda: ["read"])
    ]
    expires_in_days: Annotated[int | None, Field(ge=1, le=tokens.MAX_DAYS)] = None
    workspace_id: Annotated[str | None, Field(max_length=128)] = None
    """Limits the token to this one workspace; without it, every workspace of the person."""


class TokenView(View):
    id: str
    name: str
    scopes: list[Scope]
    workspace_id: str | None
    created_at: str
    expires_at: str | None
    last_used_at: str | None
    revoked_at: str | None
    status: Literal["active", "expired", "revoked"]


class CreatedToken(TokenView):
    token: str
    """Shown this once; the hub keeps only its hash."""


class TokenList(View):
    tokens: list[TokenView]


def _view(record: DeveloperTokenRecord, now_ms: int) -> dict[str, object]:
    status = (
        "revoked"
        if record.revoked_at is not None
        else "expired"
        if record.expires_at is not None and record.expires_at <= now_ms
        else "active"
    )
    return {
        "id": record.id,
        "name": record.name,
        "scopes": record.scopes,
        "workspace_id": record.workspace_id,
        "created_at": iso(record.created_at),
        "expires_at": iso(record.expires_at),
        "last_used_at": iso(record.last_used_at),
        "revoked_at": iso(record.revoked_at),
        "status": status,
    }


@router.post("/tokens", status_code=201, **answers(CreatedToken, 400, 401, 403, 413))
async def create_token(body: NewToken, hub: Hub, signed: SignedInUser) -> CreatedToken:
    """A developer token for scripts (``Authorization: Bearer lut_…``), shown once."""
    new = await tokens.create(
        hub,
        signed.user,
        name=body.name,
        scopes=body.scopes,
        expires_in_days=body.expires_in_days,
        workspace_id=body.workspace_id,
    )
    return CreatedToken.model_validate({**_view(new.record, hub.clock()), "token": new.token})


@router.get("/tokens", **answers(TokenList, 401, 403))
async def list_tokens(hub: Hub, signed: SignedInUser) -> TokenList:
    records = await tokens.listed(hub, signed.user)
    now = hub.clock()
    return TokenList(tokens=[TokenView.model_validate(_view(r, now)) for r in records])


@router.delete("/tokens/{token_id}", status_code=204, **answers(None, 400, 401, 403, 404))
async def revoke_token(
    hub: Hub, signed: SignedInUser, token_id: Annotated[str, Path(max_length=128)]
) -> Response:
    """Ends the token at once: its next request is ``401``."""
    await tokens.revoke(hub, signed.user, token_id)
    return Response(status_code=204)
