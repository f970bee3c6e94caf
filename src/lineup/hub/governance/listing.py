"""What an agent may call where it is: the catalogue filtered by policy (``capability.list``).

An agent sees only what policy grants it in that place: reads it may run, writes it may
propose. A query that names no conversation or task is answered for a personal conversation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lineup.hub.actors import AgentIdentity
from lineup.hub.governance.catalogue import CatalogueView
from lineup.hub.governance.invoke import Place, WorkspacePolicy, place_of
from lineup.protocol.capabilities import CapabilityListing, CapabilitySpec
from lineup.protocol.envelope import Envelope
from lineup.protocol.ids import new_id
from lineup.protocol.times import ms_to_datetime
from lineup.store import Reader

if TYPE_CHECKING:
    from lineup.hub.state import HubState


def granted(
    read: Reader, view: CatalogueView, agent: AgentIdentity, place: Place
) -> list[CapabilitySpec]:
    rules = WorkspacePolicy.read(read, agent.workspace_id)
    out = []
    for spec in view.specs():
        entry = view.get(spec.id)
        instances = [i for i in spec.instances if rules.verdict(entry, i, place).allowed]
        if instances:
            out.append(spec.model_copy(update={"instances": instances}))
    return out


async def answer_query(hub: HubState, agent: AgentIdentity, envelope: Envelope) -> Envelope:
    view = await hub.governance.view(agent.workspace_id)

    def read(r: Reader) -> CapabilityListing:
        if envelope.task_id is None and envelope.conversation_id is None:
            place = Place("", None, None, None, None)
        else:
            place = place_of(r, agent, envelope)
        return CapabilityListing(
            capabilities=granted(r, view, agent, place), project_id=place.project_id
        )

    listing = await hub.store.read(read)
    return Envelope(
        id=new_id("evt"),
        type="capability.list",
        occurred_at=ms_to_datetime(hub.clock()),
        workspace_id=agent.workspace_id,
        conversation_id=envelope.conversation_id,
        task_id=envelope.task_id,
        correlation_id=envelope.id,
        payload=listing.wire(),
    )
