"""Conversations, messages, tasks, interactions, artifacts, the inbox and the raw event log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import Field

from lineup.domain import ACTIVE_STATUSES
from lineup.domain.retention import behind
from lineup.hub import commands, scoped_settings
from lineup.hub.actors import Person
from lineup.hub.api import responses, views
from lineup.hub.api.deps import MAX_SEQUENCE, Body, Hub, IdempotencyKey, Member
from lineup.hub.api.openapi import answers
from lineup.hub.commands import Recorded
from lineup.hub.recorder import Writing
from lineup.hub.sight import Sight
from lineup.hub.state import HubState
from lineup.protocol import events as ev
from lineup.protocol.errors import Conflict, NotFound
from lineup.protocol.interaction import InteractionResponse
from lineup.store import Agent, Interaction, Reader, StoredEvent

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["work"])

TASK_FILTERS: dict[str, tuple[str, ...] | None] = {
    "all": None,
    "running": ("queued", "running"),
    "waiting": ("waiting_for_human",),
    "done": ("succeeded", "failed", "cancelled"),
}


class NewConversation(Body):
    title: Annotated[str, Field(min_length=1, max_length=500)]
    agent_ids: Annotated[list[str], Field(default_factory=list, max_length=20)]
    project_id: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    """The project it belongs to (its agents may then propose changes); none: personal."""


class NewMessage(ev.MessageCreate):
    track_as_task: bool = False


class NewTask(ev.TaskCreate):
    conversation_id: Annotated[str, Field(max_length=128)] | None = None


class CancelRequest(Body):
    reason: Annotated[str, Field(max_length=2000)] | None = None


class InteractionAnswer(Body):
    response: InteractionResponse


def _interactions(r: Reader, workspace_id: str, rows: list[Interaction]) -> list[dict[str, Any]]:
    """Interaction views with the asking agent's name and the task's title, for the cards."""
    agents = _agents(r, workspace_id)
    titles: dict[str, str] = {}
    for row in rows:
        if row.task_id and row.task_id not in titles:
            task = r.get_task(workspace_id, row.task_id)
            titles[row.task_id] = task.title if task else ""
    return [
        views.interaction(
            i,
            agent_name=agents[i.agent_id].name if i.agent_id in agents else None,
            task_title=titles.get(i.task_id or "") or None,
        )
        for i in rows
    ]


def _agents(read: Reader, workspace_id: str) -> dict[str, Agent]:
    return {a.id: a for a in read.list_agents(workspace_id)}


# --- conversations and messages ------------------------------------------------------------


@router.get("/conversations", **answers(responses.Conversations, 400, 401, 403))
async def list_conversations(
    hub: Hub, person: Member, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> dict[str, Any]:
    def read(r: Reader) -> list[Any]:
        sight = Sight.load(r, person)
        rows = r.list_conversations(person.workspace_id, limit)
        return [c for c in rows if sight.sees_project(c.project_id)]

    rows = await hub.store.read(read)
    return {"conversations": [views.conversation(c) for c in rows]}


@router.post(
    "/conversations",
    status_code=201,
    **answers(responses.Conversation, 400, 401, 403, 404, 409, 413),
)
async def create_conversation(
    body: NewConversation, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    recorded = await hub.recorder.run(
        lambda w: commands.create_conversation(
            w, person, body.title.strip(), body.agent_ids, event_id=key, project_id=body.project_id
        ),
        workspace=person.workspace_id,
    )
    return await get_conversation(recorded.value, hub, person)


@router.get(
    "/conversations/{conversation_id}", **answers(responses.Conversation, 400, 401, 403, 404)
)
async def get_conversation(conversation_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    row = await hub.store.read(lambda r: r.get_conversation(person.workspace_id, conversation_id))
    visible = row is not None and await hub.store.read(
        lambda r: Sight.load(r, person).sees_project(row.project_id if row else None)
    )
    if row is None or not visible:
        raise NotFound(f"No conversation {conversation_id!r} in this workspace.")
    return views.conversation(row)


@router.get(
    "/conversations/{conversation_id}/messages",
    **answers(responses.MessagesPage, 400, 401, 403, 404),
)
async def list_messages(
    conversation_id: str,
    hub: Hub,
    person: Member,
    before: Annotated[int | None, Query(ge=1, le=MAX_SEQUENCE)] = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQUENCE)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """A page of messages in order; ``before`` scrolls back, ``after`` pages forward."""
    ws = person.workspace_id

    def read(r: Reader) -> dict[str, Any]:
        conversation = r.get_conversation(ws, conversation_id)
        if conversation is None or not Sight.load(r, person).sees_project(conversation.project_id):
            raise NotFound(f"No conversation {conversation_id!r} in this workspace.")
        rows = r.list_messages(ws, conversation_id, before=before, after=after, limit=limit)
        agents = _agents(r, ws)
        return {
            "messages": [views.message(m) for m in rows],
            "hasMore": len(rows) == limit,
            "tasks": [
                views.task(t, agents) for t in r.list_tasks(ws, conversation_id=conversation_id)
            ],
            "interactions": _interactions(
                r, ws, r.list_interactions(ws, conversation_id=conversation_id)
            ),
            "artifacts": [
                views.artifact(a) for a in r.list_artifacts(ws, conversation_id=conversation_id)
            ],
        }

    return await hub.store.read(read)


@router.post(
    "/conversations/{conversation_id}/messages",
    status_code=201,
    **answers(responses.PostedMessage, 400, 401, 403, 404, 409, 413),
)
async def post_message(
    conversation_id: str, body: NewMessage, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Send a message; with ``trackAsTask`` a task is created for the target agent first."""
    message = ev.MessageCreate.model_validate(body.model_dump(exclude={"track_as_task"}))
    recorded = await hub.recorder.run(
        lambda w: commands.post_message(
            w,
            person,
            conversation_id,
            message,
            track_as_task=body.track_as_task,
            event_id=key,
        ),
        workspace=person.workspace_id,
    )
    row = await hub.store.read(
        lambda r: r.get_message(person.workspace_id, recorded.value["messageId"]), brief=True
    )
    assert row is not None
    return {
        "message": views.message(row),
        "taskId": recorded.value["taskId"],
        "sequence": recorded.sequence,
        "duplicate": recorded.duplicate,
    }


# --- tasks ---------------------------------------------------------------------------------


@router.get("/tasks", **answers(responses.Tasks, 400, 401, 403))
async def list_tasks(
    hub: Hub,
    person: Member,
    status: Annotated[str, Query(pattern="^(all|running|waiting|done)$")] = "all",
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:

    def read(r: Reader) -> dict[str, Any]:
        sight = Sight.load(r, person)
        rows = r.list_tasks(person.workspace_id, statuses=TASK_FILTERS[status], limit=limit)
        rows = [t for t in rows if sight.sees_item(t.conversation_id, t.id)]
        agents = _agents(r, person.workspace_id)
        return {"tasks": [views.task(t, agents) for t in rows]}

    return await hub.store.read(read)


@router.post(
    "/tasks", status_code=201, **answers(responses.TaskDetail, 400, 401, 403, 404, 409, 413)
)
async def create_task(
    body: NewTask, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    task = ev.TaskCreate.model_validate(body.model_dump(exclude={"conversation_id"}))
    recorded = await hub.recorder.run(
        lambda w: commands.create_task(
            w, person, task, conversation_id=body.conversation_id, event_id=key
        ),
        workspace=person.workspace_id,
    )
    return await task_detail(recorded.value, hub, person)


@router.get("/tasks/{task_id}", **answers(responses.TaskDetail, 400, 401, 403, 404))
async def task_detail(task_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    """Status, progress, summary, children, interactions, artifacts and the event timeline."""

    def read(r: Reader) -> dict[str, Any]:
        detail = r.get_task_detail(person.workspace_id, task_id)
        if detail is None or not Sight.load(r, person).sees_item(
            detail.task.conversation_id, task_id
        ):
            raise NotFound(f"No task {task_id!r} in this workspace.")
        timeline = r.task_timeline(person.workspace_id, task_id)
        agents = _agents(r, person.workspace_id)
        return {
            "task": views.task(detail.task, agents),
            "children": [views.task(c, agents) for c in detail.children],
            "interactions": _interactions(r, person.workspace_id, detail.interactions),
            "artifacts": [views.artifact(a) for a in detail.artifacts],
            "timeline": [views.event(e) for e in timeline],
        }

    return await hub.store.read(read)


@router.post(
    "/tasks/{task_id}/cancel", **answers(responses.TaskDetail, 400, 401, 403, 404, 409, 413)
)
async def cancel_task(
    task_id: str, body: CancelRequest, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Ask the agent to stop; the task shows "cancel requested" until the agent confirms, or
    until the workspace's cancel timeout (``tasks.cancelTimeoutMinutes``) has the hub record it
    cancelled itself."""

    def job(w: Writing) -> Recorded:
        timeout_ms = scoped_settings.cancel_timeout_of(w.read, hub.settings, person.workspace_id)
        return commands.request_cancel(
            w, person, task_id, body.reason, timeout_ms=timeout_ms, event_id=key
        )

    await hub.recorder.run(job)
    return await task_detail(task_id, hub, person)


# --- interactions and the inbox -----------------------------------------------------------


@router.get("/interactions", **answers(responses.Interactions, 400, 401, 403))
async def list_interactions(
    hub: Hub,
    person: Member,
    status: Annotated[str | None, Query(pattern="^(requested|resolved|expired|cancelled)$")] = None,
) -> dict[str, Any]:
    ws = person.workspace_id

    def read(r: Reader) -> list[dict[str, Any]]:
        sight = Sight.load(r, person)
        rows = r.list_interactions(ws, statuses=[status] if status else None)
        rows = [i for i in rows if sight.sees_item(i.conversation_id, i.task_id)]
        return _interactions(r, ws, rows)

    return {"interactions": await hub.store.read(read)}


@router.get("/interactions/{interaction_id}", **answers(responses.Interaction, 400, 401, 403, 404))
async def get_interaction(interaction_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    ws = person.workspace_id

    def read(r: Reader) -> dict[str, Any] | None:
        row = r.get_interaction(ws, interaction_id)
        if row is None or not Sight.load(r, person).sees_item(row.conversation_id, row.task_id):
            return None
        return _interactions(r, ws, [row])[0]

    view = await hub.store.read(read)
    if view is None:
        raise NotFound(f"No interaction {interaction_id!r} in this workspace.")
    return view


@router.post(
    "/interactions/{interaction_id}/respond",
    **answers(responses.Interaction, 400, 401, 403, 404, 409, 413),
)
async def respond(
    interaction_id: str, body: InteractionAnswer, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Answer once. The same answer again changes nothing; a different one is a conflict that
    names who answered first."""
    try:
        recorded = await hub.recorder.run(
            lambda w: commands.respond(w, person, interaction_id, body.response, event_id=key)
        )
    except Conflict as conflict:
        current = await get_interaction(interaction_id, hub, person)
        if current["status"] != "resolved":
            raise
        raise Conflict(
            conflict.message,
            details={
                **conflict.details,
                "respondedBy": current["respondedBy"],
                "respondedByName": current["respondedByName"],
                "respondedAt": current["respondedAt"],
                "response": current["response"],
            },
        ) from None
    if isinstance(recorded.value, commands.Expired):
        raise recorded.value.refusal
    return await get_interaction(interaction_id, hub, person)


async def inbox_view(
    hub: HubState, workspace_id: str, recent: int = 20, person: Person | None = None
) -> dict[str, Any]:
    def read(r: Reader) -> dict[str, Any]:
        sight = None if person is None else Sight.load(r, person)

        def seen(rows: list[Any]) -> list[Any]:
            if sight is None:
                return rows
            return [
                x for x in rows if sight.sees_item(x.conversation_id, getattr(x, "task_id", x.id))
            ]

        waiting = seen(r.list_interactions(workspace_id, statuses=["requested"]))
        waiting_tools = seen(r.list_tool_calls(workspace_id, statuses=["pending"]))
        failed = seen(r.list_tasks(workspace_id, statuses=["failed"], limit=recent))
        active = seen(r.list_tasks(workspace_id, statuses=ACTIVE_STATUSES, limit=200))
        done = seen(r.list_tasks(workspace_id, statuses=["succeeded", "cancelled"], limit=recent))
        agents = _agents(r, workspace_id)
        lost = [views.task(t, agents) for t in active]
        lost = [t for t in lost if t["agentConnectionLost"]]
        attention = [views.task(t, agents) for t in failed]
        return {
            "waitingForMe": _interactions(r, workspace_id, waiting),
            "waitingTools": [views.tool_call(c) for c in waiting_tools],
            "needsAttention": lost + attention,
            "recentlyDone": [views.task(t, agents) for t in done],
            "counts": {
                "waitingForMe": len(waiting) + len(waiting_tools),
                "needsAttention": len(lost) + len(attention),
                "unread": len(waiting) + len(waiting_tools) + len(lost),
            },
        }

    return await hub.store.read(read)


@router.get("/inbox", **answers(responses.Inbox, 400, 401, 403))
async def inbox(hub: Hub, person: Member) -> dict[str, Any]:
    """Waiting for me, failed / needs attention, recently done, and the counts."""
    return await inbox_view(hub, person.workspace_id, person=person)


# --- artifacts and events ------------------------------------------------------------------


@router.get("/artifacts", **answers(responses.Artifacts, 400, 401, 403))
async def list_artifacts(
    hub: Hub,
    person: Member,
    task_id: Annotated[str | None, Query(alias="taskId", max_length=128)] = None,
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
) -> dict[str, Any]:
    def read(r: Reader) -> list[Any]:
        sight = Sight.load(r, person)
        rows = r.list_artifacts(
            person.workspace_id, task_id=task_id, conversation_id=conversation_id
        )
        return [a for a in rows if sight.sees_item(a.conversation_id, a.task_id)]

    rows = await hub.store.read(read)
    return {"artifacts": [views.artifact(a) for a in rows]}


@router.get("/events", **answers(responses.EventsPage, 400, 401, 403))
async def list_events(
    hub: Hub,
    person: Member,
    after: Annotated[int, Query(ge=0, le=MAX_SEQUENCE)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """The workspace's log after a sequence, in order (the same frames the WebSocket sends),
    less what belongs to projects the person is not in; ``nextAfter`` is where to go on."""
    ws = person.workspace_id
    sight = await hub.store.read(lambda r: Sight.load(r, person))
    shown: list[dict[str, Any]] = []
    cursor = after

    def page(since: int) -> Callable[[Reader], tuple[int, list[StoredEvent]]]:
        # the horizon in the same snapshot as the page: a compaction cannot slip between
        return lambda r: (r.log_horizon(ws), r.read_events(ws, after=since, limit=limit))

    while True:  # a page of other projects' events is read past, not answered empty
        horizon, rows = await hub.store.read(page(cursor))
        if behind(cursor, horizon):
            latest = await hub.store.last_sequence(ws)
            return {
                "events": [],
                "latestSequence": latest,
                "nextAfter": latest,
                "earliestSequence": horizon,
                "resyncRequired": True,
            }
        shown += [views.event(e) for e in rows if sight.sees(e)]
        if rows:
            cursor = rows[-1].sequence
        if shown or len(rows) < limit:
            break
    latest = await hub.store.last_sequence(ws)
    return {
        "events": shown,
        "latestSequence": latest,
        "nextAfter": cursor,
        "earliestSequence": horizon,
        "resyncRequired": False,
    }
