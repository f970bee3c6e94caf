"""Each event type updates the projections the UI reads, from the event alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from lineup.protocol.errors import InvalidArgument
from lineup.store import Agent, AppendResult, Interaction, Reader, Store, Task

from .factory import create_workspace, event

T = TypeVar("T")


class Workspace:
    """Appends events to one workspace and reads back, as the hub would."""

    def __init__(self, store: Store, workspace_id: str) -> None:
        self.store = store
        self.id = workspace_id

    async def append(self, type: str, payload: dict[str, Any], **envelope: Any) -> AppendResult:
        return await self.store.append(event(self.id, type, payload, **envelope))

    def read(self, fn: Callable[[Reader], T]) -> Awaitable[T]:
        return self.store.read(fn)

    async def task(self, task_id: str) -> Task:
        task = await self.read(lambda r: r.get_task(self.id, task_id))
        assert task is not None
        return task

    async def agent(self, agent_id: str) -> Agent:
        agent = await self.read(lambda r: r.get_agent(self.id, agent_id))
        assert agent is not None
        return agent

    async def interaction(self, interaction_id: str) -> Interaction:
        found = await self.read(lambda r: r.get_interaction(self.id, interaction_id))
        assert found is not None
        return found

    async def running_task(self, task_id: str = "t1") -> None:
        await self.append("task.created", {"taskId": task_id, "title": "Do it"})
        await self.append("task.accepted", {"taskId": task_id}, actor="agent:a1")

    async def request(self, interaction_id: str, task_id: str | None = "t1") -> AppendResult:
        return await self.append(
            "interaction.requested",
            {"interaction": {"id": interaction_id, "type": "approval", "title": "OK?"}},
            actor="agent:a1",
            task_id=task_id,
        )


@pytest.fixture
async def ws(store: Store) -> Workspace:
    return Workspace(store, await create_workspace(store, "Acme"))


async def test_member_joined_adds_the_user_and_the_membership(ws: Workspace) -> None:
    await ws.append(
        "member.joined",
        {"userId": "u1", "email": "ada@example.com", "displayName": "Ada", "role": "owner"},
    )

    def read(r: Reader) -> Any:
        user = r.get_user_by_email("ada@example.com")
        membership = r.get_membership(ws.id, "u1")
        members = r.list_members(ws.id)
        mine = r.list_user_workspaces("u1")
        assert r.get_user_by_email("nobody@example.com") is None
        return user, membership, members, mine

    user, membership, members, mine = await ws.read(read)
    assert user is not None and (user.id, user.display_name) == ("u1", "Ada")
    assert membership is not None and membership.role == "owner"
    assert [(m.user.id, m.role) for m in members] == [("u1", "owner")]
    assert [(w.workspace.id, w.workspace.name, w.role) for w in mine] == [(ws.id, "Acme", "owner")]


async def test_a_user_joining_a_second_workspace_is_one_user_with_two_memberships(
    store: Store, ws: Workspace
) -> None:
    other = Workspace(store, await create_workspace(store, "Beta"))
    joined = {"userId": "u1", "email": "ada@example.com", "displayName": "Ada"}
    await ws.append("member.joined", {**joined, "role": "owner"})
    await other.append("member.joined", {**joined, "role": "member"})
    mine = await ws.read(lambda r: r.list_user_workspaces("u1"))
    assert [(w.workspace.name, w.role) for w in mine] == [("Acme", "owner"), ("Beta", "member")]


async def test_agent_lifecycle_events_update_the_agent(ws: Workspace) -> None:
    await ws.append("agent.paired", {"agentId": "a1", "name": "Builder"})
    paired = await ws.agent("a1")
    assert (paired.status, paired.capabilities, paired.tools) == ("never_connected", [], [])
    assert paired.last_heartbeat_at is None

    tools = [{"name": "deploy", "type": "action"}]
    await ws.append(
        "agent.connected",
        {
            "agentId": "a1",
            "agentVersion": "1.2.0",
            "runtime": "python",
            "capabilities": ["tasks", "tools"],
            "tools": tools,
        },
        actor="agent:a1",
        occurred_at=1_000,
    )
    online = await ws.agent("a1")
    assert (online.status, online.agent_version, online.runtime) == ("online", "1.2.0", "python")
    assert (online.capabilities, online.tools) == (["tasks", "tools"], tools)
    assert online.last_heartbeat_at == 1_000 and online.connected_at == 1_000

    await ws.append(
        "agent.status_changed", {"agentId": "a1", "status": "offline", "lastHeartbeatAt": 2_000}
    )
    assert (await ws.agent("a1")).last_heartbeat_at == 2_000
    await ws.append(
        "agent.status_changed", {"agentId": "a1", "status": "offline", "lastHeartbeatAt": None}
    )
    offline = await ws.agent("a1")
    assert (offline.status, offline.last_heartbeat_at) == ("offline", 2_000)

    await ws.append("agent.renamed", {"agentId": "a1", "name": "Shipper"})
    await ws.append("agent.revoked", {"agentId": "a1"})
    revoked = await ws.agent("a1")
    assert (revoked.name, revoked.status) == ("Shipper", "revoked")
    assert revoked.revoked_at is not None

    def read(r: Reader) -> None:
        assert [a.id for a in r.list_agents(ws.id)] == ["a1"]

    await ws.read(read)


async def test_confirmation_rejection_and_settings_project_and_replay_alike(ws: Workspace) -> None:
    # an agent paired by an older hub was never asked: confirmed when it paired
    await ws.append("agent.paired", {"agentId": "old", "name": "Old"})
    await ws.append(
        "agent.paired",
        {"agentId": "a1", "name": "Builder", "awaitingConfirmation": True, "capabilities": ["x"]},
    )
    await ws.append(
        "agent.paired", {"agentId": "a2", "name": "Stranger", "awaitingConfirmation": True}
    )
    assert (await ws.agent("old")).confirmed
    waiting = await ws.agent("a1")
    assert not waiting.confirmed and waiting.capabilities == ["x"]
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}
    await ws.append(
        "agent.connected",
        {"agentId": "a1", "agentVersion": "1", "runtime": "py", "settingsSchema": schema},
        actor="agent:a1",
    )
    await ws.append(
        "agent.confirmed",
        {"agentId": "a1", "name": "Site", "confirmedBy": "user:u1", "targetAgentId": "a1"},
    )
    await ws.append(
        "agent.settings_changed",
        {"agentId": "a1", "values": {"n": 3}, "changedBy": "user:u1", "targetAgentId": "a1"},
    )
    await ws.append("agent.rejected", {"agentId": "a2", "rejectedBy": "user:u1"})

    async def seen() -> list[tuple[Any, ...]]:
        agents = await ws.read(lambda r: r.list_agents(ws.id))
        return [(a.id, a.name, a.confirmed, a.settings_schema, a.settings) for a in agents]

    before = await seen()
    assert before == [("old", "Old", True, None, None), ("a1", "Site", True, schema, {"n": 3})]
    await ws.store.rebuild_projections()
    assert await seen() == before


async def test_conversation_and_messages(ws: Workspace) -> None:
    created = await ws.append(
        "conversation.created",
        {"conversationId": "c1", "title": "Release", "agentIds": ["a1"]},
        conversation_id="c1",
    )
    sequences = []
    for i in range(5):
        result = await ws.append(
            "message.created",
            {
                "messageId": f"m{i}",
                "author": {"kind": "user", "id": "u1"},
                "content": f"hello {i}",
                "blocks": [{"type": "text", "text": "hi"}] if i == 0 else None,
                "targetAgentId": "a1",
            },
            conversation_id="c1",
        )
        sequences.append(result.event.sequence)
    await ws.append(
        "message.created",
        {"messageId": "sys", "author": {"kind": "system"}, "content": "joined"},
        conversation_id="c1",
    )

    def read(r: Reader) -> Any:
        conversation = r.get_conversation(ws.id, "c1")
        latest = r.list_messages(ws.id, "c1", limit=3)
        older = r.list_messages(ws.id, "c1", before=latest[0].sequence, limit=3)
        forward = r.list_messages(ws.id, "c1", after=sequences[1], limit=2)
        listed = r.list_conversations(ws.id)
        first = r.get_message(ws.id, "m0")
        return conversation, latest, older, forward, listed, first

    conversation, latest, older, forward, listed, first = await ws.read(read)
    assert conversation is not None
    assert (conversation.title, conversation.agent_ids) == ("Release", ["a1"])
    assert conversation.last_sequence > created.event.sequence
    assert [m.id for m in latest] == ["m3", "m4", "sys"]
    assert [m.id for m in older] == ["m0", "m1", "m2"]
    assert [m.id for m in forward] == ["m2", "m3"]
    assert [c.id for c in listed] == ["c1"]
    assert first is not None
    assert (first.author_kind, first.author_id, first.target_agent_id) == ("user", "u1", "a1")
    assert first.blocks == [{"type": "text", "text": "hi"}] and first.attachments is None
    assert latest[-1].author_id is None


async def test_conversations_are_listed_most_recently_active_first(ws: Workspace) -> None:
    for cid in ("c1", "c2"):
        await ws.append(
            "conversation.created", {"conversationId": cid, "title": cid, "agentIds": []}
        )
    await ws.append(
        "message.created",
        {"messageId": "m", "author": {"kind": "user", "id": "u1"}, "content": "x"},
        conversation_id="c1",
    )

    def read(r: Reader) -> None:
        assert [c.id for c in r.list_conversations(ws.id)] == ["c1", "c2"]

    await ws.read(read)


async def test_task_lifecycle(ws: Workspace) -> None:
    await ws.append(
        "task.created",
        {
            "taskId": "t1",
            "title": "Ship",
            "description": "v1",
            "targetAgentId": "a1",
            "createdBy": "user:u1",
        },
        conversation_id="c1",
    )
    created = await ws.task("t1")
    assert (created.status, created.progress, created.cancel_requested) == ("queued", 0, False)
    assert (created.created_by, created.conversation_id) == ("user:u1", "c1")

    await ws.append("task.accepted", {"taskId": "t1"}, actor="agent:a1")
    assert (await ws.task("t1")).status == "running"
    await ws.append("task.status_changed", {"taskId": "t1", "status": "running", "progress": 40})
    await ws.append(
        "task.status_changed", {"taskId": "t1", "status": "running", "summary": "halfway"}
    )
    progressed = await ws.task("t1")
    assert (progressed.progress, progressed.summary) == (40, "halfway")

    await ws.append("task.cancel_requested", {"taskId": "t1", "reason": "too slow"})
    cancelling = await ws.task("t1")
    assert (cancelling.status, cancelling.cancel_requested) == ("running", True)
    assert cancelling.cancel_reason == "too slow"

    done = await ws.append(
        "task.status_changed",
        {"taskId": "t1", "status": "failed", "error": {"code": "cancelled", "message": "stop"}},
    )
    failed = await ws.task("t1")
    assert failed.status == "failed" and failed.error == {"code": "cancelled", "message": "stop"}
    assert failed.last_sequence == done.event.sequence


async def test_child_tasks_belong_to_their_parent(ws: Workspace) -> None:
    await ws.append(
        "task.created",
        {"taskId": "t1", "title": "Parent", "targetAgentId": "a1"},
        conversation_id="c1",
    )
    for i, status in enumerate(["queued", "running"]):
        await ws.append(
            "task.child_created",
            {
                "childTaskId": f"t1.{i}",
                "parentTaskId": "t1",
                "title": f"step {i}",
                "status": status,
            },
            actor="agent:a1",
        )

    def read(r: Reader) -> Any:
        children = r.list_child_tasks(ws.id, "t1")
        detail = r.get_task_detail(ws.id, "t1")
        assert r.get_task_detail(ws.id, "nope") is None
        return children, detail

    children, detail = await ws.read(read)
    assert [(c.id, c.status, c.parent_task_id) for c in children] == [
        ("t1.0", "queued", "t1"),
        ("t1.1", "running", "t1"),
    ]
    assert {(c.conversation_id, c.target_agent_id, c.created_by) for c in children} == {
        ("c1", "a1", "agent:a1")
    }
    assert detail is not None and [c.id for c in detail.children] == ["t1.0", "t1.1"]


async def test_tasks_are_listed_newest_first_and_filtered_by_status(ws: Workspace) -> None:
    await ws.running_task("t1")
    await ws.append("task.created", {"taskId": "t2", "title": "Second"}, occurred_at=1)

    def read(r: Reader) -> Any:
        every = r.list_tasks(ws.id)
        queued = r.list_tasks(ws.id, statuses=["queued"])
        active = r.list_tasks(ws.id, statuses=["queued", "running"])
        return every, queued, active

    every, queued, active = await ws.read(read)
    assert {t.id for t in every} == {"t1", "t2"}
    assert every[0].created_at >= every[1].created_at
    assert [t.id for t in queued] == ["t2"]
    assert {t.id for t in active} == {"t1", "t2"}


async def test_an_interaction_on_a_running_task_makes_it_wait_for_a_human(ws: Workspace) -> None:
    await ws.running_task()
    await ws.request("i1")
    requested = await ws.interaction("i1")
    assert (requested.status, requested.kind, requested.agent_id) == ("requested", "approval", "a1")
    assert requested.request == {"id": "i1", "type": "approval", "title": "OK?"}
    assert requested.task_id == "t1"
    assert (await ws.task("t1")).status == "waiting_for_human"

    await ws.request("i2")
    await ws.append(
        "interaction.resolved",
        {
            "interactionId": "i1",
            "response": {"approved": True},
            "respondedBy": "user:u1",
            "respondedByName": "Ada",
            "respondedAt": 5_000,
        },
    )
    resolved = await ws.interaction("i1")
    assert (resolved.status, resolved.response) == ("resolved", {"approved": True})
    assert (resolved.responded_by, resolved.responded_by_name) == ("user:u1", "Ada")
    assert resolved.responded_at == 5_000
    assert (await ws.task("t1")).status == "waiting_for_human"  # i2 still open

    await ws.append("interaction.expired", {"interactionId": "i2"})
    assert (await ws.interaction("i2")).status == "expired"
    assert (await ws.task("t1")).status == "running"


async def test_a_cancelled_interaction_releases_its_task(ws: Workspace) -> None:
    await ws.running_task()
    await ws.request("i1")
    await ws.append("interaction.cancelled", {"interactionId": "i1", "reason": "moot"})
    assert (await ws.interaction("i1")).status == "cancelled"
    assert (await ws.task("t1")).status == "running"


async def test_an_interaction_on_a_queued_task_leaves_the_task_alone(ws: Workspace) -> None:
    await ws.append("task.created", {"taskId": "t1", "title": "Later"})
    await ws.request("i1")
    assert (await ws.task("t1")).status == "queued"
    await ws.append("interaction.expired", {"interactionId": "i1"})
    assert (await ws.task("t1")).status == "queued"


async def test_interaction_expiry_is_stored_in_milliseconds(ws: Workspace) -> None:
    await ws.append(
        "interaction.requested",
        {
            "interaction": {
                "id": "i1",
                "type": "choice",
                "title": "Pick",
                "expiresAt": "2026-01-01T00:00:01.500Z",
            }
        },
        conversation_id="c1",
    )
    stored = await ws.interaction("i1")
    assert stored.expires_at == 1_767_225_601_500
    assert (stored.task_id, stored.conversation_id, stored.agent_id) == (None, "c1", None)

    def read(r: Reader) -> None:
        assert [i.id for i in r.list_interactions(ws.id, statuses=["requested"])] == ["i1"]
        assert r.list_interactions(ws.id, statuses=["resolved"]) == []
        assert [i.id for i in r.list_interactions(ws.id, conversation_id="c1")] == ["i1"]

    await ws.read(read)


async def test_an_unreadable_expiry_fails_the_append(ws: Workspace) -> None:
    with pytest.raises(InvalidArgument):
        await ws.append(
            "interaction.requested",
            {"interaction": {"id": "i1", "type": "input", "title": "?", "expiresAt": "soon"}},
        )


async def test_artifacts_are_listed_by_task_and_conversation(ws: Workspace) -> None:
    await ws.running_task()
    await ws.append(
        "artifact.created",
        {
            "artifactId": "f1",
            "name": "report.pdf",
            "url": "https://example.com/r.pdf",
            "mimeType": "application/pdf",
            "taskId": "t1",
        },
        actor="agent:a1",
        conversation_id="c1",
    )
    await ws.append(
        "artifact.created",
        {"artifactId": "f2", "name": "log", "url": "https://example.com/log"},
        conversation_id="c2",
    )

    def read(r: Reader) -> Any:
        by_task = r.list_artifacts(ws.id, task_id="t1")
        by_conversation = r.list_artifacts(ws.id, conversation_id="c2")
        detail = r.get_task_detail(ws.id, "t1")
        return by_task, by_conversation, detail

    by_task, by_conversation, detail = await ws.read(read)
    assert [(a.id, a.mime_type, a.created_by) for a in by_task] == [
        ("f1", "application/pdf", "agent:a1")
    ]
    assert [(a.id, a.summary, a.task_id) for a in by_conversation] == [("f2", None, None)]
    assert detail is not None and [a.id for a in detail.artifacts] == ["f1"]


async def test_reads_are_scoped_to_their_workspace(store: Store, ws: Workspace) -> None:
    other = Workspace(store, await create_workspace(store, "Other"))
    await ws.running_task("t1")
    await ws.append("agent.paired", {"agentId": "a1", "name": "A"})

    def read(r: Reader) -> None:
        assert r.get_task(other.id, "t1") is None
        assert r.get_agent(other.id, "a1") is None
        assert r.list_tasks(other.id) == []

    await store.read(read)
    # An event naming another workspace's task changes nothing there.
    await other.append("task.accepted", {"taskId": "t1"})
    await other.append("task.status_changed", {"taskId": "t1", "status": "failed"})
    assert (await ws.task("t1")).status == "running"


async def test_unknown_event_types_change_no_projection(ws: Workspace) -> None:
    await ws.running_task()
    before = await ws.read(lambda r: _snapshot(r, ws.id))
    await ws.append("task.teleported", {"taskId": "t1", "status": "done"})
    assert await ws.read(lambda r: _snapshot(r, ws.id)) == before


def _snapshot(r: Reader, workspace_id: str) -> Any:
    return (
        r.list_tasks(workspace_id),
        r.list_agents(workspace_id),
        r.list_conversations(workspace_id),
        r.list_interactions(workspace_id),
    )
