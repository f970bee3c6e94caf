"""People's accounts on the systems providers reach."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lineup.hub.actors import Person

if TYPE_CHECKING:
    from lineup.hub.state import HubState


async def counts(hub: HubState, workspace_id: str, provider_id: str) -> dict[str, int]:
    return {"bound": 0, "expired": 0}


async def unbind_all(hub: HubState, person: Person, provider_id: str) -> None:
    return None
