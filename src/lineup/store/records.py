"""Typed, immutable rows handed out by the store.

Field names equal column names so a row maps onto a record without a hand-written adapter;
JSON columns come back as plain lists and dicts with the wire's camelCase keys.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Self

from sqlalchemy import Row


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


class _FromRow:
    @classmethod
    def from_row(cls, row: Row[Any] | Mapping[str, Any]) -> Self:
        data = row._mapping if isinstance(row, Row) else row
        return cls(**{name: data[name] for name in _field_names(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class Workspace(_FromRow):
    id: str
    name: str
    last_sequence: int
    created_at: int


@dataclass(frozen=True)
class User(_FromRow):
    id: str
    email: str
    display_name: str
    created_at: int


@dataclass(frozen=True)
class Membership(_FromRow):
    workspace_id: str
    user_id: str
    role: str
    created_at: int


@dataclass(frozen=True)
class Member:
    """A user as seen from one workspace."""

    user: User
    role: str
    joined_at: int


@dataclass(frozen=True)
class UserWorkspace:
    """A workspace as seen from one of its members."""

    workspace: Workspace
    role: str
    joined_at: int


@dataclass(frozen=True)
class Agent(_FromRow):
    id: str
    workspace_id: str
    name: str
    runtime: str | None
    agent_version: str | None
    status: str
    capabilities: list[str]
    tools: list[dict[str, Any]]
    last_heartbeat_at: int | None
    connected_at: int | None
    revoked_at: int | None
    created_at: int
    updated_at: int
    offline_at: int | None = None
    confirmed_at: int | None = None
    """When a person confirmed it; None while it awaits confirmation (it gets no work)."""
    settings_schema: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    paired_sequence: int | None = None
    """The sequence of the event that paired it: nothing before can be addressed to it."""

    @property
    def confirmed(self) -> bool:
        return self.confirmed_at is not None


@dataclass(frozen=True)
class Conversation(_FromRow):
    id: str
    workspace_id: str
    title: str
    agent_ids: list[str]
    created_at: int
    updated_at: int
    last_sequence: int
    project_id: str | None
    created_by: str | None


@dataclass(frozen=True)
class Message(_FromRow):
    id: str
    workspace_id: str
    conversation_id: str
    author_kind: str
    author_id: str | None
    content: str
    blocks: list[Any] | None
    attachments: list[Any] | None
    target_agent_id: str | None
    task_id: str | None
    created_at: int
    sequence: int
    author_name: str | None = None
    """The author's name as the message was recorded with it (people's and imported ones)."""


@dataclass(frozen=True)
class Task(_FromRow):
    id: str
    workspace_id: str
    conversation_id: str | None
    parent_task_id: str | None
    title: str
    description: str | None
    target_agent_id: str | None
    status: str
    progress: int
    summary: str | None
    error: Any
    cancel_requested: bool
    cancel_reason: str | None
    created_by: str
    created_at: int
    updated_at: int
    last_sequence: int
    cancel_deadline: int | None = None
    end_cause: str | None = None


@dataclass(frozen=True)
class Interaction(_FromRow):
    id: str
    workspace_id: str
    task_id: str | None
    conversation_id: str | None
    agent_id: str | None
    kind: str
    status: str
    request: dict[str, Any]
    response: Any
    responded_by: str | None
    responded_by_name: str | None
    responded_at: int | None
    expires_at: int | None
    created_at: int
    updated_at: int
    sequence: int
    cancel_reason: str | None = None


@dataclass(frozen=True)
class Artifact(_FromRow):
    id: str
    workspace_id: str
    task_id: str | None
    conversation_id: str | None
    name: str
    url: str
    mime_type: str | None
    summary: str | None
    created_by: str
    created_at: int


@dataclass(frozen=True)
class ToolDevice(_FromRow):
    workspace_id: str
    device_id: str
    user_id: str | None
    name: str | None
    tools: list[dict[str, Any]]
    created_at: int
    updated_at: int
    last_sequence: int


@dataclass(frozen=True)
class ToolCallRecord(_FromRow):
    id: str
    workspace_id: str
    agent_id: str
    call_id: str
    name: str
    action: str | None
    arguments: dict[str, Any]
    status: str
    conversation_id: str | None
    task_id: str | None
    instance_id: str | None
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    answered_by: str | None
    answered_by_name: str | None
    answered_at: int | None
    cancel_reason: str | None
    timeout_ms: int | None
    expires_at: int | None
    created_at: int
    updated_at: int
    sequence: int


@dataclass(frozen=True)
class CanvasInstance(_FromRow):
    id: str
    workspace_id: str
    agent_id: str
    tool_call_id: str
    conversation_id: str | None
    task_id: str | None
    width: int
    height: int
    status: str
    draws: int
    created_at: int
    updated_at: int
    sequence: int
    last_sequence: int


@dataclass(frozen=True)
class CanvasOpRecord(_FromRow):
    tool_call_id: str
    workspace_id: str
    instance_id: str
    sequence: int
    kind: str
    path: str | None
    color: str | None
    width: int | None
    undone: bool
    created_at: int


@dataclass(frozen=True)
class TaskDetail:
    task: Task
    children: list[Task]
    interactions: list[Interaction]
    artifacts: list[Artifact]


@dataclass(frozen=True)
class SessionRecord(_FromRow):
    """A session: the family of its access and refresh tokens (:class:`SessionTokenRecord`)."""

    id: str
    user_id: str
    csrf_token_hash: str
    created_at: int
    expires_at: int
    last_used_at: int
    user_agent: str | None = None
    revoked_at: int | None = None
    ended_reason: str | None = None


@dataclass(frozen=True)
class SessionTokenRecord(_FromRow):
    token_hash: str
    session_id: str
    kind: str
    """``access`` or ``refresh``."""
    created_at: int
    expires_at: int
    spent_at: int | None = None


@dataclass(frozen=True)
class PairingCodeRecord(_FromRow):
    id: str
    workspace_id: str
    code_hash: str
    created_by: str
    created_at: int
    expires_at: int
    agent_name: str | None = None
    used_at: int | None = None
    failed_attempts: int = 0


@dataclass(frozen=True)
class InvitationRecord(_FromRow):
    id: str
    workspace_id: str
    code_hash: str
    role: str
    created_by: str
    created_at: int
    expires_at: int
    used_at: int | None = None
    used_by: str | None = None
    project_id: str | None = None
    project_role: str | None = None


@dataclass(frozen=True)
class DeveloperTokenRecord(_FromRow):
    id: str
    user_id: str
    workspace_id: str | None
    name: str
    token_hash: str
    scopes: list[str]
    created_at: int
    expires_at: int | None = None
    last_used_at: int | None = None
    revoked_at: int | None = None


@dataclass(frozen=True)
class AgentCredentialRecord(_FromRow):
    id: str
    agent_id: str
    workspace_id: str
    secret_hash: str
    created_at: int
    revoked_at: int | None = None
