"""Layered settings in the hub: where each level's values live, who may set them, and the
effective value for a place (see :mod:`lineup.domain.settings` for the rules of resolution).

A place is a workspace, optionally a project, a person and a conversation. Who may set a level:
the workspace's owners (workspace), the project's owners and the workspace's owners (project),
only the person themself (user; per workspace), and for a conversation the owners and editors
of its project — or, for a personal conversation, the person who started it. Every change is
audited (``setting.changed``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from lineup.domain import settings as layered
from lineup.domain.retention import RetentionPolicy
from lineup.domain.settings import Effective, Layers, Level
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.config import Settings
from lineup.hub.recorder import Writing
from lineup.hub.sight import visible_project
from lineup.hub.translate import domain_rules
from lineup.protocol.errors import Forbidden, InvalidArgument, NotFound
from lineup.store import Conversation, Reader
from lineup.store import governance as gov_store
from lineup.store import settings as store

MAX_KEYS_PER_CHANGE = 50
DEFAULT_PROJECT = "conversations.defaultProjectId"


@dataclass(frozen=True, slots=True)
class Place:
    workspace_id: str
    project_id: str | None = None
    user_id: str | None = None
    conversation_id: str | None = None

    def scope_id(self, level: Level) -> str | None:
        return {
            "system": None,
            "workspace": self.workspace_id,
            "project": self.project_id,
            "user": self.user_id,
            "conversation": self.conversation_id,
        }[level]


def system_values(config: Settings) -> dict[str, Any]:
    """The system level: the catalogue's defaults, with the hub's configuration where it has
    a say."""
    return {
        "approvals.ttlMinutes": max(1, round(config.approval_ttl / 60)),
        "retention.maxAgeDays": config.retention_days,
        "retention.maxEvents": config.retention_max_events,
        "tasks.cancelTimeoutMinutes": max(1, round(config.cancel_timeout / 60)),
    }


def layers_of(r: Reader, config: Settings, place: Place) -> dict[Level, dict[str, Any]]:
    found: dict[Level, dict[str, Any]] = {"system": system_values(config)}
    for level in layered.SETTABLE:
        scope_id = place.scope_id(level)
        if scope_id is not None:
            found[level] = store.values_at(r.connection, place.workspace_id, level, scope_id)
    return found


def resolve(layers: Layers) -> dict[str, Effective]:
    return {name: layered.effective(key, layers) for name, key in layered.CATALOGUE.items()}


def user_of(conversation: Conversation) -> str | None:
    kind, _, ident = (conversation.created_by or "").partition(":")
    return ident if kind == "user" and ident else None


class Where(Protocol):
    """A call's place, as governance knows it."""

    @property
    def project_id(self) -> str | None: ...
    @property
    def user_id(self) -> str | None: ...
    @property
    def conversation_id(self) -> str | None: ...


def approval_ttl_of(r: Reader, config: Settings, workspace_id: str, where: Where) -> int:
    """Milliseconds a new approval waits, for a call in this conversation: its effective
    ``approvals.ttlMinutes`` (the user level is the conversation's starter's); with nothing
    set, the hub's ``approval_ttl`` exactly."""
    place = Place(workspace_id, where.project_id, where.user_id, where.conversation_id)
    found = layered.effective(
        layered.CATALOGUE["approvals.ttlMinutes"], layers_of(r, config, place)
    )
    if found.level == "system":
        return int(config.approval_ttl * 1000)
    return int(found.value) * 60_000


def retention_policy_of(r: Reader, config: Settings, workspace_id: str) -> RetentionPolicy:
    """The workspace's effective log retention: its own ``retention.*`` where set, else the
    hub's ``LINEUP_RETENTION_*``."""
    layers = layers_of(r, config, Place(workspace_id))
    age = layered.effective(layered.CATALOGUE["retention.maxAgeDays"], layers)
    size = layered.effective(layered.CATALOGUE["retention.maxEvents"], layers)
    return RetentionPolicy.of(int(age.value or 0), int(size.value or 0))


def cancel_timeout_of(r: Reader, config: Settings, workspace_id: str) -> int:
    """Milliseconds a requested cancel waits for the agent: the workspace's
    ``tasks.cancelTimeoutMinutes`` where set, else the hub's ``cancel_timeout`` exactly."""
    found = layered.effective(
        layered.CATALOGUE["tasks.cancelTimeoutMinutes"], layers_of(r, config, Place(workspace_id))
    )
    if found.level == "system":
        return max(1, int(config.cancel_timeout * 1000))
    return int(found.value) * 60_000


def standing_limits(
    config: Settings, workspace_id: str, project_id: str | None
) -> Callable[[Reader, int | None, int | None], None]:
    """A check of a standing permission's minutes and calls against the project's effective
    ``approvals.standingMaxMinutes`` and ``approvals.standingMaxCalls``."""

    def check(r: Reader, minutes: int | None, calls: int | None) -> None:
        layers = layers_of(r, config, Place(workspace_id, project_id))
        most = {
            name: layered.effective(layered.CATALOGUE[name], layers)
            for name in ("approvals.standingMaxMinutes", "approvals.standingMaxCalls")
        }
        for asked, name, field in (
            (minutes, "approvals.standingMaxMinutes", "minutes"),
            (calls, "approvals.standingMaxCalls", "calls"),
        ):
            if asked is not None and asked > int(most[name].value):
                raise InvalidArgument(
                    f"A standing permission here allows at most {most[name].value} {field} "
                    f"(the {most[name].level}'s setting {name}).",
                    details={"field": f"standing.{field}", "key": name},
                )

    return check


# --- who sees and who sets -----------------------------------------------------------------


def visible_conversation(r: Reader, person: Person, conversation_id: str) -> Conversation:
    conversation = r.get_conversation(person.workspace_id, conversation_id)
    if conversation is None or (
        conversation.project_id is not None
        and _project_role(r, person, conversation.project_id) is None
        and person.role != "owner"
    ):
        raise NotFound(
            f"No conversation {conversation_id!r} in this workspace.",
            details={"conversationId": conversation_id},
        )
    return conversation


def _project_role(r: Reader, person: Person, project_id: str) -> str | None:
    return gov_store.project_role(r.connection, project_id, person.user_id)


def place_for(
    r: Reader, person: Person, project_id: str | None, conversation_id: str | None
) -> Place:
    """The place a person asks about: a conversation brings its project and its starter (whose
    user level governs it); otherwise the user level is the caller's own."""
    if conversation_id is not None:
        conversation = visible_conversation(r, person, conversation_id)
        if project_id is not None and project_id != conversation.project_id:
            raise InvalidArgument(
                "That conversation is not in that project; give one or the other.",
                details={"projectId": project_id, "conversationId": conversation_id},
            )
        return Place(
            person.workspace_id,
            conversation.project_id,
            user_of(conversation) or person.user_id,
            conversation_id,
        )
    if project_id is not None:
        visible_project(r, person, project_id)
    return Place(person.workspace_id, project_id, person.user_id, None)


def check_may_set(r: Reader, person: Person, level: str, scope_id: str) -> Level:
    if level == "workspace":
        if scope_id != person.workspace_id:
            raise NotFound("The workspace level's id is the workspace's own id.")
        if person.role != "owner":
            raise Forbidden("Only a workspace owner can change the workspace's settings.")
        return "workspace"
    if level == "project":
        visible_project(r, person, scope_id)
        if _project_role(r, person, scope_id) != "owner" and person.role != "owner":
            raise Forbidden("Only the project's owners can change its settings.")
        return "project"
    if level == "user":
        if scope_id != person.user_id:
            raise Forbidden("People change only their own settings.")
        return "user"
    if level == "conversation":
        conversation = visible_conversation(r, person, scope_id)
        if conversation.project_id is not None:
            if _project_role(r, person, conversation.project_id) not in ("owner", "editor"):
                raise Forbidden(
                    "Only the project's owners and editors can change a conversation's settings."
                )
        elif conversation.created_by != person.actor:
            raise Forbidden("Only whoever started a personal conversation can change its settings.")
        return "conversation"
    raise NotFound(
        f"There is no settings level {level!r}; levels: {', '.join(layered.SETTABLE)}.",
        details={"level": level},
    )


def change(
    w: Writing, person: Person, level: str, scope_id: str, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Set (``None``: clear) each of ``values`` at one level, all or none; returns what that
    level holds afterwards."""
    checked = check_may_set(w.read, person, level, scope_id)
    if not values:
        raise InvalidArgument("Name at least one setting to change.")
    if len(values) > MAX_KEYS_PER_CHANGE:
        raise InvalidArgument(f"At most {MAX_KEYS_PER_CHANGE} settings at once.")
    with domain_rules():
        for name, value in values.items():
            layered.check_value(name, checked, value)
    project = values.get(DEFAULT_PROJECT)
    ws = person.workspace_id
    if project is not None and gov_store.get_project(w.read.connection, ws, project) is None:
        raise InvalidArgument(
            f"{DEFAULT_PROJECT}: there is no project {project!r} in this workspace.",
            details={"key": DEFAULT_PROJECT},
        )
    for name, value in values.items():
        before = store.put_value(
            w.connection, ws, checked, scope_id, name, value, at=w.now_ms, by=person.actor
        )
        if before != value:
            audit.record(
                w,
                "setting.changed",
                workspace_id=ws,
                actor=person.actor,
                subject=f"{checked}:{scope_id}",
                data={"key": name, "value": value, "before": before},
            )
    return store.values_at(w.connection, ws, checked, scope_id)
