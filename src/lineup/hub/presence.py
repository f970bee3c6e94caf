"""Which agents are connected to this node, when each last beat, and how to cut one off.

Beats are kept in memory (a write per heartbeat would cost the database 400 writes/s for
10,000 agents); only the change online → offline, with the last beat's time, is recorded.
The node holding the socket is the only one that judges an agent silent: the beats are here.

A frame counts as a beat when the hub reads it. While the hub still works on frames an agent
sent (``in_flight``), that agent is not silent: a busy hub reads the next frame — maybe a
heartbeat — only once a slot frees, so the silence would be the hub's, not the agent's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(eq=False, slots=True)  # slots: one per connected agent
class AgentLink:
    agent_id: str
    workspace_id: str
    connected_at_ms: int
    last_beat_ms: int
    close: Callable[[int, str], Awaitable[None]]
    offline_recorded: bool = False
    in_flight: int = 0
    """Frames read from this agent and not answered yet."""


class Presence:
    def __init__(self) -> None:
        self._links: dict[str, AgentLink] = {}

    def attach(self, link: AgentLink) -> AgentLink | None:
        """Register a connection; return the one it replaces (an agent has one at a time)."""
        previous = self._links.get(link.agent_id)
        self._links[link.agent_id] = link
        return previous

    def detach(self, link: AgentLink) -> bool:
        """Forget ``link`` if it is still current; False when a newer connection replaced it."""
        if self._links.get(link.agent_id) is link:
            del self._links[link.agent_id]
            return True
        return False

    def beat(self, agent_id: str, now_ms: int) -> None:
        link = self._links.get(agent_id)
        if link is not None:
            link.last_beat_ms = now_ms

    def get(self, agent_id: str) -> AgentLink | None:
        return self._links.get(agent_id)

    def silent_since(self, deadline_ms: int) -> list[AgentLink]:
        """Links whose last beat is older than ``deadline_ms`` (two beats missed) and that
        have nothing left for the hub to answer."""
        return [
            link
            for link in self._links.values()
            if link.last_beat_ms < deadline_ms and link.in_flight == 0
        ]

    def links(self) -> list[AgentLink]:
        return list(self._links.values())

    def __len__(self) -> int:
        return len(self._links)
