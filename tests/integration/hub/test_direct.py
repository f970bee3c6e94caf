"""Direct mode's hub side (seed 000 §3.1): the pre-shared token instead of accounts,
throttled guesses, refused account and pairing endpoints, and a token that never leaks.

The embedded hub always runs on a throwaway SQLite database, so these run on SQLite only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.hub.api.direct import DIAGNOSTIC, refusal
from lineup.hub.config import DirectMode
from lineup.protocol.ids import new_id
from tests.integration.hub.conftest import fast_settings
from tests.support.databases import sqlite_url

TOKEN = "k7wq-3hxa-p2mn-t8rv-c4zd"
ATTEMPTS = 5
AGENT_ID = new_id("agent")
# cookies are shared by every port of a host: direct mode names its own, with its agent's id
SESSION = f"lineup_direct_{AGENT_ID}_session"
CSRF = f"lineup_direct_{AGENT_ID}_csrf"


@pytest.fixture
def mode() -> DirectMode:
    return DirectMode(
        token=TOKEN,
        agent_credential=f"lna_{new_id('secret')}",
        workspace_id=new_id("ws"),
        user_id=new_id("user"),
        agent_id=AGENT_ID,
        agent_name="builder",
        person_name="ana",
    )


@pytest.fixture
def direct(mode: DirectMode, tmp_path: Path) -> Iterator[TestClient]:
    settings = fast_settings(
        sqlite_url(tmp_path), tmp_path, direct=mode, signin_attempts_per_ip=ATTEMPTS
    )
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        yield client


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    error: dict[str, Any] = body["error"]
    return error


def _open(client: TestClient, token: str = TOKEN) -> dict[str, Any]:
    response = client.post("/api/direct/session", json={"token": token})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _events(client: TestClient, workspace_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/workspaces/{workspace_id}/events?after=0&limit=500")
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


# --- which LineUp this is -------------------------------------------------------------------


def test_a_hub_says_it_is_a_hub_and_has_no_token_sign_in(client: TestClient) -> None:
    assert client.get("/api/direct").json() == {"mode": "hub", "csrfCookie": "lineup_csrf"}
    _error(client.post("/api/direct/session", json={"token": TOKEN}), 404, "not_found")


def test_direct_mode_says_so_and_names_its_agent_without_a_session(direct: TestClient) -> None:
    response = direct.get("/api/direct")
    assert response.json() == {"mode": "direct", "agentName": "builder", "csrfCookie": CSRF}
    _error(direct.get("/api/auth/me"), 401, "unauthenticated")


# --- the token ------------------------------------------------------------------------------


def test_the_right_token_gives_the_same_session_and_csrf_token_as_sign_in(
    direct: TestClient, mode: DirectMode
) -> None:
    response = direct.post("/api/direct/session", json={"token": TOKEN})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["workspaceId"] == mode.workspace_id
    assert body["user"]["id"] == mode.user_id and body["user"]["displayName"] == "ana"
    assert body["workspaces"] == [{"id": mode.workspace_id, "name": "builder", "role": "owner"}]
    cookies = response.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith(f"{SESSION}="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert any(c.startswith(f"{CSRF}={body['csrfToken']}") for c in cookies)
    assert not any(c.startswith("lineup_session=") for c in cookies)  # a hub's stays its own

    assert direct.get("/api/auth/me").json()["user"]["id"] == mode.user_id
    agents = direct.get(f"/api/workspaces/{mode.workspace_id}/agents").json()["agents"]
    assert [(a["id"], a["name"], a["status"]) for a in agents] == [
        (mode.agent_id, "builder", "never_connected")
    ]
    # the session works for state changes with its CSRF token, like a signed-in person's
    created = direct.post(
        f"/api/workspaces/{mode.workspace_id}/conversations",
        json={"title": "Hello", "agentIds": [mode.agent_id]},
        headers={"X-CSRF-Token": body["csrfToken"]},
    )
    assert created.status_code == 201, created.text


def test_surrounding_spaces_are_forgiven_but_nothing_else(direct: TestClient) -> None:
    _open(direct, f"  {TOKEN}\n")
    direct.cookies.clear()
    for near_miss in (TOKEN.upper(), TOKEN[:-1], TOKEN + "x", TOKEN.replace("-", "")):
        error = _error(
            direct.post("/api/direct/session", json={"token": near_miss}), 401, "unauthenticated"
        )
        assert error["details"] == {"field": "token"}


def test_a_wrong_token_is_unauthenticated_and_starts_no_session(direct: TestClient) -> None:
    response = direct.post("/api/direct/session", json={"token": "not-the-token"})
    error = _error(response, 401, "unauthenticated")
    assert "token is not right" in error["message"]
    assert not any(c.startswith(f"{SESSION}=") for c in response.headers.get_list("set-cookie"))
    _error(direct.get("/api/auth/me"), 401, "unauthenticated")


def test_repeated_guesses_are_throttled_and_a_throttled_guess_is_never_tried(
    direct: TestClient,
) -> None:
    for attempt in range(ATTEMPTS):
        _error(
            direct.post("/api/direct/session", json={"token": f"guess-{attempt:04d}"}),
            401,
            "unauthenticated",
        )
    response = direct.post("/api/direct/session", json={"token": "guess-9999"})
    error = _error(response, 429, "rate_limited")
    assert error["details"]["retryAfterMs"] > 0
    assert int(response.headers["Retry-After"]) >= 1
    assert "token" in error["message"]
    # throttled means not compared: even the right token waits out the window
    response = direct.post("/api/direct/session", json={"token": TOKEN})
    _error(response, 429, "rate_limited")
    assert not any(c.startswith(f"{SESSION}=") for c in response.headers.get_list("set-cookie"))


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"{}",
        b'{"token": 42}',
        b'{"token": ""}',
        json.dumps({"token": "x" * 600}).encode(),
        b'["a list"]',
    ],
    ids=["not-json", "no-token", "number", "empty", "too-long", "list"],
)
def test_a_malformed_token_request_is_invalid_and_changes_nothing(
    direct: TestClient, body: bytes
) -> None:
    response = direct.post(
        "/api/direct/session", content=body, headers={"Content-Type": "application/json"}
    )
    _error(response, 400, "invalid_argument")
    assert not any(c.startswith(f"{SESSION}=") for c in response.headers.get_list("set-cookie"))
    _error(direct.get("/api/auth/me"), 401, "unauthenticated")


def test_the_token_never_appears_in_responses_or_logs(
    direct: TestClient, mode: DirectMode, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []

    def record(response: Any) -> Any:
        seen.append(response.text)
        seen.extend(f"{k}: {v}" for k, v in response.headers.items())
        return response

    record(direct.get("/api/direct"))
    record(direct.post("/api/direct/session", json={"token": TOKEN[:-1] + "x"}))
    record(direct.post("/api/direct/session", json={"token": TOKEN}))
    record(direct.get("/api/auth/me"))
    record(direct.get(f"/?token={TOKEN}"))
    record(direct.get(f"/api/workspaces/{mode.workspace_id}/events?after=0"))
    record(direct.post("/api/auth/signup", json={"email": "a@b.test", "password": TOKEN}))
    assert all(TOKEN not in text for text in seen)
    hub_side = [r for r in caplog.records if not r.name.startswith("httpx")]  # not the test's
    assert all(TOKEN not in r.getMessage() for r in hub_side)
    assert TOKEN not in repr(mode)
    assert mode.agent_credential not in repr(mode)


# --- what direct mode does not offer --------------------------------------------------------


def test_accounts_pairing_and_revocation_are_refused_in_direct_mode_and_change_nothing(
    direct: TestClient, mode: DirectMode
) -> None:
    csrf = _open(direct)["csrfToken"]
    before = _events(direct, mode.workspace_id)
    ws = mode.workspace_id
    refused = [
        ("/api/auth/signup", {"email": "bo@example.test", "password": "long enough pw"}),
        ("/api/auth/signin", {"email": "bo@example.test", "password": "long enough pw"}),
        ("/api/workspaces", {"name": "Second"}),
        ("/api/pairing/redeem", {"code": "ABCD-EFGH", "name": "intruder"}),
        (f"/api/workspaces/{ws}/pairing-codes", {}),
        (f"/api/workspaces/{ws}/agents/{mode.agent_id}/revoke", {}),
        ("/api/notifications/devices", {"endpoint": "https://push.example/1", "keys": {}}),
        ("/api/notifications/test", {}),
        ("/api/auth/password", {"currentPassword": "x", "newPassword": "long enough pw"}),
        (f"/api/workspaces/{ws}/invitations", {}),
        ("/api/invitations/accept", {"code": "ABCD-EFGH-JKLM-NPQR"}),
    ]
    for path, body in refused:
        response = direct.post(path, json=body, headers={"X-CSRF-Token": csrf})
        error = _error(response, 403, "forbidden")
        assert error["details"]["diagnostic"] == DIAGNOSTIC, path
        assert "direct mode" in error["message"], path
        assert "token" in error["details"]["nextStep"], path
    response = direct.put(
        "/api/notifications/preferences",
        json={"events": [], "channels": []},
        headers={"X-CSRF-Token": csrf},
    )
    assert _error(response, 403, "forbidden")["details"]["diagnostic"] == DIAGNOSTIC
    direct.cookies.clear()
    assert _error(direct.get("/metrics"), 403, "forbidden")["details"]["diagnostic"] == DIAGNOSTIC
    _open(direct)
    assert _events(direct, mode.workspace_id) == before
    assert direct.get("/api/auth/me").status_code == 200  # still signed in
    assert [a["status"] for a in direct.get(f"/api/workspaces/{ws}/agents").json()["agents"]] == [
        "never_connected"
    ]


def test_the_refusals_leave_the_rest_of_the_api_alone() -> None:
    assert refusal("GET", "/api/workspaces") is None
    assert refusal("POST", "/api/auth/signout") is None
    assert refusal("PATCH", "/api/workspaces/ws_1/agents/agent_1") is None
    assert refusal("POST", "/api/workspaces/ws_1/conversations") is None
    refused = refusal("POST", "/api/workspaces/ws_1/pairing-codes")
    assert refused is not None and refused.code.value == "forbidden"


def test_a_hub_refuses_none_of_them(client: TestClient) -> None:
    response = client.post(
        "/api/auth/signup",
        json={"email": "hub@example.test", "password": "long enough pw"},
    )
    assert response.status_code == 201, response.text


# --- the agent of direct mode and the people's socket ---------------------------------------


def _hello(workspace_id: str) -> str:
    return json.dumps(
        {
            "id": new_id("evt"),
            "type": "agent.hello",
            "version": "0.1",
            "occurredAt": "2026-07-24T12:00:00Z",
            "workspaceId": workspace_id,
            "payload": {"agentVersion": "1.0", "runtime": "python", "capabilities": ["tasks"]},
        }
    )


def test_only_the_in_process_credential_connects_as_the_agent(
    direct: TestClient, mode: DirectMode
) -> None:
    headers = {"Authorization": f"Bearer {mode.agent_credential}"}
    with direct.websocket_connect("/ws/agent", headers=headers) as ws:
        ws.send_text(_hello(mode.workspace_id))
        assert json.loads(ws.receive_text())["type"] == "ack"
        welcome = json.loads(ws.receive_text())
        assert welcome["type"] == "agent.welcome"
        assert welcome["payload"]["agentId"] == mode.agent_id
    for wrong in (TOKEN, "lna_guessed"):
        with direct.websocket_connect(
            "/ws/agent", headers={"Authorization": f"Bearer {wrong}"}
        ) as ws:
            refused = json.loads(ws.receive_text())
            assert refused["type"] == "error" and refused["code"] == "unauthenticated"


def test_malformed_frames_on_the_people_socket_get_errors_and_the_socket_carries_on(
    direct: TestClient, mode: DirectMode
) -> None:
    _open(direct)
    with direct.websocket_connect(f"/ws/client?workspaceId={mode.workspace_id}") as ws:
        for junk in ("{not json", "[]", json.dumps({"type": "client.subscribe"})):
            ws.send_text(junk)
            answer = json.loads(ws.receive_text())
            assert answer["type"] == "error" and answer["code"] == "invalid_argument", answer
        ws.send_text(
            json.dumps(
                {
                    "id": "sub_1",
                    "type": "client.subscribe",
                    "version": "0.1",
                    "occurredAt": "2026-07-24T12:00:00Z",
                    "workspaceId": mode.workspace_id,
                    "payload": {"lastSequence": 0},
                }
            )
        )
        ack = json.loads(ws.receive_text())
        assert (ack["type"], ack["id"]) == ("ack", "sub_1")
        types = []
        while True:
            frame = json.loads(ws.receive_text())
            types.append(frame["type"])
            if frame["type"] == "client.caught_up":
                break
        assert types == ["workspace.created", "member.joined", "agent.paired", "client.caught_up"]


def test_without_the_token_the_people_socket_is_refused(
    direct: TestClient, mode: DirectMode
) -> None:
    with direct.websocket_connect(f"/ws/client?workspaceId={mode.workspace_id}") as ws:
        refused = json.loads(ws.receive_text())
        assert refused["type"] == "error" and refused["code"] == "unauthenticated"


def test_tools_come_with_the_embedded_hub(direct: TestClient, mode: DirectMode) -> None:
    """An agent's tool call reaches the one person and their answer reaches the agent, as on
    a hub (the same tool routing; direct mode embeds the hub, so nothing is re-implemented)."""
    csrf = _open(direct)["csrfToken"]
    headers = {"X-CSRF-Token": csrf}
    ws = mode.workspace_id
    conversation = direct.post(
        f"/api/workspaces/{ws}/conversations",
        json={"title": "Deploy", "agentIds": [mode.agent_id]},
        headers=headers,
    ).json()["id"]
    with direct.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {mode.agent_credential}"}
    ) as agent:
        agent.send_text(_hello(ws))
        assert json.loads(agent.receive_text())["type"] == "ack"
        call = {
            "id": "evt_call_1",
            "type": "tool.call",
            "version": "0.1",
            "occurredAt": "2026-07-24T12:00:00Z",
            "workspaceId": ws,
            "conversationId": conversation,
            "payload": {
                "call_id": "c1",
                "name": "confirm",
                "arguments": {"message": "Restart the server?"},
            },
        }
        agent.send_text(json.dumps(call))
        while (frame := json.loads(agent.receive_text())).get("id") != "evt_call_1":
            pass
        assert frame["type"] == "ack", frame
        pending = direct.get(f"/api/workspaces/{ws}/tool-calls?status=pending").json()
        (tool_call,) = pending["toolCalls"]
        answered = direct.post(
            f"/api/workspaces/{ws}/tool-calls/{tool_call['id']}/result",
            json={"result": {"message": "yes", "confirmed": True}},
            headers=headers,
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["answeredByName"] == "ana"
        while (frame := json.loads(agent.receive_text())).get("type") != "tool.result":
            pass
        assert frame["payload"]["result"]["confirmed"] is True


def test_direct_mode_answers_are_confined_and_bodies_bounded_like_the_hubs(direct: TestClient):
    headers = direct.get("/api/direct").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    response = direct.post("/api/direct/session", content=b"x" * (2 * 1024 * 1024))
    _error(response, 413, "invalid_argument")
    nul = direct.post("/api/direct/session", json={"token": "a\u0000b"})
    _error(nul, 400, "invalid_argument")
