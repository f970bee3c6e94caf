"""Pairing and agent credentials (seed 001 §7.1, §11)."""

import json

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.hub import Settings, create_app
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.waiting import until


def test_a_pairing_code_is_single_use(hub: HubClient):
    ana = hub.sign_up()
    code = ana.ok(ana.post("/pairing-codes", {}), 201)
    assert "lineup demo-agent --hub" in code["command"] and code["code"] in code["command"]
    first = hub.client.post("/api/pairing/redeem", json={"code": code["code"], "name": "a1"})
    assert first.status_code == 200
    second = hub.client.post("/api/pairing/redeem", json={"code": code["code"], "name": "a2"})
    assert second.status_code == 404
    assert second.json()["error"]["details"]["diagnostic"] == "LNP-PAIR-INVALID"
    agents = ana.ok(ana.get("/agents"))["agents"]
    assert [a["name"] for a in agents] == ["a1"]
    assert agents[0]["status"] == "never_connected"


def test_a_code_is_case_and_dash_insensitive(hub: HubClient):
    ana = hub.sign_up()
    code = ana.ok(ana.post("/pairing-codes", {}), 201)["code"]
    sloppy = code.replace("-", " ").lower()
    assert hub.client.post("/api/pairing/redeem", json={"code": sloppy}).status_code == 200


def test_a_wrong_code_fails_with_a_diagnostic_and_a_next_step(hub: HubClient):
    response = hub.client.post("/api/pairing/redeem", json={"code": "ZZZZ-ZZZZ"})
    assert response.status_code == 404
    details = response.json()["error"]["details"]
    assert details["diagnostic"] == "LNP-PAIR-INVALID"
    assert "Connect my agent" in details["nextStep"]


def test_pairing_attempts_are_throttled_per_ip(hub: HubClient):
    statuses = [
        hub.client.post("/api/pairing/redeem", json={"code": f"AAAA-AAA{i}"}).status_code
        for i in range(12)
    ]
    assert statuses[:10] == [404] * 10
    assert statuses[10] == 429
    limited = hub.client.post("/api/pairing/redeem", json={"code": "AAAA-BBBB"})
    assert limited.json()["error"]["code"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1


def test_guessing_one_code_is_throttled_per_code(settings: Settings):
    with TestClient(create_app(settings)) as client:
        codes = [client.post("/api/pairing/redeem", json={"code": "QQQQ-QQQQ"}) for _ in range(7)]
    # one TestClient address, but the per-code limit (5) trips before the per-IP one (10)
    assert [r.status_code for r in codes][:5] == [404] * 5
    assert codes[5].status_code == 429


def test_an_expired_code_fails(settings: Settings):
    clock = FakeClock()
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        code = ana.ok(ana.post("/pairing-codes", {}), 201)["code"]
        clock.advance(10 * 60 + 1)
        response = client.post("/api/pairing/redeem", json={"code": code})
        assert response.status_code == 404


def test_an_unknown_credential_is_refused_with_a_copyable_diagnostic(hub: HubClient):
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": "Bearer lna_nonsense"}
    ) as ws:
        frame = json.loads(ws.receive_text())
        assert frame["type"] == "error" and frame["code"] == "unauthenticated"
        assert frame["details"]["diagnostic"] == "LNP-AUTH-UNKNOWN"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4401


def test_revocation_closes_the_open_connection_and_the_credential_never_works_again(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        revoked = ana.ok(ana.post(f"/agents/{creds['agentId']}/revoke"))
        assert revoked["status"] == "revoked"
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                agent.receive()
        assert closed.value.code == 4410
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as ws:
        frame = json.loads(ws.receive_text())
        assert frame["details"]["diagnostic"] == "LNP-AUTH-REVOKED"
    task = ana.post("/tasks", {"title": "x", "targetAgentId": creds["agentId"]})
    assert task.status_code == 409


def test_an_agent_can_be_renamed(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana, name="old")
    ana._use()
    response = hub.client.patch(
        ana.url(f"/agents/{creds['agentId']}"), json={"name": "new"}, headers=ana.headers()
    )
    assert response.json()["name"] == "new"
    until(lambda: ana.ok(ana.get("/agents"))["agents"][0]["name"] == "new", "renamed")
