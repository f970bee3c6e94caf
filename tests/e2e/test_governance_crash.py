"""A hub killed with SIGKILL between recording an execution and its provider's answer applies
nothing twice when it comes back (seed 003 §5, §8: every write path's "retry does not apply
twice"): the execution is in the log before the provider is called, and the restarted hub
asks for the receipt before it calls again — and calls again only where that is safe."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.e2e.processes import ROOT, HubProcess
from tests.support.durable_ledger import DurableLedger
from tests.support.people import Person
from tests.support.waiting import until


def _envelope(type_: str, payload: dict[str, Any], workspace_id: str, **extra: Any) -> str:
    return json.dumps(
        {
            "id": uuid.uuid4().hex,
            "type": type_,
            "version": "0.1",
            "occurredAt": datetime.now(UTC).isoformat(),
            "workspaceId": workspace_id,
            "payload": payload,
            **extra,
        }
    )


@pytest.fixture
def ledger(tmp_path: Path) -> DurableLedger:
    return DurableLedger(tmp_path / "ledger")


@pytest.fixture
def hub(database_url: str | None, tmp_path: Path, ledger: DurableLedger) -> Iterator[HubProcess]:
    process = HubProcess(
        tmp_path / "hub",
        database_url,
        env={
            # the tests' package, and whatever the caller's path holds (a worktree's src)
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "LINEUP_PROVIDERS": "",
            "LINEUP_PROVIDER_MODULES": "tests.support.durable_ledger:provider",
            "LEDGER_DIR": str(ledger.directory),
        },
    )
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


def _approved_write(hub: HubProcess, capability: str) -> tuple[Person, str]:
    """A person, a project allowing the ledger, an agent's write approved: the execution id."""
    ana = Person.at(hub.url, "ana@example.test")
    project = ana.send("/projects", {"name": "Books"}, 201)["id"]
    ana.send(
        "/policy/rules", {"capability": "dledger.*", "effect": "allow", "projectId": project}, 201
    )
    code = ana.send("/pairing-codes", {}, 201)["code"]
    creds = httpx.post(f"{hub.url}/api/pairing/redeem", json={"code": code}).json()
    ana.confirm_agent(creds["agentId"])
    conversation = ana.send(
        "/conversations",
        {"title": "books", "agentIds": [creds["agentId"]], "projectId": project},
        201,
    )["id"]
    ws = creds["workspaceId"]
    with connect(
        creds["websocketUrl"], additional_headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as socket:
        socket.send(_envelope("agent.hello", {"agentVersion": "t", "runtime": "t"}, ws))
        invoke = {"invocationId": "i1", "capability": capability, "params": {"amount": 5}}
        socket.send(_envelope("capability.invoke", invoke, ws, conversationId=conversation))
        while True:
            frame = json.loads(socket.recv(timeout=30))
            if frame.get("type") == "capability.result":
                approval = frame["payload"]["approvalId"]
                break
    decided = ana.send(f"/approvals/{approval}/decision", {"decision": "approve"})
    return ana, str(decided["executionId"])


def _status(person: Person, execution: str) -> str:
    return str(person.read(f"/executions/{execution}")["execution"]["status"])


def _signed_in_again(hub: HubProcess, person: Person) -> Person:
    person.close()
    client = httpx.Client(base_url=hub.url, timeout=15, trust_env=False)
    body = client.post(
        "/api/auth/signin", json={"email": person.email, "password": "correct horse battery"}
    ).json()
    session = client.cookies.get("lineup_session") or ""
    return Person(
        client, person.email, body["csrfToken"], person.workspace_id, person.user_id, session
    )


def test_killed_before_the_provider_applied_the_call_is_made_once_after_restart(
    hub: HubProcess, ledger: DurableLedger
) -> None:
    (ledger.directory / "hang-before").touch()
    ana, execution = _approved_write(hub, "dledger.entry.post")
    until(lambda: (ledger.directory / "reached").exists(), "the call to reach the ledger")
    assert ledger.state()["applied"] == {}
    hub.kill()
    (ledger.directory / "hang-before").unlink()
    hub.start()
    ana = _signed_in_again(hub, ana)
    until(lambda: _status(ana, execution) == "succeeded", "the resumed execution to end")
    assert list(ledger.state()["applied"].values()) == [1]
    ana.close()


def test_killed_after_the_provider_applied_the_receipt_settles_it_without_a_second_call(
    hub: HubProcess, ledger: DurableLedger
) -> None:
    (ledger.directory / "hang-after").touch()
    ana, execution = _approved_write(hub, "dledger.entry.post")
    until(lambda: (ledger.directory / "reached").exists(), "the call to reach the ledger")
    hub.kill()
    (ledger.directory / "hang-after").unlink()
    calls = ledger.state()["calls"]
    hub.start()
    ana = _signed_in_again(hub, ana)
    until(lambda: _status(ana, execution) == "succeeded", "the resumed execution to end")
    assert list(ledger.state()["applied"].values()) == [1]
    assert ledger.state()["calls"] == calls  # settled by the receipt, not called again
    ana.close()


def test_killed_mid_call_a_write_that_cannot_be_replayed_ends_unknown(
    hub: HubProcess, ledger: DurableLedger
) -> None:
    (ledger.directory / "hang-before").touch()
    ana, execution = _approved_write(hub, "dledger.note.add")
    until(lambda: (ledger.directory / "reached").exists(), "the call to reach the ledger")
    hub.kill()
    (ledger.directory / "hang-before").unlink()
    hub.start()
    ana = _signed_in_again(hub, ana)
    until(lambda: _status(ana, execution) == "unknown_result", "the resumed execution to end")
    record = ana.read(f"/executions/{execution}")
    assert record["execution"]["error"]["code"] == "unknown_result"
    assert ledger.state()["applied"] == {}
    ana.close()
