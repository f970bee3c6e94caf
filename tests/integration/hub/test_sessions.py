"""People's sessions: a short-lived access token, a rotating refresh token whose reuse ends the
whole family, sessions listed and ended from Settings (seed 001 §9.1) — on both databases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.domain.sessions import REFRESH_RACE_MS
from lineup.hub import create_app
from lineup.store import audit as stored_audit
from lineup.store import schema
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import PASSWORD, Person
from tests.support.waiting import until

ACCESS_TTL = 15 * 60
SESSION_TTL = 24 * 3600


@dataclass
class World:
    client: TestClient
    hub: HubClient
    clock: FakeClock


@pytest.fixture
def world(hub_database: str, tmp_path: Path) -> Iterator[World]:
    clock = FakeClock()
    settings = fast_settings(
        hub_database, tmp_path, access_token_ttl=ACCESS_TTL, session_ttl=SESSION_TTL
    )
    with TestClient(create_app(settings, clock=clock), base_url="http://testserver") as client:
        yield World(client, HubClient(client), clock)


def _me(person: Person) -> int:
    person._use()
    return person.client.get("/api/auth/me").status_code


def _reason(response: object) -> str:
    body = response.json()  # type: ignore[attr-defined]
    assert body["error"]["code"] == "unauthenticated", body
    return str(body["error"]["details"]["reason"])


def _sign_in(client: TestClient, ana: Person, user_agent: str) -> Person:
    """Another device of the same person: its own session."""
    client.cookies.clear()
    response = client.post(
        "/api/auth/signin",
        json={"email": ana.email, "password": PASSWORD},
        headers={"User-Agent": user_agent},
    )
    assert response.status_code == 200, response.text
    return Person(
        client,
        ana.email,
        response.json()["csrfToken"],
        ana.workspace_id,
        ana.user_id,
        response.cookies["lineup_session"],
        ana.display_name,
        response.cookies["lineup_refresh"],
    )


def test_signing_in_sets_an_access_cookie_and_a_refresh_cookie_for_the_refresh_route_only(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    again = world.client.post("/api/auth/signin", json={"email": ana.email, "password": PASSWORD})
    cookies = {
        header.split("=", 1)[0]: header.lower() for header in again.headers.get_list("set-cookie")
    }
    assert "httponly" in cookies["lineup_session"] and "path=/;" in cookies["lineup_session"]
    assert "httponly" in cookies["lineup_refresh"]
    assert "path=/api/auth/refresh" in cookies["lineup_refresh"]
    assert ana.session.startswith("lsa_") and ana.refresh_token.startswith("lsr_")


def test_an_expired_access_token_is_refused_as_token_expired_and_a_refresh_opens_the_api_again(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    assert _me(ana) == 200
    world.clock.advance(ACCESS_TTL + 1)
    ana._use()
    expired = ana.client.get("/api/auth/me")
    assert expired.status_code == 401 and _reason(expired) == "token_expired"
    old_refresh = ana.refresh_token
    refreshed = ana.refresh()
    assert refreshed.status_code == 200, refreshed.text
    assert ana.refresh_token != old_refresh
    assert set(refreshed.json()) == {"accessExpiresAt", "sessionExpiresAt"}
    assert _me(ana) == 200


def test_reusing_a_spent_refresh_token_ends_the_whole_family_and_is_audited(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    thief = Person(**{**ana.__dict__})  # someone who copied the refresh cookie
    assert ana.refresh().status_code == 200  # the person refreshes first: thief's copy is spent
    assert _me(ana) == 200
    world.clock.advance(REFRESH_RACE_MS / 1000 + 1)
    reused = thief.refresh()
    assert reused.status_code == 401 and _reason(reused) == "refresh_reused"
    # the fresh tokens of the family stop working too, at once
    ana._use()
    me = ana.client.get("/api/auth/me")
    assert me.status_code == 401 and _reason(me) == "session_ended"
    again = ana.refresh()
    assert again.status_code == 401 and _reason(again) == "session_ended"
    state = world.client.app.state.hub  # type: ignore[attr-defined]
    entries = world.client.portal.call(  # type: ignore[union-attr]
        state.store.read, lambda r: stored_audit.entries(r.connection, 0, 100)
    )
    kinds = [e.kind for e in entries]
    assert "session.refresh_reused" in kinds


def test_a_sibling_tabs_simultaneous_refresh_is_refused_without_ending_the_session(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    other_tab = Person(**{**ana.__dict__})
    assert ana.refresh().status_code == 200
    raced = other_tab.refresh()
    assert raced.status_code == 401 and _reason(raced) == "refresh_superseded"
    assert _me(ana) == 200
    assert ana.refresh().status_code == 200


def test_a_refresh_needs_the_csrf_token(world: World) -> None:
    ana = world.hub.sign_up()
    ana._use()
    refused = ana.client.post("/api/auth/refresh")
    assert refused.status_code == 403
    assert ana.refresh().status_code == 200  # the token was not spent by the refusal


def test_no_refresh_takes_a_session_past_its_lifetime(world: World) -> None:
    ana = world.hub.sign_up()
    world.clock.advance(SESSION_TTL - 60)
    assert ana.refresh().status_code == 200
    world.clock.advance(61)
    late = ana.refresh()
    assert late.status_code == 401 and _reason(late) == "session_ended"
    ana._use()
    assert ana.client.get("/api/auth/me").status_code == 401


def test_sessions_are_listed_with_this_device_marked_and_can_be_ended_one_by_one(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    phone = _sign_in(world.client, ana, "Phone/1.0")
    laptop = _sign_in(world.client, ana, "Laptop/2.0")
    world.clock.advance(120)
    assert _me(phone) == 200  # the phone used its session last
    laptop._use()
    listed = world.client.get("/api/auth/sessions").json()["sessions"]
    assert len(listed) == 3
    assert listed[0]["userAgent"] == "Phone/1.0"
    assert [s["current"] for s in listed].count(True) == 1
    current = next(s for s in listed if s["current"])
    assert current["userAgent"] == "Laptop/2.0"
    assert {"id", "createdAt", "lastUsedAt", "expiresAt"} <= set(current)

    phone_id = listed[0]["id"]
    laptop._use()
    ended = world.client.delete(f"/api/auth/sessions/{phone_id}", headers=laptop.headers())
    assert ended.status_code == 204
    phone._use()
    refused = world.client.get("/api/auth/me")
    assert refused.status_code == 401 and _reason(refused) == "session_ended"
    assert phone.refresh().status_code == 401
    assert _me(laptop) == 200
    laptop._use()
    again = world.client.delete(f"/api/auth/sessions/{phone_id}", headers=laptop.headers())
    assert again.status_code == 404


def test_one_person_cannot_end_anothers_session(world: World) -> None:
    ana = world.hub.sign_up()
    ana._use()
    ana_session = world.client.get("/api/auth/sessions").json()["sessions"][0]["id"]
    bob = world.hub.sign_up(name="Bob")
    bob._use()
    response = world.client.delete(f"/api/auth/sessions/{ana_session}", headers=bob.headers())
    assert response.status_code == 404
    assert _me(ana) == 200


def test_ending_all_other_sessions_keeps_only_this_one(world: World) -> None:
    ana = world.hub.sign_up()
    phone = _sign_in(world.client, ana, "Phone/1.0")
    laptop = _sign_in(world.client, ana, "Laptop/2.0")
    laptop._use()
    ended = world.client.post("/api/auth/signout-others", headers=laptop.headers())
    assert ended.json() == {"signedOutSessions": 2}
    assert (_me(ana), _me(phone), _me(laptop)) == (401, 401, 200)
    assert ana.refresh().status_code == 401
    laptop._use()
    assert len(world.client.get("/api/auth/sessions").json()["sessions"]) == 1


def test_the_people_socket_refuses_an_expired_access_token_with_its_reason(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    world.clock.advance(ACCESS_TTL + 1)
    with world.hub.people_socket(ana) as ws:
        frame = json.loads(ws.receive_text())
        assert frame["code"] == "unauthenticated"
        assert frame["details"]["reason"] == "token_expired"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4401
    assert ana.refresh().status_code == 200
    with world.hub.people_socket(ana) as ws:
        ws.send_text(
            json.dumps(
                {
                    "id": "evt_sub1",
                    "type": "client.subscribe",
                    "version": "0.1",
                    "occurredAt": "2027-01-01T00:00:00.000Z",
                    "workspaceId": ana.workspace_id,
                    "payload": {"lastSequence": 0},
                }
            )
        )
        assert json.loads(ws.receive_text())["type"] == "ack"


def test_ending_a_session_closes_its_live_socket_at_once(world: World) -> None:
    ana = world.hub.sign_up()
    phone = _sign_in(world.client, ana, "Phone/1.0")
    with world.hub.people_socket(phone) as ws:
        ana._use()
        listed = world.client.get("/api/auth/sessions").json()["sessions"]
        phone_id = next(s["id"] for s in listed if not s["current"])
        ended = world.client.delete(f"/api/auth/sessions/{phone_id}", headers=ana.headers())
        assert ended.status_code == 204
        frame = json.loads(ws.receive_text())
        assert frame["details"]["reason"] == "session_ended"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4401


# --- agents' credentials: rotated without pairing again -------------------------------------


def _refused_at_connect(client: TestClient, credential: str) -> str:
    with client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {credential}"}
    ) as ws:
        frame = json.loads(ws.receive_text())
        assert frame["code"] == "unauthenticated"
        return str(frame["details"]["diagnostic"])


def test_a_person_rotates_an_agents_credential_the_old_one_fails_and_the_new_one_connects(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    creds = world.hub.pair(ana)
    with world.hub.agent(creds) as agent:
        rotated = ana.send(f"/agents/{creds['agentId']}/credential/rotate")
        assert rotated["agentId"] == creds["agentId"]
        assert rotated["credential"].startswith("lna_")
        assert rotated["credential"] != creds["credential"]
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                agent.receive()
        assert closed.value.code == 4401
    assert _refused_at_connect(world.client, creds["credential"]) == "LNP-AUTH-REVOKED"
    with world.hub.agent({**creds, "credential": rotated["credential"]}) as agent:
        assert agent.welcome is not None
    agents = ana.read("/agents")["agents"]
    assert [a["id"] for a in agents] == [creds["agentId"]]  # the same agent, not a new one


def test_an_agent_rotates_its_own_credential(world: World) -> None:
    ana = world.hub.sign_up()
    creds = world.hub.pair(ana)
    response = world.client.post(
        "/api/agent/credential/rotate",
        headers={"Authorization": f"Bearer {creds['credential']}"},
    )
    assert response.status_code == 200, response.text
    new = response.json()["credential"]
    assert _refused_at_connect(world.client, creds["credential"]) == "LNP-AUTH-REVOKED"
    again = world.client.post(
        "/api/agent/credential/rotate",
        headers={"Authorization": f"Bearer {creds['credential']}"},
    )
    assert again.status_code == 401
    with world.hub.agent({**creds, "credential": new}) as agent:
        assert agent.welcome is not None


def test_a_revoked_agents_credential_cannot_be_rotated(world: World) -> None:
    ana = world.hub.sign_up()
    creds = world.hub.pair(ana)
    ana.send(f"/agents/{creds['agentId']}/revoke")
    response = ana.post(f"/agents/{creds['agentId']}/credential/rotate")
    assert response.status_code == 409


def test_the_hub_forgets_a_session_once_its_family_has_ended_and_keeps_the_live_ones(
    world: World,
) -> None:
    ana = world.hub.sign_up()
    world.clock.advance(SESSION_TTL // 2)
    bob = world.hub.sign_up()
    store = world.client.app.state.hub.store  # type: ignore[attr-defined]

    def people_with_sessions() -> set[str]:
        def read(r: Any) -> set[str]:
            rows = r.connection.execute(select(schema.sessions.c.user_id)).scalars()
            return set(rows)

        assert world.client.portal is not None
        return world.client.portal.call(store.read, read)  # type: ignore[no-any-return]

    assert people_with_sessions() == {ana.user_id, bob.user_id}
    world.clock.advance(SESSION_TTL // 2 + 1)
    until(lambda: people_with_sessions() == {bob.user_id}, "ana's ended session to be forgotten")
    assert bob.refresh().status_code == 200
