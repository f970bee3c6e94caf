"""The raw events behind a task, message or card (seed 001 §4, progressive disclosure).

Anything a person sees can show the recorded events it is made of, with their ids and
sequences, for the person who wants to know exactly what happened. A subject is seen as the
thing itself is: someone outside its project, or asking with another workspace's id, is told
there is no such thing. Payloads pass through the redaction of agents' diagnostic lines,
because a raw event is what a person pastes into a bug report.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineup.hub.api import responses
from lineup.hub.api.deps import MAX_SEQUENCE, Hub, Member
from lineup.hub.api.openapi import answers
from lineup.hub.sight import Sight
from lineup.protocol.errors import InvalidArgument, NotFound
from lineup.protocol.redaction import Redactor
from lineup.protocol.subjects import Subject, parse_subject
from lineup.protocol.times import iso
from lineup.store import Reader, StoredEvent
from lineup.store import governance as gov_store

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["work"])

REDACTION = Redactor()

_NAMES = {
    "conversation": "conversation",
    "message": "message",
    "task": "task",
    "interaction": "interaction",
    "tool_call": "tool call",
    "artifact": "artifact",
    "agent": "agent",
    "approval": "approval",
}


def sees_subject(r: Reader, sight: Sight, subject: Subject) -> bool:
    """Whether the subject exists in the person's workspace and they may see it."""
    ws = sight.person.workspace_id
    kind, ident = subject
    if kind == "conversation":
        conversation = r.get_conversation(ws, ident)
        return conversation is not None and sight.sees_project(conversation.project_id)
    if kind == "agent":
        return r.get_agent(ws, ident) is not None
    if kind == "approval":
        approval = gov_store.get_approval(r.connection, ws, ident)
        return approval is not None and sight.sees_project(approval.project_id)
    where: Any = None
    if kind == "task":
        where = r.get_task(ws, ident)
        return where is not None and sight.sees_item(where.conversation_id, where.id)
    if kind == "message":
        where = r.get_message(ws, ident)
    elif kind == "interaction":
        where = r.get_interaction(ws, ident)
    elif kind == "tool_call":
        where = r.get_tool_call(ws, ident)
    elif kind == "artifact":
        where = r.get_artifact(ws, ident)
    return where is not None and sight.sees_item(where.conversation_id, where.task_id)


def raw_event(e: StoredEvent) -> dict[str, Any]:
    payload = REDACTION.value(e.payload, REDACTION.marked_values(e.payload))
    return {
        "id": e.id,
        "sequence": e.sequence,
        "type": e.type,
        "actor": e.actor,
        "occurredAt": iso(e.occurred_at),
        "recordedAt": iso(e.recorded_at),
        "conversationId": e.conversation_id,
        "taskId": e.task_id,
        "correlationId": e.correlation_id,
        "payload": payload,
    }


@router.get("/raw-events", **answers(responses.RawEvents, 400, 401, 403, 404))
async def raw_events(
    hub: Hub,
    person: Member,
    subject: Annotated[str, Query(max_length=200, description="`kind:id`, e.g. `task:01J…`.")],
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQUENCE)] = None,
    before: Annotated[int | None, Query(ge=1, le=MAX_SEQUENCE)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """The events about one subject, in log order: the oldest ``limit`` after ``after``, or
    the newest before ``before`` when only that is given."""
    try:
        parsed = parse_subject(subject)
    except ValueError as exc:
        raise InvalidArgument(str(exc), details={"subject": subject}) from None
    ws = person.workspace_id

    def read(r: Reader) -> dict[str, Any]:
        sight = Sight.load(r, person)
        if not sees_subject(r, sight, parsed):
            kind, ident = parsed
            raise NotFound(
                f"No {_NAMES[kind]} {ident!r} in this workspace.", details={"subject": subject}
            )
        page = r.subject_events(ws, parsed, after=after, before=before, limit=limit)
        horizon = r.log_horizon(ws)  # the same snapshot as the page
        return {
            "subject": f"{parsed[0]}:{parsed[1]}",
            "events": [raw_event(e) for e in page.events if sight.shows(e)],
            "hasMore": page.has_more,
            "compactedBefore": horizon if horizon > 1 else None,
        }

    return await hub.store.read(read)
