"""Invitations: how a workspace owner lets a person in.

An owner makes one; its code is shown once and kept only as a hash (like a pairing code). The
code works once, until it expires (``invitation_ttl``, a week by default): signing up with it,
or accepting it while signed in, makes that person a member of the workspace — recorded as the
workspace's ``member.joined`` event, like any other membership.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineup.hub.actors import Person
from lineup.hub.recorder import Writing
from lineup.hub.security import new_invitation_code, normalise_pairing_code, token_hash
from lineup.hub.state import HubState
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, NotFound
from lineup.protocol.ids import new_id
from lineup.store import InvitationRecord, Reader, User
from lineup.store import auth as store_auth

MEMBER = "member"


@dataclass(frozen=True, slots=True)
class NewInvitation:
    code: str
    record: InvitationRecord


def _owner_only(person: Person) -> None:
    if person.role != "owner":
        raise Forbidden("Only a workspace owner can manage invitations.")


def code_hash(code: str) -> str:
    return token_hash("invitation:" + normalise_pairing_code(code))


async def create(hub: HubState, person: Person) -> NewInvitation:
    _owner_only(person)
    code = new_invitation_code()
    ttl_ms = int(hub.settings.invitation_ttl * 1000)

    def job(w: Writing) -> InvitationRecord:
        record = InvitationRecord(
            id=new_id("inv"),
            workspace_id=person.workspace_id,
            code_hash=code_hash(code),
            role=MEMBER,
            created_by=person.user_id,
            created_at=w.now_ms,
            expires_at=w.now_ms + ttl_ms,
        )
        store_auth.insert_invitation(w.connection, record)
        return record

    return NewInvitation(code, await hub.recorder.run(job))


async def listed(hub: HubState, person: Person) -> list[InvitationRecord]:
    _owner_only(person)
    return await hub.store.read(
        lambda r: store_auth.list_invitations(r.connection, person.workspace_id)
    )


async def revoke(hub: HubState, person: Person, invitation_id: str) -> None:
    _owner_only(person)

    def job(w: Writing) -> None:
        if not store_auth.revoke_invitation(
            w.connection, person.workspace_id, invitation_id, w.now_ms
        ):
            raise NotFound("No unused invitation with that id in this workspace.")

    await hub.recorder.run(job)


def _unusable() -> InvalidArgument:
    return InvalidArgument(
        "That invitation code is not valid, was already used or has expired; "
        "ask a workspace owner for a new one.",
        details={"field": "invitationCode"},
    )


def check_usable(r: Reader, code: str, now_ms: int) -> None:
    """Raise ``invalid_argument`` unless ``code`` is an unused, unexpired invitation."""
    invitation = store_auth.get_invitation_by_hash(r.connection, code_hash(code))
    if invitation is None or invitation.used_at is not None or invitation.expires_at <= now_ms:
        raise _unusable()


def join(w: Writing, user: User, code: str) -> str:
    """Spend the invitation ``code`` on ``user`` and record them joining; returns the workspace
    id. Runs inside the caller's write job, so a refused sign-up spends nothing."""
    invitation = store_auth.get_invitation_by_hash(w.connection, code_hash(code))
    if invitation is None:
        raise _unusable()
    if w.read.get_membership(invitation.workspace_id, user.id) is not None:
        raise Conflict("You are already a member of that workspace.")
    if not store_auth.use_invitation(w.connection, invitation.id, user.id, w.now_ms):
        raise _unusable()
    w.append(
        invitation.workspace_id,
        facts.MemberJoinedPayload(
            user_id=user.id,
            email=user.email,
            display_name=user.display_name,
            role=invitation.role,
        ),
        actor=f"user:{user.id}",
    )
    return invitation.workspace_id


async def accept(hub: HubState, user: User, code: str) -> str:
    """A signed-in person joins the invitation's workspace; returns its id."""
    return await hub.recorder.run(lambda w: join(w, user, code))
