"""Projects inside a workspace (seed 003 §1): a working directory or business context, and
members with roles — ``owner`` (manages members and rules, approves), ``editor`` (works in its
conversations, approves), ``viewer`` (reads). Changes to what an agent may do happen only in a
project's conversations, because approvals, audit and evidence all belong to a project.

Whoever makes a project is its first owner. Its owners (and the workspace's owners) manage its
members; a project always keeps at least one owner. Every role change is audited.
"""

from __future__ import annotations

from typing import Literal

from lineup.core import policy
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.commands import derived_id
from lineup.hub.recorder import Writing
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, NotFound
from lineup.protocol.ids import new_id
from lineup.store import governance as gov_store
from lineup.store.governance import Project

Role = Literal["owner", "editor", "viewer"]


def project_in(w: Writing, workspace_id: str, project_id: str) -> Project:
    project = gov_store.get_project(w.read.connection, workspace_id, project_id)
    if project is None:
        raise NotFound(
            f"No project {project_id!r} in this workspace.", details={"projectId": project_id}
        )
    return project


def _manage(w: Writing, person: Person, project: Project) -> None:
    role = gov_store.project_role(w.read.connection, project.id, person.user_id)
    if role != "owner" and person.role != "owner":
        raise Forbidden("Only the project's owners can manage its members and settings.")


def create(
    w: Writing,
    person: Person,
    *,
    name: str,
    context: str | None,
    working_directory: str | None,
    event_id: str | None = None,
) -> Project:
    ws = person.workspace_id
    project_id = derived_id("prj", ws, person.actor, event_id) if event_id else new_id("prj")
    existing = gov_store.get_project(w.read.connection, ws, project_id)
    if existing is not None:
        return existing
    w.append(
        ws,
        facts.ProjectCreatedPayload(
            project_id=project_id,
            name=name,
            context=context or None,
            working_directory=working_directory or None,
            created_by=person.user_id,
        ),
        actor=person.actor,
        event_id=event_id,
    )
    audit.record(
        w,
        "role.changed",
        workspace_id=ws,
        actor=person.actor,
        subject=f"project:{project_id}",
        data={"userId": person.user_id, "role": "owner", "reason": "created the project"},
    )
    return project_in(w, ws, project_id)


def update(
    w: Writing,
    person: Person,
    project_id: str,
    *,
    name: str | None,
    context: str | None,
    working_directory: str | None,
) -> Project:
    project = project_in(w, person.workspace_id, project_id)
    _manage(w, person, project)
    w.append(
        person.workspace_id,
        facts.ProjectUpdatedPayload(
            project_id=project_id,
            name=name,
            context=context,
            working_directory=working_directory,
        ),
        actor=person.actor,
    )
    return project_in(w, person.workspace_id, project_id)


def set_member(w: Writing, person: Person, project_id: str, user_id: str, role: str) -> None:
    if role not in policy.ROLES:
        raise InvalidArgument(
            f"A role is one of {', '.join(policy.ROLES)}.", details={"role": role}
        )
    ws = person.workspace_id
    project = project_in(w, ws, project_id)
    _manage(w, person, project)
    if w.read.get_membership(ws, user_id) is None:
        raise NotFound(
            "That person is not a member of this workspace; invite them first.",
            details={"userId": user_id},
        )
    before = gov_store.project_role(w.read.connection, project_id, user_id)
    if before == role:
        return
    if before == "owner":
        _keep_an_owner(w, project_id, user_id)
    w.append(
        ws,
        facts.ProjectMemberSetPayload(
            project_id=project_id,
            user_id=user_id,
            role=role,
            set_by=person.actor,
        ),
        actor=person.actor,
    )
    audit.record(
        w,
        "role.changed",
        workspace_id=ws,
        actor=person.actor,
        subject=f"project:{project_id}",
        data={"userId": user_id, "role": role, "before": before},
    )


def remove_member(w: Writing, person: Person, project_id: str, user_id: str) -> None:
    ws = person.workspace_id
    project = project_in(w, ws, project_id)
    if user_id != person.user_id:
        _manage(w, person, project)
    before = gov_store.project_role(w.read.connection, project_id, user_id)
    if before is None:
        return
    if before == "owner":
        _keep_an_owner(w, project_id, user_id)
    w.append(
        ws,
        facts.ProjectMemberRemovedPayload(
            project_id=project_id, user_id=user_id, removed_by=person.actor
        ),
        actor=person.actor,
    )
    audit.record(
        w,
        "role.changed",
        workspace_id=ws,
        actor=person.actor,
        subject=f"project:{project_id}",
        data={"userId": user_id, "role": None, "before": before},
    )


def _keep_an_owner(w: Writing, project_id: str, leaving: str) -> None:
    owners = [
        m.user_id
        for m in gov_store.list_project_members(w.read.connection, project_id)
        if m.role == "owner" and m.user_id != leaving
    ]
    if not owners:
        raise Conflict(
            "A project keeps at least one owner; make someone else owner first.",
            details={"projectId": project_id},
        )
