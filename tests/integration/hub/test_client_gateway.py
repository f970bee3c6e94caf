"""People's WebSocket: snapshot-consistent replay, then live, in order."""

import json

import pytest
from starlette.websockets import WebSocketDisconnect

from tests.support.envelopes import now_iso
from tests.support.hub_client import HubClient
from tests.support.people import Person


def _subscribe(ws, person: Person, last_sequence: int = 0, workspace_id: str | None = None):
    ws.send_text(
        json.dumps(
            {
                "id": "sub-1",
                "type": "client.subscribe",
                "version": "0.1",
                "occurredAt": now_iso(),
                "workspaceId": workspace_id or person.workspace_id,
                "payload": {"lastSequence": last_sequence},
            }
        )
    )


def _until_caught_up(ws) -> tuple[list[dict], int]:
    events = []
    assert json.loads(ws.receive_text())["type"] == "ack"
    while True:
        frame = json.loads(ws.receive_text())
        if frame["type"] == "client.caught_up":
            return events, frame["payload"]["sequence"]
        events.append(frame)


def _open(hub: HubClient, person: Person, **headers: str):
    person._use()
    return hub.client.websocket_connect(
        f"/ws/client?workspaceId={person.workspace_id}", headers=headers
    )


def test_replay_then_live_in_order_and_resume_from_a_sequence(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with _open(hub, ana) as ws:
        _subscribe(ws, ana)
        events, caught_up = _until_caught_up(ws)
        types = [e["type"] for e in events]
        assert types == ["workspace.created", "member.joined", "agent.paired", "agent.confirmed"]
        assert [e["sequence"] for e in events] == [1, 2, 3, 4] and caught_up == 4
        assert events[2]["actor"].startswith("user:")
        ana.ok(ana.post("/conversations", {"title": "Site", "agentIds": [creds["agentId"]]}), 201)
        live = json.loads(ws.receive_text())
        assert (live["type"], live["sequence"]) == ("conversation.created", 5)
    with _open(hub, ana) as ws:
        _subscribe(ws, ana, last_sequence=2)
        events, caught_up = _until_caught_up(ws)
        assert [e["sequence"] for e in events] == [3, 4, 5] and caught_up == 5


def test_streamed_agent_text_reaches_the_app_live_then_the_final_message(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    conversation = ana.ok(
        ana.post("/conversations", {"title": "Chat", "agentIds": [creds["agentId"]]}), 201
    )["id"]
    with hub.agent(creds) as agent, _open(hub, ana) as ws:
        _subscribe(ws, ana)
        _until_caught_up(ws)
        agent.call("message.delta", {"messageId": "m1", "delta": "Hel"})
        agent.call("message.delta", {"messageId": "m1", "delta": "lo"})
        agent.call(
            "message.create",
            {"messageId": "m1", "content": "Hello"},
            conversationId=conversation,
        )
        frames = []
        while not frames or frames[-1]["type"] != "message.created":
            frame = json.loads(ws.receive_text())
            if frame["type"] in ("message.delta", "message.created"):
                frames.append(frame)
        assert [f["payload"].get("delta") for f in frames[:2]] == ["Hel", "lo"]
        assert "sequence" not in frames[0]
        assert frames[2]["payload"]["content"] == "Hello" and frames[2]["sequence"]


def test_a_person_cannot_follow_a_workspace_they_do_not_belong_to(hub: HubClient):
    ana = hub.sign_up()
    bo = hub.sign_up()
    bo._use()
    with hub.client.websocket_connect(f"/ws/client?workspaceId={ana.workspace_id}") as ws:
        frame = json.loads(ws.receive_text())
        assert frame["code"] == "forbidden"
        with pytest.raises(WebSocketDisconnect):
            ws.receive_text()
    with _open(hub, bo) as ws:
        _subscribe(ws, bo, workspace_id=ana.workspace_id)
        assert json.loads(ws.receive_text())["code"] == "forbidden"


def test_without_a_session_the_socket_is_refused(hub: HubClient):
    hub.client.cookies.clear()
    with hub.client.websocket_connect("/ws/client?workspaceId=ws_x") as ws:
        assert json.loads(ws.receive_text())["code"] == "unauthenticated"


def test_a_browser_from_another_origin_is_refused(hub: HubClient):
    ana = hub.sign_up()
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        _open(hub, ana, origin="https://evil.example") as ws,
    ):
        ws.receive_text()
    assert refused.value.code == 4403
    with _open(hub, ana, origin="http://testserver") as ws:
        _subscribe(ws, ana)
        assert _until_caught_up(ws)[1] >= 2


def _subscribe_batched(ws, person: Person, last_sequence: int) -> None:
    ws.send_text(
        json.dumps(
            {
                "id": "sub-b",
                "type": "client.subscribe",
                "version": "0.1",
                "occurredAt": now_iso(),
                "workspaceId": person.workspace_id,
                "payload": {"lastSequence": last_sequence, "batch": True},
            }
        )
    )


def test_a_batched_replay_holds_every_event_once_in_order_across_pages_and_batches(
    hub: HubClient, monkeypatch: pytest.MonkeyPatch
):
    # small pages and batches, so that a few dozen events cross many of both
    monkeypatch.setattr("lineup.hub.follow.PAGE", 7)
    monkeypatch.setattr("lineup.hub.client_gateway.BATCH_CHARS", 1500)
    ana = hub.sign_up()
    creds = hub.pair(ana)
    conversation = ana.ok(
        ana.post("/conversations", {"title": "Site", "agentIds": [creds["agentId"]]}), 201
    )["id"]
    for n in range(30):
        ana.ok(ana.post(f"/conversations/{conversation}/messages", {"content": f"é {n}"}), 201)
    with _open(hub, ana) as ws:
        _subscribe(ws, ana, last_sequence=3)
        singles, latest = _until_caught_up(ws)
    with _open(hub, ana) as ws:
        _subscribe_batched(ws, ana, last_sequence=3)
        assert json.loads(ws.receive_text())["type"] == "ack"
        batches = []
        while (frame := json.loads(ws.receive_text()))["type"] != "client.caught_up":
            assert frame["type"] == "client.batch" and "sequence" not in frame
            assert frame["workspaceId"] == ana.workspace_id
            batches.append(frame["payload"]["events"])
        assert frame["payload"]["sequence"] == latest
        replayed = [event for batch in batches for event in batch]
        assert [e["sequence"] for e in replayed] == list(range(4, latest + 1))
        assert replayed == singles  # each as it comes alone
        assert len(batches) > 3
        ana.ok(ana.post(f"/conversations/{conversation}/messages", {"content": "live"}), 201)
        live = json.loads(ws.receive_text())  # live events come one a frame
        assert (live["type"], live["sequence"]) == ("message.created", latest + 1)
