"""Invitations: how a workspace owner lets a person in.

An owner makes one; its code is shown once and kept only as a hash (like a pairing code). The
code works once, until it expires (``invitation_ttl``, a week by default): signing up with it,
or accepting it while signed in, makes that person a member of the workspace — recorded as the
workspace's ``member.joined`` event, like any other membership.

An invitation may also name a project and a role there (``owner``, ``editor``, ``viewer``):
joining then records that project's ``project.member_set`` too, in the same transaction, and
audits it. The workspace's owners make any invitation; a project's owners make invitations
into their project (and see and revoke the invitations they made). A person already in the
workspace may accept an invitation into a project they are not yet in. An invitation into a
project stops working if whoever made it may no longer make it (no longer an owner there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from lineup.core import policy
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.projects import Role
from lineup.hub.recorder import Writing
from lineup.hub.security import new_invitation_code, normalise_pairing_code, token_hash
from lineup.hub.state import HubState
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, NotFound
from lineup.protocol.ids import new_id
from lineup.store import InvitationRecord, Reader, User
from lineup.store import auth as store_auth
from lineup.store import governance as gov_store

MEMBER = "member"


@dataclass(frozen=True, slots=True)
class NewInvitation:
    code: str
    record: InvitationRecord


def _may_invite(r: Reader, person: Person, project_id: str | None) -> None:
    if person.role == "owner":
        if (
            project_id is not None
            and gov_store.get_project(r.connection, person.workspace_id, project_id) is None
        ):
            raise _no_project(project_id)
        return
    if project_id is None:
        raise Forbidden(
            "Only a workspace owner can invite people into the workspace; a project's owners "
            "can invite them into their project."
        )
    if gov_store.get_project(r.connection, person.workspace_id, project_id) is None:
        raise _no_project(project_id)
    if gov_store.project_role(r.connection, project_id, person.user_id) != "owner":
        raise Forbidden("Only the project's owners (or a workspace owner) can invite people to it.")


def _still_may_invite(r: Reader, workspace_id: str, project_id: str, user_id: str) -> bool:
    """An invitation into a project holds while whoever made it may still make it."""
    membership = r.get_membership(workspace_id, user_id)
    if membership is None:
        return False
    return (
        membership.role == "owner"
        or gov_store.project_role(r.connection, project_id, user_id) == "owner"
    )


def _no_project(project_id: str) -> NotFound:
    return NotFound(
        f"No project {project_id!r} in this workspace.", details={"projectId": project_id}
    )


def code_hash(code: str) -> str:
    return token_hash("invitation:" + normalise_pairing_code(code))


async def create(
    hub: HubState,
    person: Person,
    project_id: str | None = None,
    project_role: str | None = None,
) -> NewInvitation:
    if project_id is None and project_role is not None:
        raise InvalidArgument(
            "A projectRole needs the projectId it is for.", details={"field": "projectRole"}
        )
    role = None if project_id is None else project_role or "viewer"
    if role is not None and role not in policy.ROLES:
        raise InvalidArgument(
            f"A project role is one of {', '.join(policy.ROLES)}.",
            details={"field": "projectRole"},
        )
    code = new_invitation_code()
    ttl_ms = int(hub.settings.invitation_ttl * 1000)

    def job(w: Writing) -> InvitationRecord:
        _may_invite(w.read, person, project_id)
        record = InvitationRecord(
            id=new_id("inv"),
            workspace_id=person.workspace_id,
            code_hash=code_hash(code),
            role=MEMBER,
            created_by=person.user_id,
            created_at=w.now_ms,
            expires_at=w.now_ms + ttl_ms,
            project_id=project_id,
            project_role=role,
        )
        store_auth.insert_invitation(w.connection, record)
        return record

    return NewInvitation(code, await hub.recorder.run(job))


def _mine(person: Person, records: list[InvitationRecord]) -> list[InvitationRecord]:
    """A workspace owner sees every invitation; anyone else those they made."""
    if person.role == "owner":
        return records
    return [r for r in records if r.created_by == person.user_id]


async def listed(hub: HubState, person: Person) -> list[InvitationRecord]:
    def read(r: Reader) -> list[InvitationRecord]:
        if (
            person.role != "owner"
            and "owner"
            not in gov_store.user_projects(
                r.connection, person.workspace_id, person.user_id
            ).values()
        ):
            raise Forbidden("Only workspace and project owners manage invitations.")
        return _mine(person, store_auth.list_invitations(r.connection, person.workspace_id))

    return await hub.store.read(read)


async def revoke(hub: HubState, person: Person, invitation_id: str) -> None:
    def job(w: Writing) -> None:
        mine = _mine(person, store_auth.list_invitations(w.connection, person.workspace_id))
        if not any(r.id == invitation_id for r in mine) or not store_auth.revoke_invitation(
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
    """Spend the invitation ``code`` on ``user`` and record them joining (the workspace, and
    the invitation's project with its role); returns the workspace id. Runs inside the caller's
    write job, so a refused sign-up spends nothing."""
    invitation = store_auth.get_invitation_by_hash(w.connection, code_hash(code))
    if invitation is None:
        raise _unusable()
    ws = invitation.workspace_id
    project_id = invitation.project_id
    member = w.read.get_membership(ws, user.id) is not None
    if member and project_id is None:
        raise Conflict("You are already a member of that workspace.")
    if (
        member
        and project_id is not None
        and gov_store.project_role(w.connection, project_id, user.id) is not None
    ):
        raise Conflict("You are already a member of that project.")
    if not store_auth.use_invitation(w.connection, invitation.id, user.id, w.now_ms):
        raise _unusable()
    actor = f"user:{user.id}"
    if not member:
        w.append(
            ws,
            facts.MemberJoinedPayload(
                user_id=user.id,
                email=user.email,
                display_name=user.display_name,
                role=invitation.role,
            ),
            actor=actor,
        )
    if project_id is not None and invitation.project_role in policy.ROLES:
        if gov_store.get_project(w.connection, ws, project_id) is None or not _still_may_invite(
            w.read, ws, project_id, invitation.created_by
        ):
            raise _unusable()
        w.append(
            ws,
            facts.ProjectMemberSetPayload(
                project_id=project_id,
                user_id=user.id,
                role=cast(Role, invitation.project_role),
                set_by=f"user:{invitation.created_by}",
            ),
            actor=actor,
        )
        audit.record(
            w,
            "role.changed",
            workspace_id=ws,
            actor=actor,
            subject=f"project:{project_id}",
            data={
                "userId": user.id,
                "role": invitation.project_role,
                "before": None,
                "invitationId": invitation.id,
                "invitedBy": invitation.created_by,
            },
        )
    return ws


async def accept(hub: HubState, user: User, code: str) -> str:
    """A signed-in person joins the invitation's workspace; returns its id."""
    return await hub.recorder.run(lambda w: join(w, user, code))
