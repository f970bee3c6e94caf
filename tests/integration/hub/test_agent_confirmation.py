"""Binding finishes with the person's confirmation (seed 001 §7.1), and agents' settings that
people change from the app (seed 001 §6) — on both databases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "model": {
            "type": "string",
            "title": "Model",
            "enum": ["small", "large"],
            "default": "small",
        },
        "retries": {
            "type": "integer",
            "title": "Retries",
            "minimum": 0,
            "maximum": 5,
            "default": 2,
        },
        "dryRun": {"type": "boolean", "title": "Dry run", "description": "Plan only."},
    },
}


def _refused_as_unconfirmed(answer: dict[str, Any]) -> None:
    assert answer["type"] == "error", answer
    assert answer["code"] == "conflict"
    assert answer["details"]["reason"] == "agent_unconfirmed"


def _http_refused_as_unconfirmed(response: Any) -> None:
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "conflict" and error["details"]["reason"] == "agent_unconfirmed"


def _upload(hub: HubClient, creds: dict[str, Any]) -> Any:
    hub.client.cookies.clear()
    return hub.client.post(
        "/api/agent/artifacts",
        params={"name": "report.md"},
        content=b"# report",
        headers={"Authorization": f"Bearer {creds['credential']}", "Content-Type": "text/plain"},
    )


def _put_settings(person: Person, hub: HubClient, agent_id: str, values: Any) -> Any:
    person._use()
    return hub.client.put(
        person.url(f"/agents/{agent_id}/settings"),
        json={"values": values},
        headers=person.headers(),
    )


def test_an_unconfirmed_agent_gets_no_work_until_a_person_confirms_it_then_it_does(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana, "builder", confirm=False)
    assert creds["awaitingConfirmation"] is True
    agent_id = creds["agentId"]
    shown = ana.read(f"/agents/{agent_id}")
    assert shown["confirmed"] is False and shown["confirmedAt"] is None
    assert (shown["runtime"], shown["version"]) == ("python", "1.0")

    # every way a person gives an agent work is refused
    _http_refused_as_unconfirmed(ana.post("/conversations", {"title": "x", "agentIds": [agent_id]}))
    _http_refused_as_unconfirmed(ana.post("/tasks", {"title": "x", "targetAgentId": agent_id}))
    conversation = ana.send("/conversations", {"title": "alone", "agentIds": []}, 201)["id"]
    _http_refused_as_unconfirmed(
        ana.post(
            f"/conversations/{conversation}/messages",
            {"content": "hello", "targetAgentId": agent_id},
        )
    )
    _http_refused_as_unconfirmed(_upload(hub, creds))

    with hub.agent(creds) as agent:
        assert agent.welcome is not None
        assert agent.welcome["payload"]["awaitingConfirmation"] is True
        assert agent.welcome["payload"]["name"] == "builder"
        # it may beat, and nothing else
        assert agent.call("agent.heartbeat", {})["type"] == "ack"
        for type_, payload in [
            ("message.create", {"content": "hi"}),
            ("tool.call", {"call_id": "c1", "name": "confirm", "arguments": {"title": "ok?"}}),
            ("tool.list", {"tools": []}),
            ("capability.list", {}),
            (
                "interaction.requested",
                {"interaction": {"id": "int_1", "type": "input", "title": "Name?"}},
            ),
        ]:
            _refused_as_unconfirmed(agent.call(type_, payload, conversationId=conversation))

        confirmed = ana.send(f"/agents/{agent_id}/confirm", {"name": "Builder Bot"})
        assert confirmed["confirmed"] is True and confirmed["name"] == "Builder Bot"
        news = agent.next_of("agent.confirmed")
        assert news["payload"] == {"agentId": agent_id, "name": "Builder Bot"}
        assert news["sequence"] >= 1

        # now it gets work, and may act
        task = ana.send("/tasks", {"title": "Tidy up", "targetAgentId": agent_id}, 201)
        assigned = agent.next_of("task.assigned")
        assert assigned["payload"]["taskId"] == task["task"]["id"]
        accepted = agent.call(
            "task.accepted", {"taskId": assigned["taskId"]}, taskId=assigned["taskId"]
        )
        assert accepted["type"] == "ack"
    assert _upload(hub, creds).status_code == 201

    history = ana.read(f"/agents/{agent_id}/events")["events"]
    assert [e["type"] for e in history if e["type"] == "agent.confirmed"] == ["agent.confirmed"]
    confirmed_event = next(e for e in history if e["type"] == "agent.confirmed")
    assert confirmed_event["payload"]["confirmedBy"] == f"user:{ana.user_id}"

    # a reconnecting agent hears it from its welcome, not again from the log
    with hub.agent(creds) as again:
        assert again.welcome is not None
        assert again.welcome["payload"]["awaitingConfirmation"] is False
        assert again.welcome["payload"]["name"] == "Builder Bot"
        assert again.call("agent.heartbeat", {})["type"] == "ack"
        assert not [f for f in again.frames if f.get("type") == "agent.confirmed"]


def test_confirming_twice_changes_nothing_and_a_confirmed_agent_cannot_be_rejected(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana, "builder")  # confirmed as the helper's person does
    agent_id = creds["agentId"]
    again = ana.send(f"/agents/{agent_id}/confirm", {"name": "other"})
    assert again["confirmed"] is True and again["name"] == "builder"
    confirmations = [
        e
        for e in ana.read(f"/agents/{agent_id}/events")["events"]
        if e["type"] == "agent.confirmed"
    ]
    assert len(confirmations) == 1
    rejected = ana.post(f"/agents/{agent_id}/reject")
    assert rejected.status_code == 409
    assert rejected.json()["error"]["details"]["reason"] == "already_confirmed"


def test_a_rejected_agent_is_disconnected_gone_and_its_credential_refused(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana, "stranger", confirm=False)
    agent_id = creds["agentId"]
    with hub.agent(creds) as agent:
        assert ana.post(f"/agents/{agent_id}/reject").status_code == 204
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                agent.receive()
        assert closed.value.code == 4410
    assert ana.get(f"/agents/{agent_id}").status_code == 404
    assert agent_id not in [a["id"] for a in ana.read("/agents")["agents"]]
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as ws:
        frame = json.loads(ws.receive_text())
        assert frame["details"]["diagnostic"] == "LNP-AUTH-REVOKED"
    assert ana.post(f"/agents/{agent_id}/confirm").status_code == 404


def test_another_workspaces_agent_is_not_found(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana, confirm=False)
    bob = hub.sign_up(name="Bob")
    agent_id = creds["agentId"]
    for response in (
        bob.post(f"/agents/{agent_id}/confirm", {}),
        bob.post(f"/agents/{agent_id}/reject"),
        _put_settings(bob, hub, agent_id, {"retries": 1}),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"
    assert ana.read(f"/agents/{agent_id}")["confirmed"] is False


def test_a_revoked_agent_cannot_be_confirmed(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana, confirm=False)
    ana.send(f"/agents/{creds['agentId']}/revoke")
    refused = ana.post(f"/agents/{creds['agentId']}/confirm")
    assert refused.status_code == 409 and refused.json()["error"]["details"]["reason"] == "revoked"


# --- settings ------------------------------------------------------------------------------


def _settings_frames(agent: AgentSocket) -> dict[str, Any]:
    return agent.next_of("agent.settings")["payload"]


def test_declared_settings_are_validated_delivered_live_and_in_the_next_welcome(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    agent_id = creds["agentId"]
    with hub.agent(creds, hello={"settingsSchema": SCHEMA}) as agent:
        assert agent.welcome is not None
        assert agent.welcome["payload"]["settings"] == {"model": "small", "retries": 2}
        shown = ana.read(f"/agents/{agent_id}")
        assert shown["settingsSchema"] == SCHEMA
        assert shown["settings"] == {"model": "small", "retries": 2}

        # wrong values are refused, naming the field
        for values, field in [
            ({"retries": 9}, "retries"),
            ({"retries": "3"}, "retries"),
            ({"model": "huge"}, "model"),
            ({"dryRun": "yes"}, "dryRun"),
            ({"colour": "red"}, "colour"),
        ]:
            refused = _put_settings(ana, hub, agent_id, values)
            assert refused.status_code == 400, refused.text
            error = refused.json()["error"]
            assert error["code"] == "invalid_argument" and error["details"]["field"] == field
        assert ana.read(f"/agents/{agent_id}")["settings"] == {"model": "small", "retries": 2}

        saved = _put_settings(ana, hub, agent_id, {"model": "large", "dryRun": True})
        assert saved.status_code == 200, saved.text
        complete = {"model": "large", "retries": 2, "dryRun": True}
        assert saved.json()["settings"] == complete
        live = _settings_frames(agent)
        assert live == {"agentId": agent_id, "values": complete}
        # the same values again record nothing
        assert _put_settings(ana, hub, agent_id, complete).status_code == 200
    changes = [
        e
        for e in ana.read(f"/agents/{agent_id}/events")["events"]
        if e["type"] == "agent.settings_changed"
    ]
    assert len(changes) == 1 and changes[0]["payload"]["values"] == complete

    with hub.agent(creds, hello={"settingsSchema": SCHEMA}) as again:
        assert again.welcome is not None
        assert again.welcome["payload"]["settings"] == complete

    # an adapter that narrows its schema: what no longer fits falls back to the default
    narrower = json.loads(json.dumps(SCHEMA))
    narrower["properties"]["model"]["enum"] = ["small", "medium"]
    with hub.agent(creds, hello={"settingsSchema": narrower}) as changed:
        assert changed.welcome is not None
        assert changed.welcome["payload"]["settings"] == {
            "model": "small",
            "retries": 2,
            "dryRun": True,
        }


def test_an_agent_without_a_settings_schema_has_no_settings_to_save(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        assert agent.welcome is not None and "settings" not in agent.welcome["payload"]
    shown = ana.read(f"/agents/{creds['agentId']}")
    assert shown["settingsSchema"] is None and shown["settings"] == {}
    refused = _put_settings(ana, hub, creds["agentId"], {"retries": 1})
    assert refused.status_code == 409
    assert refused.json()["error"]["details"]["reason"] == "no_settings"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}}},
        {"type": "object", "properties": {"deep": {"type": "object"}}},
        {"type": "array"},
    ],
)
def test_a_hello_with_an_unusable_settings_schema_is_refused(
    hub: HubClient, schema: dict[str, Any]
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as ws:
        agent = AgentSocket(ws, creds["workspaceId"], creds["agentId"])
        answer = agent.call(
            "agent.hello",
            {
                "agentVersion": "1.0",
                "runtime": "python",
                "capabilities": [],
                "settingsSchema": schema,
            },
        )
        assert answer["type"] == "error" and answer["code"] == "invalid_argument"
        assert "settingsSchema" in json.dumps(answer["details"])
        with pytest.raises(WebSocketDisconnect) as closed:
            agent.receive()
        assert closed.value.code == 4400
    assert ana.read(f"/agents/{creds['agentId']}")["settingsSchema"] is None


def test_what_the_adapter_says_at_redemption_is_shown_for_confirmation(hub: HubClient):
    ana = hub.sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    redeemed = hub.client.post(
        "/api/pairing/redeem",
        json={
            "code": code,
            "name": "builder",
            "runtime": "node",
            "agentVersion": "3.1",
            "capabilities": ["tasks", "deploy"],
        },
    )
    assert redeemed.status_code == 200, redeemed.text
    shown = ana.read(f"/agents/{redeemed.json()['agentId']}")
    assert (shown["runtime"], shown["version"], shown["capabilities"]) == (
        "node",
        "3.1",
        ["tasks", "deploy"],
    )
    assert shown["confirmed"] is False and shown["status"] == "never_connected"
