"""Accounts, sessions and CSRF, and the one error envelope."""

from starlette.testclient import TestClient

from tests.support.hub_client import HubClient


def _error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


def test_sign_up_creates_the_first_workspace_and_an_httponly_session(client: TestClient):
    response = client.post(
        "/api/auth/signup",
        json={"email": "Ana@Example.test", "password": "long enough pw", "displayName": "Ana"},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["user"]["email"] == "ana@example.test"
    assert body["workspaces"] == [
        {"id": body["workspaceId"], "name": "Ana's workspace", "role": "owner"}
    ]
    cookie = response.headers.get_list("set-cookie")
    session = next(c for c in cookie if c.startswith("lineup_session="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert client.get("/api/auth/me").json()["user"]["displayName"] == "Ana"


def test_a_second_account_with_the_same_email_is_a_conflict(hub: HubClient):
    hub.sign_up("bo@example.test")
    response = hub.client.post(
        "/api/auth/signup", json={"email": "bo@example.test", "password": "another password"}
    )
    _error(response, 409, "conflict")


def test_a_short_password_is_refused_with_a_clear_message(client: TestClient):
    error = _error(
        client.post("/api/auth/signup", json={"email": "c@example.test", "password": "short"}),
        400,
        "invalid_argument",
    )
    assert "8 characters" in error["message"]


def test_sign_in_with_a_wrong_password_is_unauthenticated(hub: HubClient):
    hub.sign_up("dee@example.test")
    hub.client.cookies.clear()
    response = hub.client.post(
        "/api/auth/signin", json={"email": "dee@example.test", "password": "wrong password!"}
    )
    _error(response, 401, "unauthenticated")
    response = hub.client.post(
        "/api/auth/signin", json={"email": "nobody@example.test", "password": "wrong password!"}
    )
    _error(response, 401, "unauthenticated")


def test_sign_in_then_sign_out_ends_the_session(hub: HubClient):
    hub.sign_up("eve@example.test")
    hub.client.cookies.clear()
    response = hub.client.post(
        "/api/auth/signin", json={"email": "eve@example.test", "password": "correct horse battery"}
    )
    assert response.status_code == 200, response.text
    csrf = response.json()["csrfToken"]
    assert hub.client.get("/api/auth/me").status_code == 200
    assert hub.client.post("/api/auth/signout", headers={"X-CSRF-Token": csrf}).status_code == 204
    session = response.cookies.get("lineup_session")
    hub.client.cookies.set("lineup_session", session)
    _error(hub.client.get("/api/auth/me"), 401, "unauthenticated")


def test_a_state_changing_request_without_the_csrf_token_is_forbidden(hub: HubClient):
    ana = hub.sign_up()
    ana._use()
    response = hub.client.post(ana.url("/conversations"), json={"title": "no token"})
    error = _error(response, 403, "forbidden")
    assert "CSRF" in error["message"]
    response = hub.client.post(
        ana.url("/conversations"), json={"title": "bad token"}, headers={"X-CSRF-Token": "nope"}
    )
    _error(response, 403, "forbidden")
    assert ana.post("/conversations", {"title": "with token"}).status_code == 201


def test_without_a_session_every_api_read_is_unauthenticated(client: TestClient):
    _error(client.get("/api/auth/me"), 401, "unauthenticated")
    _error(client.get("/api/workspaces/ws_x/tasks"), 401, "unauthenticated")


def test_health_and_readiness_and_openapi(client: TestClient):
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz").json()
    assert ready == {"status": "ok", "checks": {"database": "ok"}}
    assert "/api/workspaces/{workspace_id}/tasks" in client.get("/openapi.json").json()["paths"]


def test_every_error_uses_one_envelope(hub: HubClient):
    ana = hub.sign_up()
    ana._use()
    cases = [
        (hub.client.get("/api/nothing-here"), 404, "not_found"),
        (hub.client.put("/api/auth/me"), 400, "invalid_argument"),
        (ana.post("/tasks", {"title": 5}), 400, "invalid_argument"),
        (ana.get("/tasks/task_missing"), 404, "not_found"),
        (ana.get("/tasks", params={"status": "bogus"}), 400, "invalid_argument"),
        (hub.client.get("/api/workspaces/ws_other/tasks"), 403, "forbidden"),
    ]
    for response, status, code in cases:
        _error(response, status, code)
