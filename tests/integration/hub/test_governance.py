"""Governed actions end to end in the hub (seed 003 §1, §5): an agent's capability calls go
through one path — schema, policy, confirm card, a decision bound to what was shown, a
one-time grant, an execution recorded before its provider is called — and no retry applies
anything twice. On both databases, with a ledger provider that counts what it applied."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from lineup.hub import Settings, audit, create_app
from lineup.hub.state import HubState
from lineup.protocol.errors import ErrorCode
from lineup.store import Reader, schema
from lineup.store import governance as gov_store
from lineup.store.governance import ExecutionRecord
from lineup.store.schema import executions
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.governance import World, put
from tests.support.monitor import TickedMonitor
from tests.support.providers import API_KEY, LedgerProvider
from tests.support.waiting import until


@pytest.fixture
def ledger() -> LedgerProvider:
    return LedgerProvider()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(hub_database: str, tmp_path: Path, ledger: LedgerProvider) -> Settings:
    return fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(ledger,),
        job_poll_interval=0.01,
    )


@pytest.fixture
def world(settings: Settings, ledger: LedgerProvider) -> Iterator[World]:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        w = World(client, ledger)
        try:
            yield w
        finally:
            w.close()


def approve(world: World, invocation: str, **body: Any) -> dict[str, Any]:
    waiting = world.result(invocation)
    assert waiting["status"] == "waiting_for_approval"
    answer = world.decide(waiting["approvalId"], {"decision": "approve", **body})
    return dict(world.ana.ok(answer))


# --- reads ---------------------------------------------------------------------------------


def test_a_read_runs_at_once_and_its_result_reaches_the_agent(world: World) -> None:
    world.ledger.entries.append({"amount": 7, "key": "seed"})
    ack = world.invoke("ledger.balance.read", {}, "r1")
    assert ack["type"] == "ack"
    result = world.final("r1")
    assert result["status"] == "succeeded"
    assert result["output"] == {"balance": 7, "version": "v1"}
    runs = world.ana.read(f"/executions?conversationId={world.conversation}")["executions"]
    assert [r["status"] for r in runs] == ["succeeded"]


def test_a_read_is_allowed_in_a_personal_conversation_but_a_write_is_not(world: World) -> None:
    personal = world.ana.send(
        "/conversations", {"title": "Just me", "agentIds": [world.agent_id]}, 201
    )["id"]
    assert world.invoke("ledger.balance.read", {}, "p1", conversation=personal)["type"] == "ack"
    assert world.final("p1")["status"] == "succeeded"
    refused = world.invoke("ledger.entry.post", {"amount": 5}, "p2", conversation=personal)
    assert refused["type"] == "error"
    assert refused["code"] == "forbidden"
    assert refused["details"]["reason"] == "personal_write"
    assert world.ledger.entries == []


def test_params_outside_the_input_schema_are_refused_before_anything_runs(world: World) -> None:
    refused = world.invoke("ledger.entry.post", {"amount": "lots"})
    assert refused["code"] == "invalid_argument"
    assert refused["details"]["problems"][0]["path"] == "/amount"
    unknown = world.invoke("ledger.vault.open", {})
    assert unknown["code"] == "not_found"
    assert world.pending() == []


# --- writes: approve, reject, expire, hand over ------------------------------------------------


def test_an_approved_write_runs_once_and_says_what_happened(world: World) -> None:
    assert world.invoke("ledger.entry.post", {"amount": 40, "memo": "rent"}, "w1")["type"] == "ack"
    waiting = world.result("w1")
    assert waiting["status"] == "waiting_for_approval"
    card = world.pending()[0]
    assert card["summary"] == "Post 40 to the books"
    assert card["impact"] == "The balance goes from 0 to 40."
    assert card["resourceVersion"] == "v0"
    assert card["paramsDigest"].startswith("sha256:")
    assert card["canDecide"] is True
    assert world.ledger.entries == []  # nothing before the decision

    decided = world.ana.ok(world.decide(card["id"], {"decision": "approve"}))
    assert decided["status"] == "approved" and decided["decidedBy"] == f"user:{world.ana.user_id}"
    result = world.final("w1")
    assert result["status"] == "succeeded"
    assert result["output"] == {"balance": 40, "version": "v1"}
    assert result["receipt"]["entry"] == 1
    assert list(world.ledger.applied.values()) == [1]
    record = world.ana.read(f"/executions/{result['executionId']}")
    assert record["execution"]["status"] == "succeeded"
    assert record["invocation"]["params"] == {"amount": 40, "memo": "rent"}
    assert record["approval"]["id"] == card["id"]
    kinds = [e["kind"] for e in record["audit"]]
    assert kinds == [
        "capability.invoked",
        "approval.requested",
        "approval.decided",
        "grant.issued",
        "execution.started",
        "execution.finished",
    ]
    chain = record["audit"]
    assert all(
        b["prevHash"] == a["hash"] for a, b in itertools.pairwise(chain) if b["seq"] == a["seq"] + 1
    )
    assert world.client.portal is not None
    verified = world.client.portal.call(audit.verify_chain, world.state.store)
    assert verified.ok, verified.message


def test_a_rejected_write_never_runs_and_the_agent_hears_why(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 999}, "w1")
    approval = world.result("w1")["approvalId"]
    rejected = world.ana.ok(
        world.decide(approval, {"decision": "reject", "reason": "Too much this month"})
    )
    assert rejected["status"] == "rejected" and rejected["reason"] == "Too much this month"
    result = world.final("w1")
    assert result["status"] == "rejected"
    assert result["error"]["code"] == "forbidden"
    assert "Too much this month" in result["error"]["message"]
    assert world.ledger.calls == 0
    again = world.decide(approval, {"decision": "approve"})
    assert again.status_code == 409
    assert again.json()["error"]["details"]["status"] == "rejected"
    same = world.decide(approval, {"decision": "reject", "reason": "Too much this month"})
    assert same.status_code == 200  # the same decision again changes nothing


def test_an_undecided_approval_expires_and_cannot_be_approved_after(
    hub_database: str, tmp_path: Path, clock: FakeClock
) -> None:
    ledger = LedgerProvider()
    settings = fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(ledger,),
        approval_ttl=60.0,
        monitor_interval=3600.0,
        heartbeat_interval=3600.0,  # the agent stays online across the fake minutes
    )
    with TestClient(create_app(settings, clock=clock), base_url="http://testserver") as client:
        world = World(client, ledger)
        try:
            monitor = TickedMonitor(client, clock)
            world.invoke("ledger.entry.post", {"amount": 1}, "w1")
            approval = world.result("w1")["approvalId"]
            monitor.tick(61)
            result = world.final("w1")
            assert result["status"] == "rejected" and result["error"]["code"] == "unavailable"
            late = world.decide(approval, {"decision": "approve"})
            assert late.status_code == 409
            assert late.json()["error"]["details"]["status"] == "expired"
            assert ledger.calls == 0
        finally:
            world.close()


def test_a_viewer_can_see_a_card_but_cannot_decide_it(world: World) -> None:
    viewer = world.member("viewer", "Vi")
    world.invoke("ledger.entry.post", {"amount": 3}, "w1")
    approval = world.result("w1")["approvalId"]
    seen = viewer.read(f"/approvals/{approval}")
    assert seen["canDecide"] is False
    refused = world.decide(approval, {"decision": "approve"}, viewer)
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["reason"] == "role"
    assert world.pending(viewer) == []


def test_handing_an_approval_over_puts_it_in_the_other_persons_waiting_list(world: World) -> None:
    editor = world.member("editor", "Ed")
    viewer = world.member("viewer", "Vi")
    world.invoke("ledger.entry.post", {"amount": 3}, "w1")
    approval = world.result("w1")["approvalId"]
    to_viewer = world.ana.post(f"/approvals/{approval}/handover", {"userId": viewer.user_id})
    assert to_viewer.status_code == 400
    handed = world.ana.send(f"/approvals/{approval}/handover", {"userId": editor.user_id})
    assert handed["assignee"] == editor.user_id
    assert [a["id"] for a in world.pending(editor)] == [approval]
    assert world.pending(world.ana) == []  # no longer waiting for Ana
    assert world.ana.ok(world.decide(approval, {"decision": "approve"}, editor))["status"] == (
        "approved"
    )
    assert world.final("w1")["status"] == "succeeded"
    raised = world.ana.read("/approvals?view=raised")["approvals"]
    assert [a["id"] for a in raised] == [approval]
    done = world.ana.read("/approvals?view=done")["approvals"]
    assert done[0]["decidedByName"] == "Ed"


# --- what voids an approval ------------------------------------------------------------------


def test_a_changed_resource_voids_the_approval_instead_of_applying_to_something_unseen(
    world: World,
) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approval = world.result("w1")["approvalId"]
    world.ledger.entries.append({"amount": 5, "key": "someone else"})  # v0 → v1 meanwhile
    answer = world.decide(approval, {"decision": "approve"})
    assert answer.status_code == 409
    details = answer.json()["error"]["details"]
    assert details["status"] == "voided" and "version v0, now v1" in details["reason"]
    result = world.final("w1")
    assert result["status"] == "rejected" and result["error"]["code"] == "conflict"
    assert world.ledger.calls == 0
    assert world.ana.read(f"/approvals/{approval}")["status"] == "voided"


def test_different_params_need_their_own_approval(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    first = world.result("w1")["approvalId"]
    world.ana.ok(world.decide(first, {"decision": "approve"}))
    assert world.final("w1")["status"] == "succeeded"
    world.invoke("ledger.entry.post", {"amount": 10000}, "w2")
    second = world.result("w2")
    assert second["status"] == "waiting_for_approval" and second["approvalId"] != first
    reused = world.invoke("ledger.entry.post", {"amount": 11}, "w1")
    assert reused["type"] == "error" and reused["code"] == "conflict"
    assert world.ledger.balance == 10


def test_a_disabled_capability_refuses_new_calls_at_once_and_voids_its_pending_cards(
    world: World,
) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approval = world.result("w1")["approvalId"]
    switched = put(
        world.ana, "/capabilities/ledger.entry.post/state", {"enabled": False, "reason": "closed"}
    )
    assert switched.status_code == 204
    refused = world.invoke("ledger.entry.post", {"amount": 1}, "w2")
    assert refused["code"] == "forbidden"
    assert refused["details"]["reason"] == "disabled"
    assert world.decide(approval, {"decision": "approve"}).status_code == 409
    assert world.final("w1")["error"]["code"] == "conflict"
    assert world.ledger.calls == 0


# --- policy --------------------------------------------------------------------------------


def test_policy_decides_what_an_agent_sees_and_may_call(world: World) -> None:
    listing = world.agent.call("capability.list", {}, conversationId=world.conversation)
    assert listing["type"] == "ack"
    frame = world.agent.next_of("capability.list")
    ids = {c["id"] for c in frame["payload"]["capabilities"]}
    assert ids == {
        "ledger.balance.read",
        "ledger.entry.post",
        "ledger.note.add",
        "ledger.batch.submit",
    }
    world.ana.send(
        "/policy/rules",
        {"capability": "ledger.note.add", "effect": "deny", "projectId": world.project},
        201,
    )
    world.agent.call("capability.list", {}, conversationId=world.conversation)
    after = {c["id"] for c in world.agent.next_of("capability.list")["payload"]["capabilities"]}
    assert "ledger.note.add" not in after
    refused = world.invoke("ledger.note.add", {"amount": 1})
    assert refused["code"] == "forbidden"
    assert refused["details"]["reason"] == "rule"


def test_a_write_without_a_rule_that_allows_it_is_refused(world: World) -> None:
    rules = world.ana.read("/policy")["rules"]
    for rule in rules:
        world.ana._use()
        deleted = world.ana.client.delete(
            world.ana.url(f"/policy/rules/{rule['id']}"), headers=world.ana.headers()
        )
        assert deleted.status_code == 204
    refused = world.invoke("ledger.entry.post", {"amount": 1})
    assert refused["details"]["reason"] == "default_write"
    assert world.invoke("ledger.balance.read", {})["type"] == "ack"


# --- standing permissions --------------------------------------------------------------------


def test_a_standing_permission_is_used_within_its_bounds_and_ends_at_its_call_limit(
    world: World,
) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(world, "w1", standing={"calls": 2, "bounds": {"amount": {"max": 100}}})
    assert world.final("w1")["status"] == "succeeded"
    world.invoke("ledger.entry.post", {"amount": 50}, "w2")
    assert world.final("w2")["status"] == "succeeded"  # no card: within bounds
    world.invoke("ledger.entry.post", {"amount": 500}, "w3")
    assert world.result("w3")["status"] == "waiting_for_approval"  # outside the bounds
    world.invoke("ledger.entry.post", {"amount": 60}, "w4")
    assert world.final("w4")["status"] == "succeeded"
    world.invoke("ledger.entry.post", {"amount": 70}, "w5")
    assert world.result("w5")["status"] == "waiting_for_approval"  # two calls used
    permission = world.ana.read("/policy")["permissions"][0]
    assert permission["callsUsed"] == 2 and permission["status"] == "used_up"
    assert world.ledger.balance == 120


def test_a_revoked_standing_permission_stops_at_once(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approval = approve(world, "w1", standing={"minutes": 30})
    world.final("w1")
    world.ana.send(f"/permissions/{approval['permissionId']}/revoke", {"reason": "enough"})
    world.invoke("ledger.entry.post", {"amount": 1}, "w2")
    assert world.result("w2")["status"] == "waiting_for_approval"


def test_a_standing_permission_ends_at_its_time(
    hub_database: str, tmp_path: Path, clock: FakeClock
) -> None:
    ledger = LedgerProvider()
    settings = fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(ledger,),
        heartbeat_interval=3600.0,
    )
    with TestClient(create_app(settings, clock=clock), base_url="http://testserver") as client:
        world = World(client, ledger)
        try:
            world.invoke("ledger.entry.post", {"amount": 10}, "w1")
            approve(world, "w1", standing={"minutes": 5})
            world.final("w1")
            world.invoke("ledger.entry.post", {"amount": 1}, "w2")
            assert world.final("w2")["status"] == "succeeded"
            clock.advance(5 * 60)
            world.invoke("ledger.entry.post", {"amount": 1}, "w3")
            assert world.result("w3")["status"] == "waiting_for_approval"
        finally:
            world.close()


def test_bounds_that_cannot_be_checked_are_refused(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approval = world.result("w1")["approvalId"]
    bad = world.decide(
        approval,
        {"decision": "approve", "standing": {"calls": 3, "bounds": {"amount": {"max": "x"}}}},
    )
    assert bad.status_code == 400
    assert world.ana.read(f"/approvals/{approval}")["status"] == "pending"


# --- retries never apply twice -----------------------------------------------------------------


def test_a_resent_invoke_is_a_duplicate_and_runs_nothing_again(world: World) -> None:
    first = world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(world, "w1")
    assert world.final("w1")["status"] == "succeeded"
    again = world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    assert again["type"] == "ack" and again.get("duplicate") is True
    assert again["sequence"] == first["sequence"]
    same_envelope = world.agent.call(
        "capability.invoke",
        {"invocationId": "w9", "capability": "ledger.entry.post", "params": {"amount": 1}},
        conversationId=world.conversation,
        event_id="env-1",
    )
    resent = world.agent.call(
        "capability.invoke",
        {"invocationId": "w9", "capability": "ledger.entry.post", "params": {"amount": 1}},
        conversationId=world.conversation,
        event_id="env-1",
    )
    assert resent["sequence"] == same_envelope["sequence"] and resent.get("duplicate") is True
    assert len(world.pending()) == 1
    assert list(world.ledger.applied.values()) == [1]


@pytest.fixture
def quick(hub_database: str, tmp_path: Path) -> Iterator[World]:
    """A world whose ledger times out quickly."""
    ledger = LedgerProvider(timeout_s=0.2)
    settings = fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(ledger,),
        job_poll_interval=0.01,
    )
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        w = World(client, ledger)
        try:
            yield w
        finally:
            ledger.faults.released.set()
            w.close()


def test_a_provider_that_times_out_after_applying_is_not_called_again(quick: World) -> None:
    quick.ledger.faults.hang_after_apply = 1
    quick.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(quick, "w1")
    result = quick.final("w1")
    assert result["status"] == "succeeded"
    assert list(quick.ledger.applied.values()) == [1]
    assert quick.ledger.calls == 1  # the receipt settled it: no second call


def test_a_timeout_with_no_receipt_is_retried_when_the_provider_replays_safely(
    quick: World,
) -> None:
    quick.ledger.faults.hang_before_apply = 1
    quick.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(quick, "w1")
    assert quick.final("w1")["status"] == "succeeded"
    assert quick.ledger.calls == 2
    assert list(quick.ledger.applied.values()) == [1]


def test_a_timeout_with_no_receipt_ends_unknown_when_a_retry_is_not_safe(quick: World) -> None:
    quick.ledger.faults.hang_before_apply = 1
    quick.invoke("ledger.note.add", {"amount": 10}, "w1")
    approve(quick, "w1")
    result = quick.final("w1")
    assert result["status"] == "unknown_result"
    assert result["error"]["code"] == "unknown_result"
    assert "unknown" in result["error"]["message"]
    assert quick.ledger.calls == 1


def test_only_rate_limited_and_unavailable_are_retried(world: World) -> None:
    world.ledger.faults.fail_with = ErrorCode.UNAVAILABLE
    world.ledger.faults.fail_times = 2
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(world, "w1")
    assert world.final("w1")["status"] == "succeeded"
    assert world.ledger.calls == 3

    world.ledger.faults.fail_with = ErrorCode.INVALID_ARGUMENT
    world.ledger.faults.fail_times = 1
    world.invoke("ledger.entry.post", {"amount": 10}, "w2")
    approve(world, "w2")
    failed = world.final("w2")
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": "invalid_argument",
        "message": "The ledger is busy.",
        "retryable": False,
    }
    assert world.ledger.calls == 4


def test_an_async_write_is_accepted_then_ends(world: World) -> None:
    world.ledger.polls = 3
    world.invoke("ledger.batch.submit", {"amount": 5}, "b1")
    approve(world, "b1")
    accepted = world.result("b1")
    assert accepted["status"] == "accepted" and accepted["receipt"] == {"job": "job-1"}
    done = world.final("b1")
    assert done["status"] == "succeeded" and done["output"]["balance"] == 5
    record = world.ana.read(f"/executions/{done['executionId']}")
    assert record["execution"]["jobId"] == "job-1"


def test_an_execution_left_unfinished_by_a_stopped_hub_is_resumed_from_its_receipt(
    settings: Settings, ledger: LedgerProvider
) -> None:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        world = World(client, ledger)
        ledger.faults.hang_after_apply = 1  # applied, then the hub goes away mid-call
        world.invoke("ledger.entry.post", {"amount": 10}, "w1")
        approve(world, "w1")
        until(lambda: ledger.faults.hang_after_apply == 0, "the call to reach the ledger")
        world.close()
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        state: HubState = client.app.state.hub  # type: ignore[attr-defined]

        def finished() -> bool:
            rows = client.portal.call(state.store.read, _executions)  # type: ignore[union-attr]
            return bool(rows) and rows[0].status == "succeeded"

        until(finished, "the resumed execution to finish")
    assert list(ledger.applied.values()) == [1]


def _executions(r: Reader) -> list[ExecutionRecord]:
    return gov_store.list_executions(r.connection, gov_store_workspace(r))


def gov_store_workspace(r: Reader) -> str:
    return str(r.connection.execute(select(executions.c.workspace_id)).scalar())


# --- security ------------------------------------------------------------------------------


def test_the_agent_never_sees_the_credential(world: World) -> None:
    world.invoke("ledger.balance.read", {}, "r1")
    world.final("r1")
    world.invoke("ledger.entry.post", {"amount": 1}, "w1")
    approve(world, "w1")
    world.final("w1")
    assert all(c == {"apiKey": API_KEY} for c in world.ledger.seen_credentials)
    seen = str(world.agent.frames)
    assert API_KEY not in seen
    log = world.ana.read("/events?after=0&limit=500")
    assert API_KEY not in str(log)


def test_another_workspace_cannot_see_or_decide_an_approval(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 1}, "w1")
    approval = world.result("w1")["approvalId"]
    stranger = world.hub.sign_up(name="Eve")
    assert stranger.get(f"/approvals/{approval}").status_code == 404
    # even naming the other workspace's id, a stranger is not a member there
    stranger._use()
    url = f"/api/workspaces/{world.ana.workspace_id}/approvals/{approval}/decision"
    answer = stranger.client.post(url, json={"decision": "approve"}, headers=stranger.headers())
    assert answer.status_code in (403, 404)
    assert world.ana.read(f"/approvals/{approval}")["status"] == "pending"


def test_an_agent_outside_the_conversation_cannot_invoke_there(world: World) -> None:
    other = world.hub.pair(world.ana, name="other")
    with world.hub.agent(other) as agent:
        refused = agent.call(
            "capability.invoke",
            {"invocationId": "x", "capability": "ledger.balance.read", "params": {}},
            conversationId=world.conversation,
        )
    assert refused["code"] == "forbidden"


def test_a_task_waits_for_a_person_while_its_write_is_on_a_card_and_runs_on_after(
    world: World,
) -> None:
    task = world.ana.send(
        "/tasks",
        {
            "title": "post rent",
            "targetAgentId": world.agent_id,
            "conversationId": world.conversation,
        },
        201,
    )["task"]["id"]
    world.agent.call("task.accepted", {"taskId": task}, taskId=task)
    world.agent.call("task.status_changed", {"status": "running"}, taskId=task)
    payload = {"invocationId": "t1", "capability": "ledger.entry.post", "params": {"amount": 9}}
    assert world.agent.call("capability.invoke", payload, taskId=task)["type"] == "ack"
    approval = world.result("t1")["approvalId"]
    assert world.ana.read(f"/tasks/{task}")["task"]["status"] == "waiting_for_human"
    world.ana.ok(world.decide(approval, {"decision": "approve"}))
    assert world.final("t1")["status"] == "succeeded"
    assert world.ana.read(f"/tasks/{task}")["task"]["status"] == "running"


def test_a_grant_is_used_once_however_often_the_approval_is_sent(world: World) -> None:
    world.invoke("ledger.entry.post", {"amount": 4}, "w1")
    approval = world.result("w1")["approvalId"]
    for _ in range(3):  # a double tap, a resent request
        assert world.decide(approval, {"decision": "approve"}).status_code == 200
    assert world.final("w1")["status"] == "succeeded"
    runs = world.ana.read(f"/executions?conversationId={world.conversation}")["executions"]
    assert len(runs) == 1 and runs[0]["grantId"]
    assert list(world.ledger.applied.values()) == [1]

    def grants(r: Reader) -> list[Any]:
        return list(r.connection.execute(select(schema.grants)).all())

    assert world.client.portal is not None
    (grant,) = world.client.portal.call(world.state.store.read, grants)
    assert grant.used_by == runs[0]["id"]


def test_replaying_the_log_rebuilds_every_governance_table_exactly(world: World) -> None:
    editor = world.member("editor", "Ed")
    world.invoke("ledger.balance.read", {}, "r1")
    world.final("r1")
    world.invoke("ledger.entry.post", {"amount": 10}, "w1")
    approve(world, "w1", standing={"calls": 1, "bounds": {"amount": {"max": 20}}})
    world.final("w1")
    world.invoke("ledger.entry.post", {"amount": 15}, "w2")  # on the standing permission
    world.final("w2")
    world.invoke("ledger.entry.post", {"amount": 99}, "w3")
    third = world.result("w3")["approvalId"]
    world.ana.send(f"/approvals/{third}/handover", {"userId": editor.user_id})
    world.ana.ok(world.decide(third, {"decision": "reject", "reason": "no"}))
    world.invoke("ledger.batch.submit", {"amount": 1}, "b1")
    approve(world, "b1")
    world.final("b1")
    permission = world.ana.read("/policy")["permissions"][0]["id"]
    world.ana.send(f"/permissions/{permission}/revoke", {})
    put(world.ana, "/capabilities/ledger.note.add/state", {"enabled": False})
    put(world.ana, f"/projects/{world.project}/members/{editor.user_id}", {"role": "viewer"})

    def snapshot(r: Reader) -> dict[str, list[dict[str, Any]]]:
        return {
            table.name: [
                dict(row._mapping)
                for row in r.connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in schema.PROJECTION_TABLES
        }

    assert world.client.portal is not None
    live = world.client.portal.call(world.state.store.read, snapshot)
    for name in (
        "projects",
        "project_members",
        "invocations",
        "approvals",
        "grants",
        "executions",
        "standing_permissions",
        "capability_states",
        "policy_rules",
    ):
        assert live[name], name
    world.client.portal.call(world.state.store.rebuild_projections)
    assert world.client.portal.call(world.state.store.read, snapshot) == live
