"""An agent's transcript entries (``activity.*``): checked, then recorded as they came.

Each entry belongs where the agent's other reports do — its task's conversation, or a
conversation it is part of — so the people who see the task or the conversation see what the
agent did in it. Large content is referenced, not carried: every file address an entry names
must be a file uploaded to this workspace.
"""

from __future__ import annotations

from typing import Any

from lineup.hub.actors import AgentIdentity
from lineup.hub.commands import Recorded, agents_conversation, check_hub_files
from lineup.hub.recorder import Writing
from lineup.protocol import facts
from lineup.protocol._model import WireModel
from lineup.protocol.errors import InvalidArgument

_FACTS: dict[str, type[facts.Fact]] = {
    "activity.started": facts.ActivityStartedPayload,
    "activity.output": facts.ActivityOutputPayload,
    "activity.finished": facts.ActivityFinishedPayload,
    "activity.usage": facts.ActivityUsagePayload,
}

TYPES = frozenset(_FACTS)

_FILE_FIELDS = ("diffUrl", "resultUrl", "outputUrl", "snapshotUrl")


def activity_reported(
    w: Writing,
    agent: AgentIdentity,
    event_type: str,
    event_id: str,
    task_id: str | None,
    conversation_id: str | None,
    entry: WireModel,
) -> Recorded:
    conversation_id = agents_conversation(w.read, agent, task_id, conversation_id)
    if conversation_id is None and task_id is None:
        raise InvalidArgument(f"{event_type} needs a taskId or a conversationId.")
    payload: dict[str, Any] = entry.wire()
    check_hub_files(
        w, agent.workspace_id, [payload[k] for k in _FILE_FIELDS if isinstance(payload.get(k), str)]
    )
    result = w.append(
        agent.workspace_id,
        _FACTS[event_type].model_validate(payload),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result)
