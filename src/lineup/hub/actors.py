"""Who is acting: a person signed in to a workspace, or a paired agent. Both are scoped to one
workspace, which every command checks first — nothing crosses workspaces."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Person:
    user_id: str
    display_name: str
    workspace_id: str
    role: str

    @property
    def actor(self) -> str:
        return f"user:{self.user_id}"


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    agent_id: str
    workspace_id: str
    name: str
    confirmed: bool = True
    """Whether a person confirmed the agent when it was authenticated (no work before)."""

    @property
    def actor(self) -> str:
        return f"agent:{self.agent_id}"
