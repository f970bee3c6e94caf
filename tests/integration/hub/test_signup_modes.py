"""Who may sign up (``LINEUP_SIGNUP``), invitations to a workspace, and what a new hub shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.hub.cli import create_user
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import Person

PASSWORD = "correct horse battery"


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code
    return error


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _hub(hub_database: str, tmp_path: Path, clock: FakeClock, signup: str) -> Iterator[HubClient]:
    settings = fast_settings(hub_database, tmp_path, signup=signup)
    with TestClient(create_app(settings, clock=clock), base_url="http://testserver") as client:
        yield HubClient(client)


@pytest.fixture
def invite_only(hub_database: str, tmp_path: Path, clock: FakeClock) -> Iterator[HubClient]:
    yield from _hub(hub_database, tmp_path, clock, "invite")


@pytest.fixture
def closed(hub_database: str, tmp_path: Path, clock: FakeClock) -> Iterator[HubClient]:
    yield from _hub(hub_database, tmp_path, clock, "closed")


def _sign_up(client: TestClient, email: str, code: str | None = None) -> Any:
    client.cookies.clear()
    body: dict[str, Any] = {"email": email, "password": PASSWORD, "displayName": email[:3]}
    if code is not None:
        body["invitationCode"] = code
    return client.post("/api/auth/signup", json=body)


def _invite(owner: Person) -> dict[str, Any]:
    result: dict[str, Any] = owner.ok(owner.post("/invitations"), 201)
    return result


def _owner_made_by_the_operator(hub: HubClient, settings_url: str, home: Path) -> Person:
    import asyncio

    settings = fast_settings(settings_url, home)
    asyncio.run(create_user(settings, "owner@example.test", PASSWORD, "Owner", None))
    response = hub.client.post(
        "/api/auth/signin", json={"email": "owner@example.test", "password": PASSWORD}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    person = Person(
        hub.client,
        "owner@example.test",
        body["csrfToken"],
        body["workspaces"][0]["id"],
        body["user"]["id"],
    )
    person.session = response.cookies["lineup_session"]
    person.refresh_token = response.cookies["lineup_refresh"]
    return person


def test_a_new_hub_says_it_has_no_accounts_so_the_app_opens_on_create_account(
    hub: HubClient,
) -> None:
    assert hub.client.get("/api/auth/options").json() == {"signup": "open", "hasAccounts": False}
    hub.sign_up()
    hub.client.cookies.clear()
    assert hub.client.get("/api/auth/options").json() == {"signup": "open", "hasAccounts": True}


def test_a_closed_hub_refuses_sign_up_but_takes_accounts_made_by_the_operator(
    closed: HubClient, hub_database: str, tmp_path: Path
) -> None:
    assert closed.client.get("/api/auth/options").json()["signup"] == "closed"
    error = _error(_sign_up(closed.client, "eve@example.test"), 403, "forbidden")
    assert "does not take sign-ups" in error["message"]
    owner = _owner_made_by_the_operator(closed, hub_database, tmp_path)
    assert owner.ok(owner.get("/members"))["members"][0]["email"] == "owner@example.test"


def test_an_invite_only_hub_needs_a_valid_invitation_which_joins_its_workspace(
    invite_only: HubClient, hub_database: str, tmp_path: Path
) -> None:
    client = invite_only.client
    assert client.get("/api/auth/options").json() == {"signup": "invite", "hasAccounts": False}
    error = _error(_sign_up(client, "bo@example.test"), 403, "forbidden")
    assert error["details"]["field"] == "invitationCode"
    bad = _error(
        _sign_up(client, "bo@example.test", "AAAA-BBBB-CCCC-DDDD"), 400, "invalid_argument"
    )
    assert bad["details"]["field"] == "invitationCode"

    owner = _owner_made_by_the_operator(invite_only, hub_database, tmp_path)
    invitation = _invite(owner)
    assert invitation["status"] == "open" and invitation["role"] == "member"
    joined = _sign_up(client, "bo@example.test", invitation["code"].lower())
    assert joined.status_code == 201, joined.text
    body = joined.json()
    assert body["workspaceId"] == owner.workspace_id
    assert body["workspaces"] == [
        {"id": owner.workspace_id, "name": "Owner's workspace", "role": "member"}
    ]
    members = owner.ok(owner.get("/members"))["members"]
    assert {(m["email"], m["role"]) for m in members} == {
        ("owner@example.test", "owner"),
        ("bo@example.test", "member"),
    }
    events = owner.ok(owner.get("/events", params={"after": 0}))["events"]
    joins = [e for e in events if e["type"] == "member.joined"]
    assert joins[-1]["payload"]["email"] == "bo@example.test"

    # single use
    again = _sign_up(client, "cy@example.test", invitation["code"])
    _error(again, 400, "invalid_argument")
    listed = owner.ok(owner.get("/invitations"))["invitations"]
    assert [i["status"] for i in listed] == ["used"]
    assert "code" not in listed[0]


def test_an_invitation_expires_after_a_week_and_can_be_revoked(
    invite_only: HubClient, hub_database: str, tmp_path: Path, clock: FakeClock
) -> None:
    owner = _owner_made_by_the_operator(invite_only, hub_database, tmp_path)
    expiring = _invite(owner)
    revoked = _invite(owner)
    assert (
        owner.client.delete(
            owner.url(f"/invitations/{revoked['id']}"), headers=owner.headers()
        ).status_code
        == 204
    )
    _error(
        _sign_up(invite_only.client, "dee@example.test", revoked["code"]), 400, "invalid_argument"
    )
    clock.advance(7 * 24 * 3600 + 1)
    _error(
        _sign_up(invite_only.client, "dee@example.test", expiring["code"]), 400, "invalid_argument"
    )
    assert owner.refresh().status_code == 200  # a week on, as the app does: a new access token
    statuses = [i["status"] for i in owner.ok(owner.get("/invitations"))["invitations"]]
    assert statuses == ["expired", "used"]


def test_only_an_owner_manages_invitations(hub: HubClient) -> None:
    owner = hub.sign_up("owner@example.test")
    code = _invite(owner)["code"]
    response = _sign_up(hub.client, "bo@example.test", code)  # open hub: the code joins
    assert response.status_code == 201, response.text
    member = Person(
        hub.client,
        "bo@example.test",
        response.json()["csrfToken"],
        owner.workspace_id,
        response.json()["user"]["id"],
    )
    member.session = response.cookies["lineup_session"]
    _error(member.post("/invitations"), 403, "forbidden")
    _error(member.get("/invitations"), 403, "forbidden")


def test_a_signed_in_person_accepts_an_invitation_to_another_workspace(hub: HubClient) -> None:
    owner = hub.sign_up("owner@example.test")
    code = _invite(owner)["code"]
    other = hub.sign_up("other@example.test")
    other._use()
    accepted = hub.client.post(
        "/api/invitations/accept", json={"code": code}, headers=other.headers()
    )
    assert accepted.status_code == 200, accepted.text
    assert accepted.json() == {"workspaceId": owner.workspace_id}
    workspaces = hub.client.get("/api/workspaces").json()["workspaces"]
    assert {w["id"] for w in workspaces} == {owner.workspace_id, other.workspace_id}
