"""The agents' WebSocket (seed 001 §7.4, §10, §11)."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from lineup.hub import agent_gateway, create_app
from lineup.hub import monitor as monitor_module
from tests.integration.hub.conftest import fast_settings
from tests.integration.store.factory import create_workspace, event
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.monitor import ONCE, TickedMonitor
from tests.support.people import Person


def _task(ana: Person, agent_id: str, title: str = "Tidy deps") -> str:
    body = ana.ok(ana.post("/tasks", {"title": title, "targetAgentId": agent_id}), 201)
    return str(body["task"]["id"])


def _status(ana: Person, task_id: str) -> dict:
    return ana.ok(ana.get(f"/tasks/{task_id}"))["task"]


def test_the_agent_appears_online_with_its_declared_capabilities(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds):
        agent = ana.ok(ana.get(f"/agents/{creds['agentId']}"))
        assert agent["status"] == "online" and agent["online"] is True
        assert agent["capabilities"] == ["tasks"] and agent["runtime"] == "python"
        assert agent["lastHeartbeatAt"] is not None


def test_a_resent_event_is_acked_as_a_duplicate_with_its_original_sequence(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        first = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id, event_id="e-1")
        again = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id, event_id="e-1")
        assert first["duplicate"] is False and again["duplicate"] is True
        assert again["sequence"] == first["sequence"]
        progress = {"status": "running", "progress": 10}
        p1 = agent.call("task.status_changed", progress, taskId=task_id, event_id="e-2")
        p2 = agent.call("task.status_changed", progress, taskId=task_id, event_id="e-2")
        assert (p2["sequence"], p2["duplicate"]) == (p1["sequence"], True)
        timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
        assert [e["type"] for e in timeline] == [
            "task.created",
            "task.accepted",
            "task.status_changed",
        ]


def test_an_illegal_transition_is_a_conflict_and_changes_nothing(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        answer = agent.call("task.status_changed", {"status": "succeeded"}, taskId=task_id)
        assert answer["type"] == "error" and answer["code"] == "conflict"
        assert _status(ana, task_id)["status"] == "queued"
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        agent.call("task.status_changed", {"status": "succeeded"}, taskId=task_id)
        late = agent.call("task.status_changed", {"status": "running"}, taskId=task_id)
        assert late["code"] == "conflict"
        assert _status(ana, task_id)["status"] == "succeeded"


def test_bad_frames_get_an_error_answer_and_the_connection_stays_up(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        agent.ws.send_text("{not json")
        assert agent.receive()["code"] == "invalid_argument"
        agent.ws.send_text(json.dumps({"id": "x", "type": "task.accepted"}))
        error = agent.answer("x")
        assert error["code"] == "invalid_argument" and "occurredAt" in error["message"]
        agent.ws.send_text("x" * (256 * 1024 + 10))
        assert "limit" in agent.receive()["message"]
        ignored = agent.call("task.teleported", {})
        assert ignored["type"] == "ack" and ignored["ignored"] is True
        foreign = agent.call("agent.heartbeat", {}, workspaceId="ws_someone_else")
        assert foreign["code"] == "forbidden"
        assert agent.call("agent.heartbeat", {})["type"] == "ack"


def test_an_agent_cannot_touch_another_agents_task(hub: HubClient):
    ana = hub.sign_up()
    mine = hub.pair(ana, "mine")
    theirs = hub.pair(ana, "theirs")
    with hub.agent(mine) as agent:
        task_id = _task(ana, theirs["agentId"])
        answer = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        assert answer["code"] == "forbidden"
        assert _status(ana, task_id)["status"] == "queued"


def test_an_agent_posts_only_into_conversations_it_is_part_of(hub: HubClient):
    ana = hub.sign_up()
    mine = hub.pair(ana, "mine")
    theirs = hub.pair(ana, "theirs")
    conversation = ana.ok(
        ana.post("/conversations", {"title": "Theirs", "agentIds": [theirs["agentId"]]}), 201
    )["id"]
    with hub.agent(mine) as agent:
        events = {
            "message.create": {"content": "hello"},
            "artifact.created": {"name": "r", "url": "https://example.test/r"},
            "interaction.requested": {
                "interaction": {"id": "i-1", "type": "input", "title": "Name?"}
            },
            "tool.call": {"call_id": "c1", "name": "confirm", "arguments": {"message": "Ok?"}},
        }
        for type_, payload in events.items():
            answer = agent.call(type_, payload, conversationId=conversation)
            assert answer["code"] == "forbidden", (type_, answer)
        timeline = ana.ok(ana.get(f"/conversations/{conversation}/messages"))["messages"]
        assert timeline == []


def test_an_agent_cannot_reach_another_workspace(hub: HubClient):
    ana = hub.sign_up()
    bo = hub.sign_up()
    ana_agent = hub.pair(ana)
    bo_agent = hub.pair(bo)
    task_id = _task(bo, bo_agent["agentId"])
    with hub.agent(ana_agent) as agent:
        for type_, payload in [
            ("task.accepted", {"taskId": task_id}),
            ("task.status_changed", {"status": "running"}),
            ("artifact.created", {"name": "x", "url": "https://x.test"}),
            ("message.create", {"content": "hi"}),
            (
                "interaction.requested",
                {"interaction": {"id": "i9", "type": "approval", "title": "t"}},
            ),
            ("task.child_created", {"parentTaskId": task_id, "title": "c"}),
        ]:
            same_ws = agent.call(type_, payload, taskId=task_id)
            assert same_ws["type"] == "error" and same_ws["code"] == "not_found", same_ws
            other_ws = agent.call(type_, payload, taskId=task_id, workspaceId=bo.workspace_id)
            assert other_ws["code"] == "forbidden", other_ws
        assert _status(bo, task_id)["status"] == "queued"


def test_a_reconnecting_agent_gets_the_downlink_it_missed_in_order(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        assigned = agent.next_of("task.assigned")
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        agent.call(
            "interaction.requested",
            {"interaction": {"id": "int_a", "type": "approval", "title": "Deploy?"}},
            taskId=task_id,
        )
    cursor = assigned["sequence"]
    ana.ok(ana.post("/interactions/int_a/respond", {"response": {"optionId": "approve"}}))
    ana.ok(ana.post(f"/tasks/{task_id}/cancel", {"reason": "enough"}))
    conversation = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["conversationId"]
    ana.ok(
        ana.post(
            f"/conversations/{conversation}/messages",
            {"content": "also this", "targetAgentId": creds["agentId"]},
        ),
        201,
    )
    with hub.agent(creds, last_sequence=cursor) as agent:
        got = [agent.next_of(t) for t in ("interaction.resolved", "task.cancel_requested")]
        got.append(agent.next_of("message.delivered"))
        sequences = [f["sequence"] for f in got]
        assert sequences == sorted(sequences) and sequences[0] > cursor
        assert got[0]["payload"]["response"] == {"optionId": "approve"}
        assert got[1]["payload"] == {"taskId": task_id, "reason": "enough"}
        assert got[2]["payload"]["content"] == "also this"
        assert not [f for f in agent.frames if f.get("type") == "task.assigned"]
        ack = agent.call("task.status_changed", {"status": "cancelled"}, taskId=task_id)
        assert ack["type"] == "ack"
        assert _status(ana, task_id)["status"] == "cancelled"


def test_an_agent_that_stops_beating_goes_offline_and_its_task_shows_connection_lost(
    hub_database: str, tmp_path: Path
):
    clock = FakeClock()
    settings = fast_settings(
        hub_database, tmp_path, heartbeat_interval=0.2, grace_period=1.0, monitor_interval=ONCE
    )
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        monitor = TickedMonitor(client, clock)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        with hub.agent(creds) as agent:
            task_id = _task(ana, creds["agentId"])
            agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
            monitor.tick(0.3)  # one heartbeat missed: still online
            assert ana.ok(ana.get(f"/agents/{creds['agentId']}"))["status"] == "online"
            # no heartbeats: two missed (2 × 0.2 s) and the hub closes the link
            monitor.tick(0.2)
            assert ana.ok(ana.get(f"/agents/{creds['agentId']}"))["status"] == "offline"
            task = _status(ana, task_id)
            assert task["status"] == "running"
            assert task["agentConnectionLost"] is True and task["lastHeartbeatAt"]
            inbox = ana.ok(ana.get("/inbox"))
            assert [t["id"] for t in inbox["needsAttention"]] == [task_id]
            # grace period (1 s here) ends: the task fails with agent_unreachable
            monitor.tick(0.9)
            assert _status(ana, task_id)["status"] == "running"
            monitor.tick(0.1)
            failed = _status(ana, task_id)
            assert failed["status"] == "failed"
            assert failed["error"] == "agent_unreachable"


def test_heartbeats_keep_an_agent_online(hub_database: str, tmp_path: Path):
    clock = FakeClock()
    settings = fast_settings(
        hub_database, tmp_path, heartbeat_interval=0.2, grace_period=1.0, monitor_interval=ONCE
    )
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        monitor = TickedMonitor(client, clock)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        with hub.agent(creds) as agent:
            for _ in range(8):  # several offline windows (0.4 s each), a beat every 0.2 s
                monitor.tick(0.2)
                assert agent.call("agent.heartbeat", {})["type"] == "ack"
            assert ana.ok(ana.get(f"/agents/{creds['agentId']}"))["status"] == "online"


def test_a_second_connection_replaces_the_first(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as _first, hub.agent(creds) as second:
        assert second.call("agent.heartbeat", {})["type"] == "ack"
        assert ana.ok(ana.get(f"/agents/{creds['agentId']}"))["status"] == "online"


frames = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
        max_leaves=20,
    ).map(json.dumps),
    st.fixed_dictionaries(
        {
            "id": st.text(min_size=1, max_size=10),
            "type": st.sampled_from(
                [
                    "task.accepted",
                    "task.status_changed",
                    "interaction.requested",
                    "artifact.created",
                    "message.create",
                    "task.child_created",
                    "tool.call",
                    "agent.hello",
                    "message.delta",
                    "task.assigned",
                    "x.y",
                ]
            ),
            "version": st.just("0.1"),
            "occurredAt": st.just("2026-01-01T00:00:00Z"),
            "workspaceId": st.text(max_size=10),
            "taskId": st.text(max_size=10),
            "payload": st.dictionaries(
                st.sampled_from(["taskId", "status", "progress", "title", "interaction", "name"]),
                st.none() | st.integers() | st.text(max_size=10),
                max_size=4,
            ),
        }
    ).map(json.dumps),
)


def test_fuzzed_frames_each_get_exactly_one_answer_and_never_break_the_connection(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:

        @settings(
            max_examples=150,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(frames)
        def fuzz(raw: str) -> None:
            agent.ws.send_text(raw)
            answer = agent.receive()
            while answer.get("type") not in ("ack", "error"):
                answer = agent.receive()  # a downlink frame, not the answer
            assert answer["type"] in ("ack", "error")
            if answer["type"] == "error":
                assert answer["code"] in {
                    "invalid_argument",
                    "forbidden",
                    "not_found",
                    "conflict",
                }, answer
                assert "Traceback" not in answer["message"]
            beat = AgentSocket.call(agent, "agent.heartbeat", {})
            assert beat["type"] == "ack"

        fuzz()


def test_after_a_restart_every_agent_recorded_online_goes_offline_however_many_there_are(
    hub_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The sweep reads the agents recorded online a page at a time (a page of two here), so the
    ones beyond its first page are not left online with nothing holding them."""
    monkeypatch.setattr(monitor_module, "STALE_SWEEP_PAGE", 2)
    clock = FakeClock()
    settings = fast_settings(hub_database, tmp_path, heartbeat_interval=0.2, monitor_interval=ONCE)
    with TestClient(create_app(settings, clock=clock)) as client:
        monitor = TickedMonitor(client, clock)
        store = monitor.state.store
        assert client.portal is not None
        ws = client.portal.call(create_workspace, store)
        ids = [f"agent_{n}" for n in range(5)]
        for agent_id in ids:  # left online by a hub that stopped without recording them
            for type_, payload in (
                ("agent.paired", {"agentId": agent_id, "name": agent_id}),
                ("agent.connected", {"agentId": agent_id, "capabilities": []}),
            ):
                client.portal.call(store.append, event(ws, type_, payload))

        def statuses() -> set[str]:
            async def read() -> set[str]:
                return await store.read(
                    lambda r: {a.status for a in (r.get_agent(ws, i) for i in ids) if a}
                )

            assert client.portal is not None
            return client.portal.call(read)

        assert statuses() == {"online"}
        monitor.tick(0.5)
        assert statuses() == {"offline"}


def test_a_message_to_an_agent_outside_the_conversation_brings_it_in_so_its_reply_is_kept(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    conversation = ana.ok(ana.post("/conversations", {"title": "No agents yet"}), 201)["id"]
    assert ana.ok(ana.get(f"/conversations/{conversation}"))["agentIds"] == []
    with hub.agent(creds) as agent:
        ana.ok(
            ana.post(
                f"/conversations/{conversation}/messages",
                {"content": "are you there?", "targetAgentId": creds["agentId"]},
            ),
            201,
        )
        delivered = agent.next_of("message.delivered")
        assert delivered["payload"]["content"] == "are you there?"
        ack = agent.call("message.create", {"content": "yes"}, conversationId=conversation)
        assert ack["type"] == "ack", ack
    assert ana.ok(ana.get(f"/conversations/{conversation}"))["agentIds"] == [creds["agentId"]]
    contents = [
        m["content"] for m in ana.ok(ana.get(f"/conversations/{conversation}/messages"))["messages"]
    ]
    assert contents == ["are you there?", "yes"]
    joined = ana.ok(ana.get("/raw-events", params={"subject": f"conversation:{conversation}"}))
    types = [e["type"] for e in joined["events"]]
    assert types.index("conversation.agent_joined") < types.index("message.created")


def test_an_agent_without_a_cursor_is_replayed_from_its_pairing_not_the_whole_log(
    hub: HubClient, monkeypatch: pytest.MonkeyPatch
):
    """Nothing recorded before an agent was paired can be addressed to it: a first
    connection (no ``lastSequence``) reads the log from the pairing on, and still gets all
    of its downlink; an agent with a cursor is replayed after its own cursor."""
    ana = hub.sign_up()
    old = hub.pair(ana, "old")
    for n in range(5):
        _task(ana, old["agentId"], f"earlier {n}")
    creds = hub.pair(ana, "new")
    events = ana.ok(ana.get("/events", params={"limit": 1000}))["events"]
    paired = next(
        e["sequence"]
        for e in events
        if e["type"] == "agent.paired" and e["payload"]["agentId"] == creds["agentId"]
    )
    assert paired > 10, "the workspace had a log before this agent"
    task_id = _task(ana, creds["agentId"], "for the new one")

    starts: list[int] = []
    follower = agent_gateway.Follower

    def recording(store, broker, workspace_id, after, *args, **kwargs):  # type: ignore[no-untyped-def]
        starts.append(after)
        return follower(store, broker, workspace_id, after, *args, **kwargs)

    monkeypatch.setattr(agent_gateway, "Follower", recording)
    with hub.agent(creds) as agent:
        assigned = agent.next_of("task.assigned")
        assert assigned["taskId"] == task_id
        assert agent.welcome["payload"]["latestSequence"] > paired
    assert starts == [paired - 1]
    with hub.agent(creds, last_sequence=assigned["sequence"]):
        pass
    assert starts[1] == assigned["sequence"]
