"""Projects and people (seed 003 §1, seed 001 §3.2 and §6): invitations into a project with a
role, layered settings and who may set each level, the approval TTL they govern, and personal
developer tokens for scripts. On both databases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from lineup.hub import Settings, create_app
from lineup.protocol.times import datetime_to_ms
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.governance import World, put
from tests.support.people import PASSWORD, Person
from tests.support.providers import LedgerProvider

MINUTE_MS = 60_000


def error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    found: dict[str, Any] = response.json()["error"]
    assert found["code"] == code
    return found


def role_in(world: World, person: Person) -> str | None:
    members = world.ana.read(f"/projects/{world.project}")["members"]
    return next((m["role"] for m in members if m["userId"] == person.user_id), None)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(hub_database: str, tmp_path: Path) -> Settings:
    return fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(LedgerProvider(),),
        job_poll_interval=0.01,
    )


@pytest.fixture
def world(settings: Settings, clock: FakeClock) -> Iterator[World]:
    app = create_app(settings, clock=clock)
    with TestClient(app, base_url="http://testserver") as client:
        w = World(client)
        try:
            yield w
        finally:
            w.close()


# --- invitations into a project --------------------------------------------------------------


def test_a_project_invitation_makes_the_person_a_member_with_that_role(world: World) -> None:
    made = world.invite(world.ana, projectId=world.project, projectRole="editor")
    assert (made["projectId"], made["projectRole"], made["status"]) == (
        world.project,
        "editor",
        "open",
    )
    bo = world.join(made["code"])
    assert bo.workspace_id == world.ana.workspace_id
    assert role_in(world, bo) == "editor"
    members = {m["id"] for m in world.ana.read("/members")["members"]}
    assert bo.user_id in members
    listed = world.ana.read("/invitations")["invitations"]
    assert [(i["projectId"], i["projectRole"], i["status"]) for i in listed] == [
        (world.project, "editor", "used")
    ]


def test_a_workspace_member_accepts_an_invitation_into_a_project(world: World) -> None:
    plain = world.invite(world.ana)
    assert (plain["projectId"], plain["projectRole"]) == (None, None)
    bo = world.join(plain["code"])
    assert role_in(world, bo) is None
    code = world.invite(world.ana, projectId=world.project)["code"]  # viewer unless named
    bo._use()
    accepted = world.client.post(
        "/api/invitations/accept", json={"code": code}, headers=bo.headers()
    )
    assert accepted.status_code == 200, accepted.text
    assert role_in(world, bo) == "viewer"
    again = world.invite(world.ana, projectId=world.project, projectRole="owner")["code"]
    bo._use()
    refused = world.client.post(
        "/api/invitations/accept", json={"code": again}, headers=bo.headers()
    )
    error(refused, 409, "conflict")


def test_a_used_or_expired_project_invitation_is_refused(world: World, clock: FakeClock) -> None:
    used = world.invite(world.ana, projectId=world.project, projectRole="editor")["code"]
    world.join(used, "Bo")
    world.client.cookies.clear()
    second = world.client.post(
        "/api/auth/signup",
        json={"email": "cy@example.test", "password": PASSWORD, "invitationCode": used},
    )
    assert error(second, 400, "invalid_argument")["details"]["field"] == "invitationCode"
    expiring = world.invite(world.ana, projectId=world.project, projectRole="owner")["code"]
    clock.advance(7 * 24 * 3600 + 1)
    world.client.cookies.clear()
    late = world.client.post(
        "/api/auth/signup",
        json={"email": "dee@example.test", "password": PASSWORD, "invitationCode": expiring},
    )
    error(late, 400, "invalid_argument")
    assert world.ana.refresh().status_code == 200  # a week on, as the app does
    owners = [m for m in world.ana.read(f"/projects/{world.project}")["members"]]
    assert [m["userId"] for m in owners if m["role"] == "owner"] == [world.ana.user_id]


def test_project_owners_invite_into_their_project_and_no_one_else_does(world: World) -> None:
    cy = world.member("owner", "Cy")
    made = world.invite(cy, projectId=world.project, projectRole="viewer")
    assert made["projectId"] == world.project
    assert [i["id"] for i in cy.read("/invitations")["invitations"]] == [made["id"]]
    error(cy.post("/invitations", {}), 403, "forbidden")  # the workspace itself: owners only
    ed = world.member("editor", "Ed")
    error(ed.post("/invitations", {"projectId": world.project}), 403, "forbidden")
    error(ed.get("/invitations"), 403, "forbidden")
    error(world.ana.post("/invitations", {"projectId": "prj_nope"}), 404, "not_found")
    bad = world.ana.post("/invitations", {"projectId": world.project, "projectRole": "boss"})
    error(bad, 400, "invalid_argument")
    error(world.ana.post("/invitations", {"projectRole": "editor"}), 400, "invalid_argument")


def test_a_project_invitation_lapses_when_its_maker_is_no_longer_an_owner_there(
    world: World,
) -> None:
    cy = world.member("owner", "Cy")
    code = world.invite(cy, projectId=world.project, projectRole="editor")["code"]
    demoted = put(world.ana, f"/projects/{world.project}/members/{cy.user_id}", {"role": "viewer"})
    world.ana.ok(demoted)
    world.client.cookies.clear()
    late = world.client.post(
        "/api/auth/signup",
        json={"email": "eve@example.test", "password": PASSWORD, "invitationCode": code},
    )
    error(late, 400, "invalid_argument")


# --- layered settings ------------------------------------------------------------------------


def effective(person: Person, query: str = "") -> dict[str, tuple[Any, str]]:
    body = person.read(f"/settings{query}")
    return {s["key"]: (s["value"], s["level"]) for s in body["settings"]}


def test_settings_resolve_from_the_most_specific_level_of_a_conversation(world: World) -> None:
    ttl = "approvals.ttlMinutes"
    ws = world.ana.workspace_id
    assert effective(world.ana)[ttl] == (24 * 60, "system")
    world.ana.ok(put(world.ana, f"/settings/workspace/{ws}", {ttl: 120}))
    world.ana.ok(put(world.ana, f"/settings/project/{world.project}", {ttl: 60}))
    world.ana.ok(put(world.ana, f"/settings/user/{world.ana.user_id}", {ttl: 30}))
    assert effective(world.ana)[ttl] == (30, "user")
    world.ana.ok(put(world.ana, f"/settings/user/{world.ana.user_id}", {ttl: None}))
    assert effective(world.ana)[ttl] == (120, "workspace")
    assert effective(world.ana, f"?projectId={world.project}")[ttl] == (60, "project")
    world.ana.ok(put(world.ana, f"/settings/conversation/{world.conversation}", {ttl: 10}))
    body = world.ana.read(f"/settings?conversationId={world.conversation}")
    assert body["scopes"]["project"] == world.project
    assert body["values"]["conversation"] == {ttl: 10}
    assert body["values"]["project"] == {ttl: 60}
    assert effective(world.ana, f"?conversationId={world.conversation}")[ttl] == (
        10,
        "conversation",
    )
    assert effective(world.ana, f"?projectId={world.project}")[ttl] == (60, "project")


def test_who_may_set_each_level(world: World) -> None:
    ttl = "approvals.ttlMinutes"
    ws = world.ana.workspace_id
    ed = world.member("editor", "Ed")
    vi = world.member("viewer", "Vi")
    error(put(ed, f"/settings/workspace/{ws}", {ttl: 5}), 403, "forbidden")
    error(put(ed, f"/settings/project/{world.project}", {ttl: 5}), 403, "forbidden")
    error(put(ed, f"/settings/user/{world.ana.user_id}", {ttl: 5}), 403, "forbidden")
    ed.ok(put(ed, f"/settings/user/{ed.user_id}", {ttl: 5}))
    ed.ok(put(ed, f"/settings/conversation/{world.conversation}", {ttl: 5}))
    error(put(vi, f"/settings/conversation/{world.conversation}", {ttl: 5}), 403, "forbidden")
    personal = ed.send("/conversations", {"title": "Mine", "agentIds": [world.agent_id]}, 201)
    ed.ok(put(ed, f"/settings/conversation/{personal['id']}", {ttl: 7}))
    error(put(vi, f"/settings/conversation/{personal['id']}", {ttl: 7}), 403, "forbidden")
    assert effective(ed)[ttl] == (5, "user")
    assert effective(vi)[ttl] == (24 * 60, "system")
    error(put(world.ana, "/settings/galaxy/x", {ttl: 5}), 404, "not_found")
    error(put(world.ana, "/settings/project/prj_nope", {ttl: 5}), 404, "not_found")


def test_a_bad_value_is_refused_and_nothing_of_the_change_is_kept(world: World) -> None:
    ws = world.ana.workspace_id
    path = f"/settings/workspace/{ws}"
    refused = error(
        put(world.ana, path, {"approvals.standingMaxCalls": 3, "approvals.ttlMinutes": "soon"}),
        400,
        "invalid_argument",
    )
    assert refused["details"]["key"] == "approvals.ttlMinutes"
    error(put(world.ana, path, {"no.such": 1}), 400, "invalid_argument")
    where = error(put(world.ana, path, {"approvals.ttlMinutes": 0}), 400, "invalid_argument")
    assert where["details"]["key"] == "approvals.ttlMinutes"
    user = f"/settings/user/{world.ana.user_id}"
    error(put(world.ana, user, {"approvals.standingMaxCalls": 3}), 400, "invalid_argument")
    nowhere = {"conversations.defaultProjectId": "prj_nope"}
    error(put(world.ana, user, nowhere), 400, "invalid_argument")
    world.ana.ok(put(world.ana, user, {"conversations.defaultProjectId": world.project}))
    assert effective(world.ana)["conversations.defaultProjectId"] == (world.project, "user")
    assert world.ana.read("/settings")["values"]["workspace"] == {}
    assert effective(world.ana)["approvals.standingMaxCalls"] == (10_000, "system")


def test_the_approval_ttl_follows_the_project_and_conversation_settings(
    world: World, clock: FakeClock
) -> None:
    def expiry_minutes(approval: dict[str, Any]) -> float:
        ends = datetime_to_ms(datetime.fromisoformat(approval["expiresAt"]))
        return (ends - clock.now) / MINUTE_MS

    assert expiry_minutes(world.approval_of_a_write()) == 24 * 60
    world.ana.ok(put(world.ana, f"/settings/project/{world.project}", {"approvals.ttlMinutes": 5}))
    assert expiry_minutes(world.approval_of_a_write()) == 5
    path = f"/settings/conversation/{world.conversation}"
    world.ana.ok(put(world.ana, path, {"approvals.ttlMinutes": 9}))
    assert expiry_minutes(world.approval_of_a_write()) == 9


def test_a_standing_permission_keeps_within_the_project_limits(world: World) -> None:
    path = f"/settings/project/{world.project}"
    world.ana.ok(put(world.ana, path, {"approvals.standingMaxCalls": 3}))
    approval = world.approval_of_a_write()
    decision = {"decision": "approve", "standing": {"calls": 4}}
    refused = error(
        world.ana.post(f"/approvals/{approval['id']}/decision", decision), 400, "invalid_argument"
    )
    assert refused["details"]["key"] == "approvals.standingMaxCalls"
    decision["standing"] = {"calls": 3}
    world.ana.ok(world.ana.post(f"/approvals/{approval['id']}/decision", decision))


# --- developer tokens ------------------------------------------------------------------------


def make_token(person: Person, **body: Any) -> dict[str, Any]:
    person._use()
    made = person.client.post(
        "/api/tokens", json={"name": "script", **body}, headers=person.headers()
    )
    assert made.status_code == 201, made.text
    result: dict[str, Any] = made.json()
    assert result["token"].startswith("lut_")
    return result


def by_token(
    client: TestClient, token: str, method: str, path: str, body: Any = None
) -> httpx.Response:
    client.cookies.clear()
    return client.request(method, path, json=body, headers={"Authorization": f"Bearer {token}"})


def test_a_read_token_can_get_but_not_change_anything(world: World) -> None:
    token = make_token(world.ana)["token"]
    ws = world.ana.workspace_id
    got = by_token(world.client, token, "GET", f"/api/workspaces/{ws}/conversations")
    assert got.status_code == 200, got.text
    refused = by_token(
        world.client, token, "POST", f"/api/workspaces/{ws}/conversations", {"title": "x"}
    )
    assert error(refused, 403, "forbidden")["details"]["scope"] == "write"


def test_a_write_token_changes_things_without_a_csrf_header(world: World) -> None:
    token = make_token(world.ana, scopes=["write"])["token"]
    assert make_token(world.ana, scopes=["write"])["scopes"] == ["read", "write"]
    ws = world.ana.workspace_id
    made = by_token(
        world.client,
        token,
        "POST",
        f"/api/workspaces/{ws}/conversations",
        {"title": "From a script", "agentIds": [world.agent_id]},
    )
    assert made.status_code == 201, made.text
    world.ana._use()
    used = [t for t in world.client.get("/api/tokens").json()["tokens"] if t["lastUsedAt"]]
    assert len(used) == 1


def test_a_revoked_token_is_refused_at_once(world: World) -> None:
    made = make_token(world.ana)
    ws = world.ana.workspace_id
    path = f"/api/workspaces/{ws}/members"
    assert by_token(world.client, made["token"], "GET", path).status_code == 200
    world.ana._use()
    revoked = world.client.delete(f"/api/tokens/{made['id']}", headers=world.ana.headers())
    assert revoked.status_code == 204, revoked.text
    error(by_token(world.client, made["token"], "GET", path), 401, "unauthenticated")
    world.ana._use()
    statuses = [t["status"] for t in world.client.get("/api/tokens").json()["tokens"]]
    assert statuses == ["revoked"]


def test_an_expired_token_is_refused(world: World, clock: FakeClock) -> None:
    made = make_token(world.ana, expiresInDays=1)
    path = f"/api/workspaces/{world.ana.workspace_id}/members"
    assert by_token(world.client, made["token"], "GET", path).status_code == 200
    clock.advance(24 * 3600 + 1)
    error(by_token(world.client, made["token"], "GET", path), 401, "unauthenticated")


def test_a_token_reaches_only_its_person_s_workspaces_or_the_one_it_was_made_for(
    world: World,
) -> None:
    ana = world.ana
    ana._use()
    other = world.client.post("/api/workspaces", json={"name": "Ops"}, headers=ana.headers())
    assert other.status_code == 201, other.text
    ops = other.json()["id"]
    stranger = world.hub.sign_up("stranger@example.test", "Sam")
    everywhere = make_token(ana)["token"]
    only_ops = make_token(ana, workspaceId=ops)["token"]
    home = f"/api/workspaces/{ana.workspace_id}/members"
    assert by_token(world.client, everywhere, "GET", home).status_code == 200
    assert (
        by_token(world.client, everywhere, "GET", f"/api/workspaces/{ops}/members").status_code
        == 200
    )
    error(by_token(world.client, only_ops, "GET", home), 403, "forbidden")
    assert (
        by_token(world.client, only_ops, "GET", f"/api/workspaces/{ops}/members").status_code == 200
    )
    theirs = f"/api/workspaces/{stranger.workspace_id}/members"
    error(by_token(world.client, everywhere, "GET", theirs), 403, "forbidden")
    stranger._use()
    refused = world.client.post(
        "/api/tokens",
        json={"name": "x", "workspaceId": ana.workspace_id},
        headers=stranger.headers(),
    )
    error(refused, 403, "forbidden")


def test_a_token_never_manages_tokens_passwords_or_sessions(world: World) -> None:
    made = make_token(world.ana, scopes=["read", "write"])
    token = made["token"]
    for method, path, body in (
        ("POST", "/api/tokens", {"name": "more"}),
        ("GET", "/api/tokens", None),
        ("DELETE", f"/api/tokens/{made['id']}", None),
        ("POST", "/api/auth/password", {"currentPassword": PASSWORD, "newPassword": "x" * 20}),
        ("POST", "/api/auth/signout-others", None),
        ("GET", "/api/auth/me", None),
    ):
        refused = by_token(world.client, token, method, path, body)
        assert error(refused, 403, "forbidden")["details"]["header"] == "Authorization", path
    still = by_token(
        world.client, token, "GET", f"/api/workspaces/{world.ana.workspace_id}/members"
    )
    assert still.status_code == 200


def test_an_unknown_token_is_unauthenticated(world: World) -> None:
    path = f"/api/workspaces/{world.ana.workspace_id}/members"
    error(by_token(world.client, "lut_not-a-real-one", "GET", path), 401, "unauthenticated")
