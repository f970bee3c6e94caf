"""Who sees what of a workspace once it has projects (seed 003 §1: permissions follow the
project). A project's conversations — their messages, tasks, cards, tool calls, artifacts —
and its governance (approvals, executions, permissions, rules, members) are seen by the
project's members and by the workspace's owners; a person's account bindings by that person
alone; everything else of the workspace by every member, as before projects. In a project,
viewers read: only owners and editors act (post, start tasks, cancel, answer cards and tool
calls).

A :class:`Sight` is loaded once per request or per people's socket; on a socket it follows
the log (:meth:`Sight.sees` observes every event, shown or not), so a conversation made or a
membership changed later is judged rightly without reloading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lineup.hub.actors import Person
from lineup.protocol.errors import Forbidden, NotFound
from lineup.store import RawEvent, Reader, StoredEvent, event_of_raw
from lineup.store import governance as gov_store

ACTING_ROLES = frozenset({"owner", "editor"})


@dataclass
class Sight:
    person: Person
    everything: bool
    """A workspace owner sees every project."""
    roles: dict[str, str]
    """Project → the person's role there."""
    conversations: dict[str, str] = field(default_factory=dict)
    """Conversation → project, for the workspace's project conversations."""
    tasks: dict[str, str] = field(default_factory=dict)
    """Task → project, for the tasks of project conversations."""

    @classmethod
    def load(cls, read: Reader, person: Person) -> Sight:
        maps = gov_store.sight_maps(read.connection, person.workspace_id, person.user_id)
        return cls(
            person=person,
            everything=person.role == "owner",
            roles=maps.roles,
            conversations=maps.conversations,
            tasks=maps.tasks,
        )

    # --- judging ---------------------------------------------------------------------------

    def sees_project(self, project_id: str | None) -> bool:
        return project_id is None or self.everything or project_id in self.roles

    def project_of(self, conversation_id: str | None, task_id: str | None) -> str | None:
        if conversation_id is not None and conversation_id in self.conversations:
            return self.conversations[conversation_id]
        if task_id is not None:
            return self.tasks.get(task_id)
        return None

    def sees_item(self, conversation_id: str | None, task_id: str | None = None) -> bool:
        return self.sees_project(self.project_of(conversation_id, task_id))

    def check_item(
        self, what: str, conversation_id: str | None, task_id: str | None = None
    ) -> None:
        """Someone outside the project is told there is no such thing, as for another
        workspace's ids."""
        if not self.sees_item(conversation_id, task_id):
            raise NotFound(f"No {what} in this workspace.")

    def check_acting(self, conversation_id: str | None, task_id: str | None = None) -> None:
        """Only a project's owners and editors act in it; viewers (and workspace owners who
        are not members) read."""
        project = self.project_of(conversation_id, task_id)
        if project is None:
            return
        if not self.sees_project(project):
            raise NotFound("No such conversation or task in this workspace.")
        if self.roles.get(project) not in ACTING_ROLES:
            raise Forbidden(
                "Viewers of a project read its conversations; an owner or editor acts in them.",
                details={"reason": "role", "projectId": project},
            )

    def sees(self, event: StoredEvent) -> bool:
        """Whether the person sees ``event``; every event passes through, so the maps and the
        person's roles follow the log."""
        self._observe(event)
        return self.shows(event)

    def sees_raw(self, raw: RawEvent) -> bool:
        """:meth:`sees` for an event read back with its payload as text, which is decoded
        only for the few types whose payload the sight reads (a replay judges 100,000)."""
        if raw.type in READS_PAYLOAD:
            return self.sees(event_of_raw(raw))
        if self.everything:
            return True
        return self.sees_project(self.project_of(raw.conversation_id, raw.task_id))

    def shows(self, event: StoredEvent) -> bool:
        """Whether the person sees ``event``, judged by what the sight knows now, without
        learning from it: for reading back events out of the log's order."""
        if event.type in PERSONAL_FACTS:
            return event.payload.get("userId") == self.person.user_id
        if self.everything:
            return True
        payload = event.payload
        project = payload.get("projectId") if event.type in PROJECT_FACTS else None
        if project is None:
            project = self.project_of(event.conversation_id, event.task_id)
        return self.sees_project(project if isinstance(project, str) else None)

    def _observe(self, event: StoredEvent) -> None:
        kind = event.type
        if kind not in WATCHED:
            return
        payload: dict[str, Any] = event.payload
        if kind == "conversation.created":
            conversation = payload.get("conversationId") or event.conversation_id
            if payload.get("projectId") and conversation:
                self.conversations[str(conversation)] = str(payload["projectId"])
        elif kind in ("task.created", "task.child_created"):
            task = payload.get("taskId") or payload.get("childTaskId") or event.task_id
            project = self.project_of(event.conversation_id, payload.get("parentTaskId"))
            if task and project:
                self.tasks[str(task)] = project
        elif kind == "project.created" and payload.get("createdBy") == self.person.user_id:
            self.roles[str(payload["projectId"])] = "owner"
        elif kind == "project.member_set" and payload.get("userId") == self.person.user_id:
            self.roles[str(payload["projectId"])] = str(payload["role"])
        elif kind == "project.member_removed" and payload.get("userId") == self.person.user_id:
            self.roles.pop(str(payload["projectId"]), None)


WATCHED = frozenset(
    {
        "conversation.created",
        "task.created",
        "task.child_created",
        "project.created",
        "project.member_set",
        "project.member_removed",
    }
)

PROJECT_FACTS = frozenset(
    {
        "project.created",
        "project.updated",
        "project.member_set",
        "project.member_removed",
        "policy.rule_set",
        "capability.invoked",
        "approval.requested",
        "permission.granted",
    }
)
"""Facts that name their project in the payload (``projectId``); the others of a project are
found by their conversation or task."""

PERSONAL_FACTS = frozenset({"binding.bound", "binding.expired", "binding.removed"})
"""Facts about one person's own accounts on outside systems (``userId``): seen by that person
alone; the audit chain keeps them for the operator."""

READS_PAYLOAD = WATCHED | PROJECT_FACTS | PERSONAL_FACTS
"""The types whose payload :meth:`Sight.sees` reads; of the others it reads the ids alone."""


def visible_project(read: Reader, person: Person, project_id: str) -> gov_store.Project:
    """The project, if the person may see it (a member, or the workspace's owner); else
    ``not_found``, as another workspace's would be."""
    project = gov_store.get_project(read.connection, person.workspace_id, project_id)
    role = (
        None
        if project is None
        else gov_store.project_role(read.connection, project_id, person.user_id)
    )
    if project is None or (role is None and person.role != "owner"):
        raise NotFound(
            f"No project {project_id!r} in this workspace.", details={"projectId": project_id}
        )
    return project


def visible_projects(read: Reader, person: Person) -> dict[str, str | None]:
    """Project id → the person's role there, for every project they may see (a workspace
    owner's role is ``None`` in projects they are not a member of)."""
    mine: dict[str, str | None] = dict(
        gov_store.user_projects(read.connection, person.workspace_id, person.user_id)
    )
    if person.role == "owner":
        for project in gov_store.list_projects(read.connection, person.workspace_id):
            mine.setdefault(project.id, None)
    return mine


def project_of(
    read: Reader, workspace_id: str, conversation_id: str | None, task_id: str | None
) -> str | None:
    """The project a conversation (or else a task's conversation) belongs to, looked up."""
    if conversation_id is None and task_id is not None:
        task = read.get_task(workspace_id, task_id)
        conversation_id = None if task is None else task.conversation_id
    if conversation_id is None:
        return None
    conversation = read.get_conversation(workspace_id, conversation_id)
    return None if conversation is None else conversation.project_id


def check_acting(
    read: Reader, person: Person, conversation_id: str | None, task_id: str | None = None
) -> None:
    """For one command: only a project's owners and editors act in its conversations."""
    project = project_of(read, person.workspace_id, conversation_id, task_id)
    if project is None:
        return
    role = gov_store.project_role(read.connection, project, person.user_id)
    if role is None and person.role != "owner":
        raise NotFound("No such conversation or task in this workspace.")
    if role not in ACTING_ROLES:
        raise Forbidden(
            "Viewers of a project read its conversations; an owner or editor acts in them.",
            details={"reason": "role", "projectId": project},
        )
