"""Which of this node's agents are silent: pure, the times passed in."""

from __future__ import annotations

from lineup.hub.presence import AgentLink, Presence


async def _close(code: int, reason: str) -> None:
    return None


def test_an_agent_whose_frames_the_hub_is_still_working_on_is_not_silent() -> None:
    presence = Presence()
    busy = AgentLink("agent_busy", "ws", 0, 1_000, _close)
    quiet = AgentLink("agent_quiet", "ws", 0, 1_000, _close)
    presence.attach(busy)
    presence.attach(quiet)
    busy.in_flight = 3  # its frames (a heartbeat among them, maybe) wait for a free slot
    assert presence.silent_since(5_000) == [quiet]
    busy.in_flight = 0
    assert presence.silent_since(5_000) == [busy, quiet]


def test_an_agent_that_beat_after_the_deadline_is_not_silent() -> None:
    presence = Presence()
    link = AgentLink("agent_1", "ws", 0, 6_000, _close)
    presence.attach(link)
    assert presence.silent_since(5_000) == []
