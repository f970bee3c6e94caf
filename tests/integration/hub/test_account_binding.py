"""Account binding per person and system (ADR-0012), end to end on both databases: a person
binds their own account on a system with OAuth (against a real authorization server the
tests start) or a username and password given once; calls on their behalf carry it; it is
renewed, expires, is refused at once with "bind again", and can be bound again; other people's
and other systems' bindings are untouched; unbinding deletes the secret and keeps history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from lineup.hub import Settings, audit, create_app
from lineup.hub.governance import credentials
from lineup.store import Reader, schema
from lineup.store import governance as gov_store
from tests.integration.hub.conftest import fast_settings
from tests.support.bound_systems import Crm, Erp, crm, erp
from tests.support.clock import FakeClock
from tests.support.governance import World
from tests.support.oauth_server import AuthorizationServer
from tests.support.people import Person
from tests.support.providers import LedgerProvider
from tests.support.waiting import until

HUB_URL = "http://testserver"
EXPIRES_IN = 600


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[AuthorizationServer]:
    redirect = f"{HUB_URL}/api/bindings/oauth/callback"
    with AuthorizationServer(clock, redirect, expires_in=EXPIRES_IN) as running:
        yield running


@pytest.fixture
def systems(server: AuthorizationServer, tmp_path: Path) -> tuple[Crm, Erp]:
    return crm(server, tmp_path / "crm"), erp(tmp_path / "erp")


@pytest.fixture
def settings(hub_database: str, tmp_path: Path, systems: tuple[Crm, Erp]) -> Settings:
    return fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(LedgerProvider(), *systems),
        public_url=HUB_URL,
    )


@pytest.fixture
def world(settings: Settings, clock: FakeClock, server: AuthorizationServer) -> Iterator[World]:
    with TestClient(create_app(settings, clock=clock), base_url=HUB_URL) as client:
        w = World(client)
        assert client.portal is not None
        client.portal.call(
            credentials.put,
            w.state,
            "crm",
            "acme",
            {"clientId": server.client_id, "clientSecret": server.client_secret},
        )
        for prefix in ("crm.*", "erp.*"):
            w.ana.send(
                "/policy/rules",
                {"capability": prefix, "effect": "allow", "projectId": w.project},
                201,
            )
        try:
            yield w
        finally:
            w.close()


# --- helpers -----------------------------------------------------------------------------------


def bind_by_oauth(world: World, person: Person, server: AuthorizationServer, as_: str) -> str:
    """The person clicks Bind: the hub's authorization URL, the system's sign-in (the server
    signs ``as_`` in), and the browser back at the hub's callback. Where the hub sends it."""
    started = person.send("/bindings/crm/acme/oauth", {}, 200)
    server.signing_in_as = as_
    signed_in = httpx.get(started["authorizationUrl"], follow_redirects=False)
    assert signed_in.status_code == 302, signed_in.text
    back = urlsplit(signed_in.headers["location"])
    assert f"{back.scheme}://{back.netloc}" == HUB_URL
    person._use()
    answer = world.client.get(f"{back.path}?{back.query}", follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return str(answer.headers["location"])


def bind_by_password(person: Person, username: str, password: str) -> None:
    answer = person.post(
        "/bindings/erp/main/password", {"username": username, "password": password}
    )
    assert answer.status_code == 204, answer.text


def accounts(person: Person) -> dict[str, dict[str, Any]]:
    listed = person.read("/bindings")["accounts"]
    return {f"{a['providerId']}/{a['instance']}": a for a in listed}


def read_ok(world: World, capability: str, conversation: str | None = None) -> dict[str, Any]:
    world._n += 1
    invocation = f"b{world._n}"
    ack = world.invoke(capability, {}, invocation, conversation)
    assert ack["type"] == "ack", ack
    return world.final(invocation)


def refused(world: World, capability: str, conversation: str | None = None) -> dict[str, Any]:
    world._n += 1
    answer = world.invoke(capability, {}, f"b{world._n}", conversation)
    assert answer["type"] == "error", answer
    return answer


def invocations(world: World) -> int:
    return int(
        world.client.portal.call(  # type: ignore[union-attr]
            world.state.store.read,
            lambda r: gov_store.count_invocations(r.connection, world.ana.workspace_id),
        )
    )


def binding_rows(world: World) -> list[dict[str, Any]]:
    def read(r: Reader) -> list[dict[str, Any]]:
        rows = r.connection.execute(select(schema.identity_bindings))
        return [dict(row._mapping) for row in rows]

    return list(world.client.portal.call(world.state.store.read, read))  # type: ignore[union-attr]


def everything_stored(world: World) -> str:
    """Every row of every table, as text: to look for a secret anywhere in the database."""

    def read(r: Reader) -> str:
        parts = []
        for table in schema.metadata.sorted_tables:
            parts += [repr(dict(row._mapping)) for row in r.connection.execute(select(table))]
        return "\n".join(parts)

    return str(world.client.portal.call(world.state.store.read, read))  # type: ignore[union-attr]


def events_of(person: Person, kind: str) -> list[dict[str, Any]]:
    log = person.read("/events?after=0&limit=500")["events"]
    return [e for e in log if e["type"] == kind]


def audit_kinds(world: World) -> list[str]:
    def read(r: Reader) -> list[str]:
        from lineup.store import audit as stored

        return [e.kind for e in stored.entries(r.connection, 0, 1000)]

    return list(world.client.portal.call(world.state.store.read, read))  # type: ignore[union-attr]


# --- OAuth ------------------------------------------------------------------------------------


def test_an_unbound_system_refuses_the_call_at_once_and_says_to_bind(world: World) -> None:
    assert accounts(world.ana)["crm/acme"]["status"] == "not_bound"
    before = invocations(world)
    answer = refused(world, "crm.orders.read")
    assert answer["code"] == "unauthenticated"
    assert answer["details"] == {
        "reason": "not_bound",
        "provider": "crm",
        "instance": "acme",
        "nextStep": "bind",
    }
    assert "Settings → Accounts" in answer["message"]
    assert invocations(world) == before  # nothing recorded


def test_binding_by_oauth_stores_only_sealed_tokens_and_calls_carry_them(
    world: World, server: AuthorizationServer, systems: tuple[Crm, Erp]
) -> None:
    where = bind_by_oauth(world, world.ana, server, "ana@acme")
    assert where == "/settings?bound=crm"
    shown = accounts(world.ana)["crm/acme"]
    assert shown["status"] == "bound"
    assert shown["account"] is None  # the default exchange names no account
    assert shown["authKind"] == "oauth" and shown["providerName"] == "Acme CRM"
    assert shown["expiresAt"] is not None

    (row,) = binding_rows(world)
    assert row["status"] == "bound" and row["sealed"].startswith("lus1.")
    issued = server.tokens_of("ana@acme")
    assert len(issued) == 2  # an access token and a refresh token
    stored = everything_stored(world)
    for secret in [*issued, server.client_secret]:
        assert secret not in stored

    result = read_ok(world, "crm.orders.read")
    assert result["status"] == "succeeded", result
    assert result["output"] == {"account": "ana@acme"}
    assert systems[0].tokens_seen[-1] in issued

    (bound,) = events_of(world.ana, "binding.bound")
    assert bound["payload"]["userId"] == world.ana.user_id
    assert bound["payload"]["authKind"] == "oauth"
    assert "binding.bound" in audit_kinds(world)


def test_an_expired_access_token_is_renewed_before_the_call(
    world: World, server: AuthorizationServer, clock: FakeClock, systems: tuple[Crm, Erp]
) -> None:
    bind_by_oauth(world, world.ana, server, "ana@acme")
    assert read_ok(world, "crm.orders.read")["status"] == "succeeded"
    first = systems[0].tokens_seen[-1]
    clock.advance(EXPIRES_IN + 1)
    assert server.accepts(first) is None  # the system no longer takes it

    result = read_ok(world, "crm.orders.read")
    assert result["status"] == "succeeded", result
    renewed = systems[0].tokens_seen[-1]
    assert renewed != first and server.accepts(renewed) == "ana@acme"
    assert server.store.token_requests == ["authorization_code", "refresh_token"]
    assert accounts(world.ana)["crm/acme"]["status"] == "bound"


def test_a_refused_renewal_expires_the_binding_and_calls_are_refused_until_rebound(
    world: World, server: AuthorizationServer, clock: FakeClock
) -> None:
    bind_by_oauth(world, world.ana, server, "ana@acme")
    server.revoke_refresh_tokens("ana@acme")
    clock.advance(EXPIRES_IN + 1)
    before = invocations(world)

    answer = refused(world, "crm.orders.read")
    assert answer["code"] == "unauthenticated"
    assert answer["details"]["reason"] == "binding_expired"
    assert answer["details"]["nextStep"] == "bind"
    shown = accounts(world.ana)["crm/acme"]
    assert shown["status"] == "expired" and shown["expiredReason"] == "refresh_refused"
    (row,) = binding_rows(world)
    assert row["sealed"] is None  # an expired binding keeps no secret

    asked = len(server.store.token_requests)
    again = refused(world, "crm.orders.close")  # a write too, before any confirm card
    assert again["details"]["reason"] == "binding_expired"
    assert len(server.store.token_requests) == asked  # refused without asking anyone
    assert invocations(world) == before
    assert world.pending() == []
    (expired,) = events_of(world.ana, "binding.expired")
    assert expired["payload"]["reason"] == "refresh_refused"

    assert bind_by_oauth(world, world.ana, server, "ana@acme") == "/settings?bound=crm"
    assert accounts(world.ana)["crm/acme"]["status"] == "bound"
    assert read_ok(world, "crm.orders.read")["status"] == "succeeded"


def test_a_system_that_signs_the_person_out_expires_only_that_binding(
    world: World, server: AuthorizationServer, systems: tuple[Crm, Erp]
) -> None:
    bo = world.member("editor", "Bo")
    bos = bo.send(
        "/conversations",
        {"title": "Bo's", "agentIds": [world.agent_id], "projectId": world.project},
        201,
    )["id"]
    bind_by_oauth(world, world.ana, server, "ana@acme")
    bind_by_oauth(world, bo, server, "bo@acme")
    bind_by_password(world.ana, "ana", Erp.PASSWORDS["ana"])
    assert read_ok(world, "crm.orders.read", bos)["output"] == {"account": "bo@acme"}

    server.sign_out("ana@acme")  # the CRM ends Ana's sessions
    kicked = read_ok(world, "crm.orders.read")
    assert kicked["status"] == "failed"
    assert kicked["error"]["code"] == "unauthenticated"
    assert "bind it again" in kicked["error"]["message"]
    until(
        lambda: accounts(world.ana)["crm/acme"]["status"] == "expired",
        "Ana's CRM binding to expire",
    )
    assert accounts(world.ana)["crm/acme"]["expiredReason"] == "signed_out_by_system"
    assert refused(world, "crm.orders.read")["details"]["reason"] == "binding_expired"

    # Bo's binding on the same system, and Ana's on another, still work
    assert accounts(bo)["crm/acme"]["status"] == "bound"
    assert read_ok(world, "crm.orders.read", bos)["output"] == {"account": "bo@acme"}
    assert accounts(world.ana)["erp/main"]["status"] == "bound"
    assert read_ok(world, "erp.orders.read")["output"] == {"account": "ana"}
    # a person sees their own binding facts only
    assert all(e["payload"]["userId"] == bo.user_id for e in events_of(bo, "binding.bound"))


def test_unbinding_deletes_the_secret_and_keeps_the_history(
    world: World, server: AuthorizationServer
) -> None:
    bind_by_oauth(world, world.ana, server, "ana@acme")
    response = world.ana.client.delete(
        world.ana.url("/bindings/crm/acme"), headers=world.ana.headers()
    )
    assert response.status_code == 204, response.text
    assert binding_rows(world) == []
    assert accounts(world.ana)["crm/acme"]["status"] == "not_bound"
    assert refused(world, "crm.orders.read")["details"]["reason"] == "not_bound"
    assert [e["payload"]["by"] for e in events_of(world.ana, "binding.removed")] == [
        f"user:{world.ana.user_id}"
    ]
    assert events_of(world.ana, "binding.bound")
    kinds = audit_kinds(world)
    assert "binding.bound" in kinds and "binding.removed" in kinds
    verified = world.client.portal.call(audit.verify_chain, world.state.store)  # type: ignore[union-attr]
    assert verified.ok
    again = world.ana.client.delete(
        world.ana.url("/bindings/crm/acme"), headers=world.ana.headers()
    )
    assert again.status_code == 404


def test_a_callback_is_used_once_and_only_by_the_person_who_started_it(
    world: World, server: AuthorizationServer
) -> None:
    started = world.ana.send("/bindings/crm/acme/oauth", {}, 200)
    query = parse_qs(urlsplit(started["authorizationUrl"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"]
    signed_in = httpx.get(started["authorizationUrl"], follow_redirects=False)
    back = urlsplit(signed_in.headers["location"])
    bo = world.member("editor", "Bo")
    bo._use()  # Bo's browser opens Ana's callback
    stolen = world.client.get(f"{back.path}?{back.query}", follow_redirects=False)
    assert stolen.headers["location"] == "/settings?bindError=other_person&provider=crm"
    world.ana._use()  # the flow was spent by that attempt
    late = world.client.get(f"{back.path}?{back.query}", follow_redirects=False)
    assert late.headers["location"] == "/settings?bindError=flow_expired"
    assert accounts(world.ana)["crm/acme"]["status"] == "not_bound"
    assert accounts(bo)["crm/acme"]["status"] == "not_bound"


def test_a_sign_in_the_person_refuses_binds_nothing(
    world: World, server: AuthorizationServer
) -> None:
    server.refuse_next_sign_in = True
    assert bind_by_oauth(world, world.ana, server, "ana@acme") == (
        "/settings?bindError=denied&provider=crm"
    )
    assert accounts(world.ana)["crm/acme"]["status"] == "not_bound"


def test_oauth_needs_the_operators_client(world: World) -> None:
    world.client.portal.call(credentials.put, world.state, "crm", "acme", {})  # type: ignore[union-attr]
    answer = world.ana.post("/bindings/crm/acme/oauth", {})
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["details"]["reason"] == "not_configured"


# --- password-exchange and operator keys --------------------------------------------------------


def test_a_password_is_exchanged_once_and_kept_nowhere(
    world: World, systems: tuple[Crm, Erp], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    password = Erp.PASSWORDS["ana"]
    wrong = world.ana.post("/bindings/erp/main/password", {"username": "ana", "password": "nope"})
    assert wrong.status_code == 400, wrong.text
    assert wrong.json()["error"]["details"]["reason"] == "refused"
    assert accounts(world.ana)["erp/main"]["status"] == "not_bound"

    bind_by_password(world.ana, "ana", password)
    assert systems[1].exchanges == ["ana", "ana"]
    shown = accounts(world.ana)["erp/main"]
    assert shown["status"] == "bound" and shown["account"] == "ana@erp"
    for _ in range(2):
        assert read_ok(world, "erp.orders.read")["output"] == {"account": "ana"}
    assert systems[1].exchanges == ["ana", "ana"]  # calls do not sign in again

    stored = everything_stored(world)
    assert password not in stored
    assert next(iter(systems[1].sessions)) not in stored  # the session key is sealed
    assert password not in caplog.text
    assert password not in repr(world.ana.read("/events?after=0&limit=500"))


def test_a_password_binding_is_for_password_systems_only(world: World) -> None:
    answer = world.ana.post("/bindings/crm/acme/password", {"username": "a", "password": "b"})
    assert answer.status_code == 400
    assert answer.json()["error"]["details"]["authKind"] == "oauth"
    unknown = world.ana.post("/bindings/vault/x/password", {"username": "a", "password": "b"})
    assert unknown.status_code == 404


def test_a_system_with_the_operators_key_shows_as_bound_for_everyone(world: World) -> None:
    shown = accounts(world.ana)["ledger/books"]
    assert shown["authKind"] == "apikey" and shown["status"] == "bound"
    assert read_ok(world, "ledger.balance.read")["status"] == "succeeded"


def test_approving_a_write_whose_requester_is_no_longer_bound_voids_it(world: World) -> None:
    bind_by_password(world.ana, "ana", Erp.PASSWORDS["ana"])
    assert world.invoke("erp.orders.close", {}, "w-erp")["type"] == "ack"
    waiting = world.result("w-erp")
    assert waiting["status"] == "waiting_for_approval", waiting
    unbound = world.ana.client.delete(
        world.ana.url("/bindings/erp/main"), headers=world.ana.headers()
    )
    assert unbound.status_code == 204

    answer = world.decide(waiting["approvalId"], {"decision": "approve"})
    assert answer.status_code == 409, answer.text  # not 401: the approver stays signed in
    assert answer.json()["error"]["details"]["status"] == "voided"
    assert "bind it again" in answer.json()["error"]["message"]
    told = world.final("w-erp")
    assert told["status"] == "rejected" and told["error"]["code"] == "conflict"
    assert world.ana.read("/bindings")  # still signed in to the hub
