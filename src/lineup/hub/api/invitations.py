"""Invitations to a workspace: made, listed and revoked by its owners; accepted by a person."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Response
from pydantic import Field

from lineup.hub import invitations
from lineup.hub.api.deps import Body, Hub, Member, SignedInUser
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import View
from lineup.protocol.times import iso
from lineup.store import InvitationRecord

router = APIRouter(prefix="/api", tags=["accounts"])


class InvitationCode(Body):
    code: Annotated[str, Field(min_length=1, max_length=100)]


ProjectRole = Literal["owner", "editor", "viewer"]


class NewInvitation(Body):
    project_id: Annotated[str | None, Field(max_length=128)] = None
    """Also make the person a member of this project."""
    project_role: ProjectRole | None = None
    """Their role in ``project_id`` (``viewer`` unless given)."""


class InvitationView(View):
    id: str
    role: str
    project_id: str | None
    project_role: ProjectRole | None
    created_by: str
    created_at: str
    expires_at: str
    used_at: str | None
    status: Literal["open", "used", "expired"]
    """``used`` also covers a revoked invitation: either way its code no longer works."""


class CreatedInvitation(InvitationView):
    code: str
    """Shown this once; the hub keeps only its hash."""


class InvitationList(View):
    invitations: list[InvitationView]


class Joined(View):
    workspace_id: str


def _view(record: InvitationRecord, now_ms: int) -> dict[str, object]:
    status = (
        "used"
        if record.used_at is not None
        else "expired"
        if record.expires_at <= now_ms
        else "open"
    )
    return {
        "id": record.id,
        "role": record.role,
        "project_id": record.project_id,
        "project_role": record.project_role,
        "created_by": record.created_by,
        "created_at": iso(record.created_at),
        "expires_at": iso(record.expires_at),
        "used_at": iso(record.used_at),
        "status": status,
    }


@router.post(
    "/workspaces/{workspace_id}/invitations",
    status_code=201,
    **answers(CreatedInvitation, 400, 401, 403, 404, 413),
)
async def create_invitation(
    hub: Hub, person: Member, body: NewInvitation | None = None
) -> CreatedInvitation:
    """A single-use code that lets one person join this workspace (workspace owners), and with
    ``projectId`` also that project with ``projectRole`` (its owners too)."""
    asked = body or NewInvitation()
    new = await invitations.create(hub, person, asked.project_id, asked.project_role)
    return CreatedInvitation.model_validate({**_view(new.record, hub.clock()), "code": new.code})


@router.get("/workspaces/{workspace_id}/invitations", **answers(InvitationList, 400, 401, 403))
async def list_invitations(hub: Hub, person: Member) -> InvitationList:
    records = await invitations.listed(hub, person)
    now = hub.clock()
    return InvitationList(
        invitations=[InvitationView.model_validate(_view(r, now)) for r in records]
    )


@router.delete(
    "/workspaces/{workspace_id}/invitations/{invitation_id}",
    status_code=204,
    **answers(None, 400, 401, 403, 404),
)
async def revoke_invitation(
    hub: Hub, person: Member, invitation_id: Annotated[str, Path(max_length=128)]
) -> Response:
    await invitations.revoke(hub, person, invitation_id)
    return Response(status_code=204)


@router.post("/invitations/accept", **answers(Joined, 400, 401, 403, 409, 413, 429))
async def accept_invitation(body: InvitationCode, hub: Hub, signed: SignedInUser) -> Joined:
    """A signed-in person joins the invitation's workspace."""
    return Joined(workspace_id=await invitations.accept(hub, signed.user, body.code))
