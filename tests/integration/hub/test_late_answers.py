"""A question's time runs out the same way for an interaction card and a tool call on an app:
an answer after it is refused (``conflict``, reason ``expired``) and the expiry is recorded
once — by that answer or by the monitor, whichever comes first — and reaches the agent; an
answer just in time counts, and the monitor then leaves it be. The hub's clock is the test's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.hub.monitor import Monitor
from tests.integration.hub.conftest import fast_settings
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import Person

WAIT_MS = 10_000


@dataclass
class Timed:
    client: TestClient
    clock: FakeClock
    monitor: Monitor
    ana: Person
    agent: AgentSocket
    conversation: str

    def ask(self, interaction_id: str) -> None:
        expires = datetime.fromtimestamp((self.clock() + WAIT_MS) / 1000, tz=UTC)
        interaction = {
            "id": interaction_id,
            "type": "approval",
            "title": "Ship it?",
            "expiresAt": expires.isoformat().replace("+00:00", "Z"),
        }
        ack = self.agent.call(
            "interaction.requested",
            {"interaction": interaction},
            conversationId=self.conversation,
        )
        assert ack["type"] == "ack", ack

    def call(self, call_id: str) -> str:
        payload = {
            "call_id": call_id,
            "name": "confirm",
            "arguments": {"message": "Ship it?"},
            "timeout_ms": WAIT_MS,
        }
        ack = self.agent.call("tool.call", payload, conversationId=self.conversation)
        assert ack["type"] == "ack", ack
        calls = self.ana.ok(self.ana.get("/tool-calls"))["toolCalls"]
        return str(next(c["id"] for c in calls if c["callId"] == call_id))

    def respond(self, interaction_id: str) -> Any:
        body = {"response": {"optionId": "approve"}}
        return self.ana.post(f"/interactions/{interaction_id}/respond", body)

    def answer(self, tool_call: str) -> Any:
        body = {"result": {"message": "yes", "confirmed": True}}
        return self.ana.post(f"/tool-calls/{tool_call}/result", body)

    def sweep(self) -> None:
        assert self.client.portal is not None
        self.client.portal.call(self.monitor.expire_interactions, self.clock())
        self.client.portal.call(self.monitor.expire_tool_calls, self.clock())

    def recorded(self, type_: str) -> list[dict[str, Any]]:
        events = self.ana.ok(self.ana.get("/events?after=0&limit=1000"))["events"]
        return [e for e in events if e["type"] == type_]


@pytest.fixture
def timed(hub_database: str, tmp_path: Path) -> Iterator[Timed]:
    clock = FakeClock()
    # The app's own monitor passes once at start and then not for an hour: the test sweeps.
    settings = fast_settings(hub_database, tmp_path, monitor_interval=3600, notify_enabled=False)
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        body = {"title": "Release", "agentIds": [creds["agentId"]]}
        conversation = ana.ok(ana.post("/conversations", body), 201)["id"]
        with hub.agent(creds) as agent:
            monitor = Monitor(client.app.state.hub)  # type: ignore[attr-defined]
            yield Timed(client, clock, monitor, ana, agent, conversation)


def _refused_as_expired(response: Any) -> None:
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "conflict" and error["details"]["reason"] == "expired"


def test_an_answer_after_the_time_ran_out_is_refused_and_records_the_expiry_once(timed: Timed):
    timed.ask("int_late")
    tool_call = timed.call("c_late")
    timed.clock.now += WAIT_MS  # the monitor has not passed yet

    _refused_as_expired(timed.respond("int_late"))
    _refused_as_expired(timed.answer(tool_call))
    assert timed.ana.ok(timed.ana.get("/interactions/int_late"))["status"] == "expired"
    assert timed.ana.ok(timed.ana.get(f"/tool-calls/{tool_call}"))["status"] == "expired"
    assert timed.agent.next_of("interaction.expired")["payload"]["interactionId"] == "int_late"
    result = timed.agent.next_of("tool.result")["payload"]
    assert result["call_id"] == "c_late" and result["error"]["code"] == "unavailable"

    # Asked again, and swept: still refused, and nothing is recorded twice.
    _refused_as_expired(timed.respond("int_late"))
    _refused_as_expired(timed.answer(tool_call))
    timed.sweep()
    assert len(timed.recorded("interaction.expired")) == 1
    assert len(timed.recorded("tool.completed")) == 1
    assert timed.recorded("interaction.resolved") == []


def test_the_monitor_expires_a_card_and_a_call_once_their_time_has_come(timed: Timed):
    timed.ask("int_wait")
    tool_call = timed.call("c_wait")
    timed.clock.now += WAIT_MS - 1
    timed.sweep()
    assert timed.ana.ok(timed.ana.get("/interactions/int_wait"))["status"] == "requested"
    assert timed.ana.ok(timed.ana.get(f"/tool-calls/{tool_call}"))["status"] == "pending"

    timed.clock.now += 1
    timed.sweep()
    assert timed.agent.next_of("interaction.expired")["payload"]["interactionId"] == "int_wait"
    assert timed.agent.next_of("tool.result")["payload"]["error"]["code"] == "unavailable"
    _refused_as_expired(timed.respond("int_wait"))
    _refused_as_expired(timed.answer(tool_call))


def test_an_answer_just_in_time_counts_and_the_monitor_leaves_it_be(timed: Timed):
    timed.ask("int_ok")
    tool_call = timed.call("c_ok")
    timed.clock.now += WAIT_MS - 1
    assert timed.respond("int_ok").status_code == 200
    assert timed.answer(tool_call).status_code == 200

    timed.clock.now += 1
    timed.sweep()
    assert timed.ana.ok(timed.ana.get("/interactions/int_ok"))["status"] == "resolved"
    assert timed.ana.ok(timed.ana.get(f"/tool-calls/{tool_call}"))["status"] == "completed"
    assert timed.recorded("interaction.expired") == []
    assert [e["payload"].get("expired") for e in timed.recorded("tool.completed")] == [None]
