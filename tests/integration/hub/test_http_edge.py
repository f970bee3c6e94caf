"""The HTTP edge: NUL refused, bodies bounded, numbers bounded, operators' endpoints guarded,
security headers on every answer, the Secure cookie behind https."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.hub import Settings, create_app
from lineup.hub.request_guard import RequestGuard
from lineup.hub.security_headers import APP_POLICY
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import Person
from tests.support.waiting import until

SMALL_LIMIT = 4096


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    error: dict[str, Any] = body["error"]
    return error


def _agent(hub: HubClient, ana: Person) -> str:
    return str(hub.pair(ana)["agentId"])


# --- NUL --------------------------------------------------------------------------------------


def test_a_task_title_with_a_nul_character_is_refused_and_no_task_is_queued(hub: HubClient):
    ana = hub.sign_up()
    agent_id = _agent(hub, ana)
    response = ana.post("/tasks", {"title": "tidy\u0000deps", "targetAgentId": agent_id})
    assert "NUL" in _error(response, 400, "invalid_argument")["message"]
    assert ana.ok(ana.get("/tasks"))["tasks"] == []


def test_a_nul_hidden_in_a_nested_value_or_a_key_is_refused(hub: HubClient):
    ana = hub.sign_up()
    agent_id = _agent(hub, ana)
    for body in (
        {"title": "ok", "targetAgentId": agent_id, "input": {"deep": ["x", "\u0000"]}},
        {"title": "ok", "targetAgentId": agent_id, "input": {"k\u0000": 1}},
    ):
        _error(ana.post("/tasks", body), 400, "invalid_argument")


def test_the_text_backslash_u0000_is_not_a_nul_and_is_kept(hub: HubClient):
    ana = hub.sign_up()
    agent_id = _agent(hub, ana)
    title = "literally \\u0000"
    task = ana.ok(ana.post("/tasks", {"title": title, "targetAgentId": agent_id}), 201)["task"]
    assert task["title"] == title


def test_a_nul_in_the_query_or_the_path_is_refused(hub: HubClient):
    ana = hub.sign_up()
    _error(ana.get("/tasks", params={"status": "queued\u0000"}), 400, "invalid_argument")
    _error(ana.get("/tasks/task%00x"), 400, "invalid_argument")


# --- Idempotency-Key -------------------------------------------------------------------------


def _keyed(person: Person, path: str, body: dict[str, Any], key: str) -> Any:
    return person.post(path, body, **{"Idempotency-Key": key})


def test_a_retry_with_the_same_key_and_body_does_nothing_twice(hub: HubClient):
    ana = hub.sign_up()
    first = ana.ok(_keyed(ana, "/conversations", {"title": "plan", "agentIds": []}, "k-1"), 201)
    # the same body, its keys in another order: the same request
    again = ana.ok(_keyed(ana, "/conversations", {"agentIds": [], "title": "plan"}, "k-1"), 201)
    assert again["id"] == first["id"]
    assert len(ana.ok(ana.get("/conversations"))["conversations"]) == 1


def test_an_idempotency_key_reused_on_another_endpoint_is_a_conflict(hub: HubClient):
    ana = hub.sign_up()
    agent_id = _agent(hub, ana)
    ana.ok(_keyed(ana, "/conversations", {"title": "plan"}, "k-2"), 201)
    reused = _keyed(ana, "/tasks", {"title": "tidy", "targetAgentId": agent_id}, "k-2")
    error = _error(reused, 409, "conflict")
    assert error["details"]["reason"] == "different_request"
    assert f"/api/workspaces/{ana.workspace_id}/conversations" in error["message"]
    assert ana.ok(ana.get("/tasks"))["tasks"] == []
    # the hub carries on answering
    assert ana.get("/conversations").status_code == 200


def test_an_idempotency_key_resent_with_another_body_is_a_conflict(hub: HubClient):
    ana = hub.sign_up()
    first = ana.ok(_keyed(ana, "/conversations", {"title": "plan"}, "k-3"), 201)
    error = _error(_keyed(ana, "/conversations", {"title": "other"}, "k-3"), 409, "conflict")
    assert error["details"]["reason"] == "different_body"
    assert [c["id"] for c in ana.ok(ana.get("/conversations"))["conversations"]] == [first["id"]]


def test_a_key_whose_request_was_refused_may_carry_the_corrected_request(hub: HubClient):
    """A refused request did nothing: the person fixes it and sends it with the same key."""
    ana = hub.sign_up()
    agent_id = _agent(hub, ana)
    _error(
        _keyed(ana, "/tasks", {"title": 5, "targetAgentId": agent_id}, "k-4"),
        400,
        "invalid_argument",
    )
    _error(
        _keyed(ana, "/tasks", {"title": "t", "targetAgentId": "agent_nope"}, "k-4"),
        404,
        "not_found",
    )
    task = ana.ok(_keyed(ana, "/tasks", {"title": "t", "targetAgentId": agent_id}, "k-4"), 201)
    again = ana.ok(_keyed(ana, "/tasks", {"title": "t", "targetAgentId": agent_id}, "k-4"), 201)
    assert again["task"]["id"] == task["task"]["id"]
    assert len(ana.ok(ana.get("/tasks"))["tasks"]) == 1


def test_two_people_may_choose_the_same_key(hub: HubClient):
    ana, bo = hub.sign_up(), hub.sign_up(name="Bo")
    mine = ana.ok(_keyed(ana, "/conversations", {"title": "plan"}, "same"), 201)
    theirs = bo.ok(_keyed(bo, "/conversations", {"title": "plan"}, "same"), 201)
    assert mine["id"] != theirs["id"]
    assert len(bo.ok(bo.get("/conversations"))["conversations"]) == 1


# --- body limit -----------------------------------------------------------------------------


@pytest.fixture
def small(hub_database: str, tmp_path: Path) -> Iterator[TestClient]:
    settings = fast_settings(hub_database, tmp_path, max_body_bytes=SMALL_LIMIT)
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        yield client


def test_a_body_over_the_limit_to_pairing_redeem_is_refused_with_413(small: TestClient):
    big = {"code": "ABCD-EFGH", "name": "x" * (SMALL_LIMIT + 1)}
    response = small.post("/api/pairing/redeem", json=big)
    error = _error(response, 413, "invalid_argument")
    assert error["details"] == {"maxBytes": SMALL_LIMIT}
    # a body under the limit is read and answered by the route as before
    assert small.post("/api/pairing/redeem", json={"code": "ABCD-EFGH"}).status_code != 413


def test_the_default_body_limit_is_one_mebibyte(client: TestClient):
    response = client.post(
        "/api/pairing/redeem",
        content=b"x" * (1024 * 1024 + 1),
        headers={"Content-Type": "application/json"},
    )
    _error(response, 413, "invalid_argument")


async def test_a_chunked_body_is_refused_as_soon_as_it_goes_over_the_limit():
    """No Content-Length: the guard counts what arrives and stops reading at the limit."""
    chunk = b"x" * 1024
    pulled = 0
    sent: list[dict[str, Any]] = []
    reached_app = False

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < 1000}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal reached_app
        reached_app = True

    scope = {"type": "http", "method": "POST", "path": "/api/pairing/redeem", "headers": []}
    settings = Settings(database_url="sqlite://", max_body_bytes=8 * 1024)
    await RequestGuard(app, settings)(scope, receive, send)
    assert sent[0]["status"] == 413 and not reached_app
    assert pulled == 9  # 8 KiB taken, the ninth chunk went over: nothing more read
    assert json.loads(sent[1]["body"])["error"]["code"] == "invalid_argument"


# --- numbers ----------------------------------------------------------------------------------


def test_sequences_beyond_64_bits_in_after_or_before_are_invalid_arguments(hub: HubClient):
    ana = hub.sign_up()
    conversation = ana.ok(ana.post("/conversations", {"title": "c"}), 201)["id"]
    huge = str(2**63)
    for path, params in (
        ("/events", {"after": huge}),
        (f"/conversations/{conversation}/messages", {"after": huge}),
        (f"/conversations/{conversation}/messages", {"before": huge}),
        (f"/conversations/{conversation}/messages", {"before": "9" * 40}),
    ):
        _error(ana.get(path, params=params), 400, "invalid_argument")
    assert ana.get("/events", params={"after": str(2**53 - 1)}).status_code == 200


# --- operators' endpoints --------------------------------------------------------------------


def test_metrics_and_cluster_state_are_refused_to_a_caller_off_the_machine(client: TestClient):
    # TestClient's caller is "testclient", not a loopback address
    _error(client.get("/metrics"), 403, "forbidden")
    _error(client.get("/readyz/cluster"), 403, "forbidden")
    assert client.get("/healthz").status_code == 200


def test_metrics_and_cluster_state_answer_the_metrics_token(hub_database: str, tmp_path: Path):
    settings = fast_settings(hub_database, tmp_path, metrics_token="s3cret-token")
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        _error(client.get("/metrics"), 401, "unauthenticated")
        wrong = {"Authorization": "Bearer nope"}
        _error(client.get("/readyz/cluster", headers=wrong), 401, "unauthenticated")
        right = {"Authorization": "Bearer s3cret-token"}
        assert "lineup_events_committed" in client.get("/metrics", headers=right).text
        assert "leases" in client.get("/readyz/cluster", headers=right).json()


def test_metrics_answer_a_caller_on_the_loopback_address(hub_database: str, tmp_path: Path):
    settings = fast_settings(hub_database, tmp_path)
    app = create_app(settings)
    with TestClient(app, base_url="http://testserver", client=("127.0.0.1", 50000)) as client:
        assert client.get("/metrics").status_code == 200
        assert client.get("/readyz/cluster").status_code == 200


# --- security headers ---------------------------------------------------------------------------


def _confined(response: Any) -> None:
    headers = response.headers
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


def test_every_answer_carries_the_security_headers(client: TestClient):
    for response in (
        client.get("/healthz"),
        client.get("/api/workspaces/nope/tasks"),  # an error
        client.get("/some/client/route"),  # the web app
        client.post("/api/pairing/redeem", content=b"x" * (2 * 1024 * 1024)),  # 413
    ):
        _confined(response)
    assert client.get("/healthz").headers["content-security-policy"] == APP_POLICY
    assert "'unsafe-inline'" not in APP_POLICY


def test_the_api_pages_keep_working_under_their_own_policy(client: TestClient):
    response = client.get("/docs")
    assert response.status_code == 200
    _confined(response)
    assert "https://cdn.jsdelivr.net" in response.headers["content-security-policy"]


def test_the_built_web_app_needs_nothing_inline(tmp_path: Path):
    """The policy forbids inline scripts and styles: the shipped index.html has none."""
    index = Path(__file__).parents[3] / "web" / "index.html"
    html = index.read_text()
    assert "<script>" not in html and "<style" not in html and " style=" not in html


# --- cookies ------------------------------------------------------------------------------------


def _sign_up_cookies(settings: Settings) -> list[str]:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        response = client.post(
            "/api/auth/signup",
            json={"email": "c@example.test", "password": "correct horse battery"},
        )
        assert response.status_code == 201, response.text
        return response.headers.get_list("set-cookie")


def test_cookies_are_secure_when_the_public_url_is_https(hub_database: str, tmp_path: Path):
    https = fast_settings(hub_database, tmp_path, public_url="https://lineup.example.com")
    cookies = _sign_up_cookies(https)
    assert cookies and all("secure" in c.lower() for c in cookies)


def test_cookies_are_not_secure_on_a_plain_http_hub(hub_database: str, tmp_path: Path):
    cookies = _sign_up_cookies(fast_settings(hub_database, tmp_path))
    assert cookies and not any("secure" in c.lower() for c in cookies)


def test_settings_from_the_environment_follow_an_https_public_url(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("LINEUP_PUBLIC_URL", "https://lineup.example.com")
    monkeypatch.delenv("LINEUP_SECURE_COOKIES", raising=False)
    assert Settings.from_env().secure_cookies is True


def test_a_key_is_forgotten_after_a_day(settings: Settings):
    clock = FakeClock()
    with TestClient(create_app(settings, clock=clock)) as client:
        ana = HubClient(client).sign_up()
        ana.ok(_keyed(ana, "/conversations", {"title": "plan"}, "k-5"), 201)
        _error(_keyed(ana, "/conversations", {"title": "other"}, "k-5"), 409, "conflict")
        clock.advance(24 * 3600 + 1)

        def reusable() -> bool:
            response = _keyed(ana, "/conversations", {"title": "other"}, "k-5")
            return response.status_code != 409

        until(reusable, "the monitor to forget the day-old key")


def test_a_nul_in_a_websocket_address_is_refused_before_the_handshake(hub: HubClient):
    ana = hub.sign_up()
    ana._use()
    address = "/ws/client?workspaceId=ws%00x"
    with pytest.raises(WebSocketDisconnect) as refused, hub.client.websocket_connect(address):
        pass
    assert refused.value.code == 1008  # policy violation, before the socket opens
