"""Passwords: hashed without stalling the hub, guessed only slowly, chosen not weak, changed
with the current one; and a person's other sessions ended on request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.hub import Settings, create_app, security
from lineup.hub.security import token_hash
from lineup.store import auth as store_auth
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.waiting import until

PASSWORD = "correct horse battery"


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code
    return error


def _from(client: TestClient, address: str) -> None:
    """Make the next requests come from ``address`` (the test transport's client host)."""
    client._transport.client = (address, 50000)  # type: ignore[attr-defined]


def _sign_in(client: TestClient, email: str, password: str) -> Any:
    client.cookies.clear()
    return client.post("/api/auth/signin", json={"email": email, "password": password})


class WatchedHasher:
    """The real argon2 hasher, noting how many agent heartbeats were answered while each
    password check ran."""

    def __init__(self, real: Any, answered: list[int]) -> None:
        self._real = real
        self._answered = answered
        self._lock = threading.Lock()
        self.answered_during: list[int] = []

    def hash(self, password: str) -> str:
        return str(self._real.hash(password))

    def verify(self, password_hash: str, password: str) -> bool:
        before = self._answered[0]
        try:
            return bool(self._real.verify(password_hash, password))
        finally:
            with self._lock:
                self.answered_during.append(self._answered[0] - before)


def test_agents_heartbeats_are_answered_while_wrong_sign_ins_are_being_hashed(
    hub: HubClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        answered = [0]
        watched = WatchedHasher(security._hasher, answered)
        monkeypatch.setattr(security, "_hasher", watched)
        burst_done = threading.Event()

        def burst() -> list[int]:
            with ThreadPoolExecutor(4) as pool:
                emails = [f"guess{i}@example.test" for i in range(12)]
                statuses = [r.status_code for r in pool.map(lambda e: _sign_in_raw(hub, e), emails)]
            burst_done.set()
            return statuses

        with ThreadPoolExecutor(1) as runner:
            statuses = runner.submit(burst)
            while not burst_done.is_set():
                assert agent.call("agent.heartbeat", {})["type"] == "ack"
                answered[0] += 1
            assert statuses.result() == [401] * 12

    # One heartbeat is in flight at a time, so a hash that held the event loop could see at
    # most the one answer already on its way; off the loop, a hash sees several.
    assert len(watched.answered_during) == 12
    assert max(watched.answered_during) >= 3, watched.answered_during


def _sign_in_raw(hub: HubClient, email: str) -> Any:
    return hub.client.post("/api/auth/signin", json={"email": email, "password": "not it at all"})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def clocked(hub_database: str, tmp_path: Path, clock: FakeClock) -> Iterator[HubClient]:
    settings: Settings = fast_settings(hub_database, tmp_path)
    with TestClient(create_app(settings, clock=clock), base_url="http://testserver") as client:
        yield HubClient(client)


def test_wrong_passwords_for_one_account_from_many_addresses_are_slowed_down(
    clocked: HubClient, clock: FakeClock
) -> None:
    clocked.sign_up("ana@example.test")
    client = clocked.client
    statuses = []
    limited = None
    for address in range(6):
        _from(client, f"10.0.0.{address}")
        for _ in range(10):
            response = _sign_in(client, "ana@example.test", "a wrong guess")
            statuses.append(response.status_code)
            if response.status_code == 429:
                limited = limited or response
    assert statuses[:5] == [401] * 5
    assert statuses.count(429) >= 50
    assert limited is not None
    error = _error(limited, 429, "rate_limited")
    assert error["details"]["retryAfterMs"] >= 1000
    assert int(limited.headers["Retry-After"]) >= 1
    # even the right password waits its turn; after the wait it works
    _error(_sign_in(client, "ana@example.test", PASSWORD), 429, "rate_limited")
    clock.advance(error["details"]["retryAfterMs"] / 1000)
    assert _sign_in(client, "ana@example.test", PASSWORD).status_code == 200
    # and a success clears the count: the next mistake is an ordinary one
    assert _sign_in(client, "ana@example.test", "a wrong guess").status_code == 401


def test_the_wait_looks_the_same_whether_or_not_the_account_exists(clocked: HubClient) -> None:
    clocked.sign_up("ana@example.test")
    outcomes = {}
    for email in ("ana@example.test", "nobody@example.test"):
        statuses = [_sign_in(clocked.client, email, "a wrong guess") for _ in range(7)]
        outcomes[email] = [(r.status_code, r.json()["error"]["message"]) for r in statuses]
    assert outcomes["ana@example.test"] == outcomes["nobody@example.test"]
    assert outcomes["nobody@example.test"][-1][0] == 429


@pytest.mark.parametrize("password", ["password", " " * 8, "12345678"])
def test_a_common_or_trivial_password_is_refused_at_sign_up_with_advice(
    client: TestClient, password: str
) -> None:
    response = client.post(
        "/api/auth/signup", json={"email": "cy@example.test", "password": password}
    )
    error = _error(response, 400, "invalid_argument")
    assert error["message"].startswith("That password is too easy to guess.")
    assert error["details"]["field"] == "password"


def _second_session(hub: HubClient, email: str) -> dict[str, str]:
    response = _sign_in(hub.client, email, PASSWORD)
    assert response.status_code == 200, response.text
    return {
        "lineup_session": response.cookies["lineup_session"],
        "csrf": response.json()["csrfToken"],
    }


def _me_with(hub: HubClient, session: str) -> int:
    hub.client.cookies.clear()
    hub.client.cookies.set("lineup_session", session)
    return int(hub.client.get("/api/auth/me").status_code)


def test_changing_the_password_needs_the_current_one_and_ends_the_other_sessions(
    hub: HubClient,
) -> None:
    ana = hub.sign_up("ana@example.test")
    phone = _second_session(hub, "ana@example.test")
    ana._use()
    wrong = hub.client.post(
        "/api/auth/password",
        json={"currentPassword": "not my password", "newPassword": "purple tractor umbrella"},
        headers=ana.headers(),
    )
    assert _error(wrong, 400, "invalid_argument")["details"]["field"] == "currentPassword"
    weak = hub.client.post(
        "/api/auth/password",
        json={"currentPassword": PASSWORD, "newPassword": "password1"},
        headers=ana.headers(),
    )
    _error(weak, 400, "invalid_argument")
    assert _me_with(hub, phone["lineup_session"]) == 200

    ana._use()
    changed = hub.client.post(
        "/api/auth/password",
        json={"currentPassword": PASSWORD, "newPassword": "purple tractor umbrella"},
        headers=ana.headers(),
    )
    assert changed.status_code == 200, changed.text
    assert changed.json() == {"signedOutSessions": 1}
    assert _me_with(hub, ana.session) == 200
    assert _me_with(hub, phone["lineup_session"]) == 401
    assert _sign_in(hub.client, "ana@example.test", PASSWORD).status_code == 401
    assert _sign_in(hub.client, "ana@example.test", "purple tractor umbrella").status_code == 200


def test_signing_out_other_sessions_keeps_this_one(hub: HubClient) -> None:
    ana = hub.sign_up("ana@example.test")
    phone = _second_session(hub, "ana@example.test")
    laptop = _second_session(hub, "ana@example.test")
    ana._use()
    response = hub.client.post("/api/auth/signout-others", headers=ana.headers())
    assert response.status_code == 200, response.text
    assert response.json() == {"signedOutSessions": 2}
    assert _me_with(hub, ana.session) == 200
    assert _me_with(hub, phone["lineup_session"]) == 401
    assert _me_with(hub, laptop["lineup_session"]) == 401
    ana._use()
    _error(hub.client.post("/api/auth/signout-others"), 403, "forbidden")  # CSRF still applies


@contextmanager
def _follow(hub: HubClient, person: Any, session: str) -> Iterator[Any]:
    """A person's live socket opened with ``session``, subscribed and caught up."""
    hub.client.cookies.clear()
    hub.client.cookies.set("lineup_session", session)
    with hub.client.websocket_connect(f"/ws/client?workspaceId={person.workspace_id}") as ws:
        yield _subscribed(ws, person)


def _subscribed(ws: Any, person: Any) -> Any:
    ws.send_text(
        json.dumps(
            {
                "id": "sub_1",
                "type": "client.subscribe",
                "version": "0.1",
                "occurredAt": "2026-07-25T12:00:00Z",
                "workspaceId": person.workspace_id,
                "payload": {"lastSequence": 0},
            }
        )
    )
    while json.loads(ws.receive_text())["type"] != "client.caught_up":
        pass
    return ws


def _ended(ws: Any) -> int:
    """Read until the hub ends the socket: its error frame, then the close code."""
    frames = []
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            frames.append(json.loads(ws.receive_text()))
    assert frames[-1]["code"] == "unauthenticated", frames
    return int(closed.value.code)


def test_signing_out_the_other_sessions_closes_their_live_updates(hub: HubClient) -> None:
    ana = hub.sign_up("ana@example.test")
    phone = _second_session(hub, "ana@example.test")
    with (
        _follow(hub, ana, phone["lineup_session"]) as ws,
        _follow(hub, ana, ana.session) as my_ws,
    ):
        ana._use()
        ended = hub.client.post("/api/auth/signout-others", headers=ana.headers())
        assert ended.status_code == 200, ended.text
        live = hub.client.app.state.hub.live_sessions  # type: ignore[attr-defined]
        until(lambda: live.count(ana.user_id) == 1, "the other session's socket closed")
        assert _ended(ws) == 4401
        # this session's own socket goes on: it still gets what happens next
        ana._use()
        ana.ok(ana.post("/conversations", {"title": "Still here", "agentIds": []}), 201)
        assert json.loads(my_ws.receive_text())["type"] == "conversation.created"


def test_a_live_socket_whose_session_ended_elsewhere_closes_at_its_next_check(
    hub_database: str, tmp_path: Path
) -> None:
    settings = fast_settings(hub_database, tmp_path, session_check_interval=0.05)
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        hub = HubClient(client)
        ana = hub.sign_up("ana@example.test")
        with _follow(hub, ana, ana.session) as ws:
            # another node of a cluster ends the session: only the database knows
            state = client.app.state.hub  # type: ignore[attr-defined]
            found = client.portal.call(  # type: ignore[union-attr]
                state.store.read,
                lambda r: store_auth.get_session_token(r.connection, token_hash(ana.session)),
            )
            assert found is not None
            client.portal.call(  # type: ignore[union-attr]
                state.store.write,
                lambda tx: store_auth.revoke_session(tx.connection, found[1].id, 1, "ended"),
            )
            until(lambda: state.live_sessions.count(ana.user_id) == 0, "the socket closed")
            assert _ended(ws) == 4401
