"""Agents use tools on people's apps through the hub (seed 000 §4–5).

Discovery both ways, routing of ``tool.call`` to apps as pending requests, first answer wins,
timeouts, cancel, delivery after reconnects, the canvas's state, and every refusal.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from lineup.hub import Settings
from lineup.protocol.builtin_tools import BUILTIN_NAMES, MAX_PATH_LENGTH
from tests.integration.hub.conftest import fast_settings
from tests.support.agents import AgentSocket
from tests.support.envelopes import now_iso
from tests.support.hub_client import HubClient
from tests.support.people import Person

CHOICE_ARGS = {"question": "Deploy where?", "options": ["test", "staging", "production"]}


class Setup:
    def __init__(self, hub: HubClient) -> None:
        self.hub = hub
        self.ana = hub.sign_up()
        self.creds = hub.pair(self.ana)
        self.agent_id: str = self.creds["agentId"]
        self.conversation: str = self.ana.ok(
            self.ana.post("/conversations", {"title": "Deploy", "agentIds": [self.agent_id]}),
            201,
        )["id"]
        self._socket = ExitStack()
        self.agent = self._socket.enter_context(hub.agent(self.creds))

    def close(self) -> None:
        self._socket.close()

    def reconnect(self, last_sequence: int) -> None:
        self.close()
        self.agent = self._socket.enter_context(self.hub.agent(self.creds, last_sequence))

    def call(
        self, name: str, action: str | None, arguments: dict[str, Any], call_id: str, **extra: Any
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"call_id": call_id, "name": name, "arguments": arguments}
        if action is not None:
            payload["action"] = action
        payload.update(extra)
        return self.agent.call("tool.call", payload, conversationId=self.conversation)

    def pending(self, person: Person | None = None) -> list[dict[str, Any]]:
        who = person or self.ana
        return list(who.ok(who.get("/tool-calls?status=pending"))["toolCalls"])

    def call_named(self, call_id: str) -> dict[str, Any]:
        calls = self.ana.ok(self.ana.get("/tool-calls"))["toolCalls"]
        return next(c for c in calls if c["callId"] == call_id)

    def answer(self, tool_call: str, body: dict[str, Any], person: Person | None = None) -> Any:
        who = person or self.ana
        return who.post(f"/tool-calls/{tool_call}/result", body)

    def result_frame(self) -> dict[str, Any]:
        return self.agent.next_of("tool.result")


@pytest.fixture
def settings(hub_database: str, tmp_path: Path) -> Settings:
    # Notifications off: on Python 3.11 the notification worker can miss its cancellation at
    # shutdown (asyncio.wait_for swallows it when its event is set at the same moment), which
    # hangs the test client's teardown; tool routing does not involve it.
    return fast_settings(hub_database, tmp_path, notify_enabled=False)


@pytest.fixture
def setup(hub: HubClient):
    made = Setup(hub)
    try:
        yield made
    finally:
        made.close()


def _app_socket(hub: HubClient, person: Person, device: str = "dev-1"):
    person._use()
    return hub.client.websocket_connect(
        f"/ws/client?workspaceId={person.workspace_id}&deviceId={device}"
    )


def _frame(person: Person, type_: str, payload: dict[str, Any], frame_id: str) -> str:
    return json.dumps(
        {
            "id": frame_id,
            "type": type_,
            "version": "0.1",
            "occurredAt": now_iso(),
            "workspaceId": person.workspace_id,
            "payload": payload,
        }
    )


def _subscribe(ws, person: Person, last_sequence: int = 0) -> list[dict[str, Any]]:
    ws.send_text(_frame(person, "client.subscribe", {"lastSequence": last_sequence}, "sub-1"))
    assert json.loads(ws.receive_text())["type"] == "ack"
    events = []
    while True:
        frame = json.loads(ws.receive_text())
        if frame["type"] == "client.caught_up":
            return events
        events.append(frame)


def _answer_on(ws, frame_id: str) -> dict[str, Any]:
    while True:
        frame = json.loads(ws.receive_text())
        if frame.get("type") in ("ack", "error") and frame.get("id") == frame_id:
            return frame


# --- discovery -------------------------------------------------------------------------------


def test_an_agent_lists_the_builtin_tools_when_no_app_registered(setup: Setup):
    query = setup.agent.send("tool.list", {"tools": []})
    listing = setup.agent.next_of("tool.list")
    assert listing["correlationId"] == query
    assert {t["name"] for t in listing["payload"]["tools"]} == BUILTIN_NAMES
    assert setup.agent.answer(query)["type"] == "ack"
    view = setup.ana.ok(setup.ana.get("/tools"))
    assert view["builtin"] is True and view["devices"] == []


def test_an_agent_lists_the_union_of_the_tools_the_apps_registered(setup: Setup):
    weather = {
        "name": "weather",
        "type": "action",
        "description": "Today's weather where the person is",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    ana = setup.ana
    phone = ana.client.put(
        ana.url("/devices/phone-1/tools"),
        json={"tools": [weather], "name": "Ana's phone"},
        headers=ana.headers(),
    )
    assert phone.status_code == 200, phone.text
    assert phone.json()["changed"] is True
    laptop_tools = {"tools": [{"name": "choice", "type": "action", "inputSchema": {}}]}
    ana.client.put(ana.url("/devices/laptop-1/tools"), json=laptop_tools, headers=ana.headers())
    setup.agent.send("tool.list", {"tools": []})
    names = [t["name"] for t in setup.agent.next_of("tool.list")["payload"]["tools"]]
    assert sorted(names) == ["choice", "weather"]
    # The union is what calls are checked against: canvas is no longer offered.
    refused = setup.call("canvas", "open", {"width": 10, "height": 10}, "c-canvas")
    assert refused["code"] == "not_found"
    assert setup.call("weather", None, {"city": "Lyon"}, "c-weather")["type"] == "ack"
    # An empty list withdraws a device's tools; with none left, the built-ins come back.
    for device in ("phone-1", "laptop-1"):
        ana.client.put(
            ana.url(f"/devices/{device}/tools"), json={"tools": []}, headers=ana.headers()
        )
    setup.agent.send("tool.list", {"tools": []})
    names = {t["name"] for t in setup.agent.next_of("tool.list")["payload"]["tools"]}
    assert names == BUILTIN_NAMES


def test_registering_the_same_tools_again_records_nothing(setup: Setup):
    ana = setup.ana
    body = {"tools": [{"name": "choice", "type": "action", "inputSchema": {}}]}
    first = ana.client.put(ana.url("/devices/d1/tools"), json=body, headers=ana.headers()).json()
    again = ana.client.put(ana.url("/devices/d1/tools"), json=body, headers=ana.headers()).json()
    assert first["changed"] is True and again["changed"] is False and again["sequence"] is None
    bad = ana.client.put(
        ana.url("/devices/d1/tools"),
        json={"tools": [{"name": "x", "type": "action", "inputSchema": {"type": 3}}]},
        headers=ana.headers(),
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_argument"


def test_an_agent_may_only_query_the_tool_list(setup: Setup):
    answer = setup.agent.call(
        "tool.list", {"tools": [{"name": "x", "type": "action", "inputSchema": {}}]}
    )
    assert answer["type"] == "error" and answer["code"] == "invalid_argument"


def test_the_tools_an_agent_declares_in_its_hello_are_listed_on_the_agent(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as ws:
        agent = AgentSocket(ws, creds["workspaceId"], creds["agentId"])
        own = {
            "name": "deploy",
            "type": "toolset",
            "description": "Deploy the site",
            "actions": [{"name": "run", "description": "Run", "inputSchema": {"type": "object"}}],
        }
        hello = {"agentVersion": "1", "runtime": "python", "capabilities": [], "tools": [own]}
        assert agent.call("agent.hello", hello)["type"] == "ack"
        shown = ana.ok(ana.get(f"/agents/{creds['agentId']}"))
        assert shown["tools"] == [own]


def test_an_app_registers_and_answers_over_the_people_socket(setup: Setup):
    ana = setup.ana
    with _app_socket(setup.hub, ana, device="tablet-7") as ws:
        _subscribe(ws, ana)
        tools = [{"name": "choice", "type": "action", "inputSchema": {"type": "object"}}]
        ws.send_text(_frame(ana, "tool.list", {"tools": tools}, "reg-1"))
        assert _answer_on(ws, "reg-1")["type"] == "ack"
        devices = ana.ok(ana.get("/tools"))["devices"]
        assert [(d["deviceId"], d["tools"]) for d in devices] == [("tablet-7", ["choice"])]
        assert setup.call("choice", "select", CHOICE_ARGS, "c1")["type"] == "ack"
        called = _until(ws, "tool.called")
        tool_call = called["payload"]["toolCallId"]
        answer = {"call_id": tool_call, "name": "choice", "result": {"message": "staging"}}
        ws.send_text(_frame(ana, "tool.result", answer, "res-1"))
        assert _answer_on(ws, "res-1")["type"] == "ack"
        ws.send_text(_frame(ana, "tool.result", answer, "res-1"))
        again = _answer_on(ws, "res-1")
        assert again["type"] == "ack" and not again.get("sequence")
        other = {**answer, "result": {"message": "test"}}
        ws.send_text(_frame(ana, "tool.result", other, "res-2"))
        assert _answer_on(ws, "res-2")["code"] == "conflict"
    result = setup.result_frame()
    assert result["payload"] == {
        "call_id": "c1",
        "name": "choice",
        "action": "select",
        "result": {"message": "staging"},
    }


def _until(ws, type_: str) -> dict[str, Any]:
    while True:
        frame = json.loads(ws.receive_text())
        if frame.get("type") == type_:
            return frame


# --- routing and answers -----------------------------------------------------------------------


def test_a_call_waits_in_the_inbox_reaches_open_apps_live_and_its_answer_reaches_the_agent(
    setup: Setup,
):
    ana = setup.ana
    with _app_socket(setup.hub, ana) as ws:
        _subscribe(ws, ana)
        ack = setup.call("choice", "select", CHOICE_ARGS, "c1")
        assert ack["type"] == "ack" and ack["sequence"]
        live = _until(ws, "tool.called")
        assert live["payload"]["callId"] == "c1" and live["actor"] == f"agent:{setup.agent_id}"
        assert live["conversationId"] == setup.conversation
    inbox = ana.ok(ana.get("/inbox"))
    assert [c["callId"] for c in inbox["waitingTools"]] == ["c1"]
    assert inbox["counts"]["waitingForMe"] == 1
    tool_call = inbox["waitingTools"][0]["id"]
    answered = ana.ok(setup.answer(tool_call, {"result": {"message": "staging", "index": 1}}))
    assert answered["status"] == "completed" and answered["answeredByName"] == "Ana"
    result = setup.result_frame()
    assert result["payload"]["result"] == {"message": "staging", "index": 1}
    assert result["sequence"] and result["conversationId"] == setup.conversation
    assert ana.ok(ana.get("/inbox"))["waitingTools"] == []


def test_the_first_answer_wins_the_same_again_changes_nothing_a_different_one_is_a_conflict(
    setup: Setup,
):
    setup.call("confirm", None, {"message": "Restart the server?"}, "c1")
    tool_call = setup.pending()[0]["id"]
    bo_email = "bo@example.test"
    bo = setup.hub.sign_up(bo_email, name="Bo")
    yes = {"result": {"message": "yes", "confirmed": True}}
    assert setup.answer(tool_call, yes).status_code == 200
    before = setup.ana.ok(setup.ana.get("/events"))["latestSequence"]
    assert setup.answer(tool_call, yes).status_code == 200
    assert setup.ana.ok(setup.ana.get("/events"))["latestSequence"] == before
    no = setup.answer(tool_call, {"result": {"message": "no", "confirmed": False}})
    assert no.status_code == 409
    error = no.json()["error"]
    assert error["code"] == "conflict" and "Ana" in error["message"]
    assert error["details"]["answeredByName"] == "Ana"
    # Another workspace's person cannot see or answer it.
    assert setup.answer(tool_call, yes, person=bo).status_code == 404
    assert bo.get(f"/tool-calls/{tool_call}").status_code == 404
    assert setup.result_frame()["payload"]["result"]["confirmed"] is True


def test_an_answer_given_while_the_agent_was_away_reaches_it_when_it_reconnects(setup: Setup):
    setup.call("input", None, {"question": "Your email?", "format": "email"}, "c1")
    tool_call = setup.pending()[0]["id"]
    cursor = max(f.get("sequence") or 0 for f in setup.agent.frames)
    setup.close()
    assert setup.answer(tool_call, {"result": {"message": "ana@example.test"}}).status_code == 200
    setup.reconnect(last_sequence=cursor)
    result = setup.result_frame()
    assert result["payload"]["result"]["message"] == "ana@example.test"
    # A second reconnect from the sequence after it does not replay it again.
    setup.reconnect(last_sequence=result["sequence"])
    query = setup.agent.send("tool.list", {"tools": []})
    setup.agent.answer(query)
    assert not [f for f in setup.agent.frames if f.get("type") == "tool.result"]


def test_a_call_made_while_no_app_was_open_is_delivered_when_one_opens(setup: Setup):
    setup.call("choice", "select", CHOICE_ARGS, "c1")
    with _app_socket(setup.hub, setup.ana) as ws:
        replayed = _subscribe(ws, setup.ana)
        called = [e for e in replayed if e["type"] == "tool.called"]
        assert [e["payload"]["callId"] for e in called] == ["c1"]
        assert called[0]["payload"]["arguments"] == CHOICE_ARGS


def test_a_call_that_times_out_completes_with_unavailable_and_takes_no_late_answer(
    setup: Setup,
):
    setup.call("choice", "select", CHOICE_ARGS, "c1", timeout_ms=150)
    tool_call = setup.call_named("c1")["id"]
    result = setup.result_frame()
    assert result["payload"]["error"]["code"] == "unavailable"
    assert "150 ms" in result["payload"]["error"]["message"]
    row = setup.ana.ok(setup.ana.get(f"/tool-calls/{tool_call}"))
    assert row["status"] == "expired" and row["expiresAt"]
    late = setup.answer(tool_call, {"result": {"message": "test"}})
    assert late.status_code == 409 and late.json()["error"]["details"]["reason"] == "expired"


def test_an_agent_withdraws_a_call_and_the_card_leaves_the_inbox(setup: Setup):
    setup.call("choice", "select", CHOICE_ARGS, "c1")
    tool_call = setup.pending()[0]["id"]
    cancel = setup.agent.call("tool.cancel", {"call_id": "c1", "reason": "not needed"})
    assert cancel["type"] == "ack" and cancel["sequence"]
    again = setup.agent.call("tool.cancel", {"call_id": "c1"})
    assert again["type"] == "ack" and not again.get("sequence")
    assert setup.ana.ok(setup.ana.get("/inbox"))["waitingTools"] == []
    row = setup.ana.ok(setup.ana.get(f"/tool-calls/{tool_call}"))
    assert (row["status"], row["cancelReason"]) == ("cancelled", "not needed")
    late = setup.answer(tool_call, {"result": {"message": "test"}})
    assert late.status_code == 409 and "withdrew" in late.json()["error"]["message"]
    assert setup.agent.call("tool.cancel", {"call_id": "nope"})["code"] == "not_found"
    setup.call("choice", "select", CHOICE_ARGS, "c2")
    setup.answer(setup.pending()[0]["id"], {"result": {"message": "test"}})
    assert setup.agent.call("tool.cancel", {"call_id": "c2"})["code"] == "conflict"


def test_a_call_in_a_task_is_shown_with_the_task(setup: Setup, hub: HubClient):
    ana = setup.ana
    task = ana.ok(ana.post("/tasks", {"title": "Ship", "targetAgentId": setup.agent_id}), 201)
    task_id = task["task"]["id"]
    payload = {"call_id": "c1", "name": "confirm", "arguments": {"message": "Ship it?"}}
    assert setup.agent.call("tool.call", payload, taskId=task_id)["type"] == "ack"
    row = ana.ok(ana.get(f"/tool-calls?taskId={task_id}"))["toolCalls"][0]
    assert row["taskId"] == task_id and row["conversationId"] == task["task"]["conversationId"]
    other = hub.pair(ana, "other")
    theirs = ana.ok(ana.post("/tasks", {"title": "Theirs", "targetAgentId": other["agentId"]}), 201)
    refused = setup.agent.call(
        "tool.call", {**payload, "call_id": "c2"}, taskId=theirs["task"]["id"]
    )
    assert refused["code"] == "forbidden"


def test_a_question_tool_makes_its_task_wait_for_the_person_until_it_is_answered(setup: Setup):
    ana = setup.ana
    task_id = ana.ok(ana.post("/tasks", {"title": "Ship", "targetAgentId": setup.agent_id}), 201)[
        "task"
    ]["id"]
    assert setup.agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"

    def status() -> str:
        return str(ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["status"])

    def call(name: str, action: str | None, arguments: dict[str, Any], call_id: str) -> None:
        payload: dict[str, Any] = {"call_id": call_id, "name": name, "arguments": arguments}
        if action is not None:
            payload["action"] = action
        assert setup.agent.call("tool.call", payload, taskId=task_id)["type"] == "ack"

    # the app answers a calculator itself: nobody is waited for
    call("calculator", "add", {"a": 1, "b": 1}, "calc")
    assert status() == "running"
    call("confirm", None, {"message": "Ship it?"}, "q1")
    call("choice", "select", CHOICE_ARGS, "q2")
    assert status() == "waiting_for_human"
    assert task_id in [t["id"] for t in ana.ok(ana.get("/tasks?status=waiting"))["tasks"]]
    first = next(c for c in setup.pending() if c["callId"] == "q1")
    assert setup.answer(first["id"], {"result": {"message": "yes"}}).status_code == 200
    assert status() == "waiting_for_human"  # the choice is still open
    assert setup.agent.call("tool.cancel", {"call_id": "q2"})["type"] == "ack"
    assert status() == "running"


# --- bad input ---------------------------------------------------------------------------------


def test_unknown_tools_and_actions_are_not_found(setup: Setup):
    assert setup.call("fax", None, {}, "c1")["code"] == "not_found"
    missing = setup.call("calculator", "power", {"a": 1, "b": 2}, "c2")
    assert missing["code"] == "not_found"
    assert missing["details"]["actions"] == ["add", "subtract", "multiply", "divide"]
    assert setup.call("calculator", None, {"a": 1, "b": 2}, "c3")["code"] == "invalid_argument"
    assert setup.pending() == []


def test_arguments_that_fail_the_schema_are_invalid_argument_listing_every_problem(setup: Setup):
    refused = setup.call("choice", "select", {"question": "", "options": "a"}, "c1")
    assert refused["code"] == "invalid_argument"
    paths = {p["path"] for p in refused["details"]["problems"]}
    assert paths == {"question", "options"}
    assert setup.call("calculator", "add", {"a": "1", "b": 2}, "c2")["code"] == "invalid_argument"
    assert setup.call("calculator", "add", {"a": True, "b": 2}, "c3")["code"] == "invalid_argument"
    assert setup.pending() == []


def test_a_reused_call_id_is_a_duplicate_when_identical_and_a_conflict_otherwise(setup: Setup):
    first = setup.call("choice", "select", CHOICE_ARGS, "c1")
    same = setup.call("choice", "select", CHOICE_ARGS, "c1")
    assert same["type"] == "ack" and same["duplicate"] is True
    assert same["sequence"] == first["sequence"]
    other = setup.call("choice", "select", {**CHOICE_ARGS, "question": "Else?"}, "c1")
    assert other["code"] == "conflict"
    assert len(setup.pending()) == 1


def test_another_agent_may_use_the_same_call_id(setup: Setup, hub: HubClient):
    other_creds = hub.pair(setup.ana, "other")
    with hub.agent(other_creds) as other:
        setup.call("confirm", None, {"message": "A?"}, "c1")
        payload = {"call_id": "c1", "name": "confirm", "arguments": {"message": "B?"}}
        assert other.call("tool.call", payload)["type"] == "ack"
        assert len({c["id"] for c in setup.pending()}) == 2


def test_answers_that_their_call_could_not_have_are_invalid_argument(setup: Setup):
    setup.call("choice", "select", CHOICE_ARGS, "c1")
    setup.call("calculator", "add", {"a": 2, "b": 3}, "c2")
    setup.call("input", None, {"question": "Age?", "format": "integer"}, "c3")
    choice, calc, age = (c["id"] for c in setup.pending())
    assert setup.answer(choice, {"result": {"message": "moon"}}).status_code == 400
    assert setup.answer(calc, {"result": {"message": "6", "value": 6}}).status_code == 400
    assert setup.answer(age, {"result": {"message": "forty"}}).status_code == 400
    assert setup.answer(age, {"result": {}}).status_code == 400
    bad_code = setup.answer(age, {"error": {"code": "oops", "message": "x"}})
    assert bad_code.status_code == 400
    huge = setup.answer(age, {"error": {"code": "invalid_argument", "message": "x" * 70_000}})
    assert huge.status_code == 400 and "at most" in huge.json()["error"]["message"]
    assert len(setup.pending()) == 3
    assert setup.answer(calc, {"result": {"message": "5", "value": 5}}).status_code == 200


def test_dividing_by_zero_is_answered_invalid_argument_to_the_agent(setup: Setup):
    setup.call("calculator", "divide", {"a": 1, "b": 0}, "c1")
    tool_call = setup.pending()[0]["id"]
    error = {"code": "invalid_argument", "message": "Cannot divide by zero."}
    assert setup.answer(tool_call, {"error": error}).status_code == 200
    assert setup.result_frame()["payload"]["error"] == error
    assert setup.ana.ok(setup.ana.get(f"/tool-calls/{tool_call}"))["status"] == "failed"


# --- the canvas --------------------------------------------------------------------------------


def _complete(setup: Setup, call_id: str) -> dict[str, Any]:
    """Answer a canvas call as every app does, and return the agent's tool.result."""
    row = setup.call_named(call_id)
    action = row["action"]
    messages = {"draw": "drawn", "undo": "undone", "clear": "cleared", "close": "closed"}
    if action == "open":
        result = {"message": f"instance_id: {row['instanceId']}", "instance_id": row["instanceId"]}
    else:
        result = {"message": messages[action], "instance_id": row["instanceId"]}
    response = setup.answer(row["id"], {"result": result})
    assert response.status_code == 200, response.text
    return setup.result_frame()


def _canvas(setup: Setup, instance: str) -> dict[str, Any]:
    return dict(setup.ana.ok(setup.ana.get(f"/canvases/{instance}")))


def _open(setup: Setup, call_id: str, width: int = 800, height: int = 600) -> str:
    assert (
        setup.call("canvas", "open", {"width": width, "height": height}, call_id)["type"] == "ack"
    )
    result = _complete(setup, call_id)["payload"]["result"]
    assert result["message"] == f"instance_id: {result['instance_id']}"
    return str(result["instance_id"])


def test_a_canvas_is_opened_drawn_on_undone_cleared_and_closed_and_its_state_is_kept(
    setup: Setup,
):
    first = _open(setup, "open-1")
    second = _open(setup, "open-2", 300, 200)
    assert first != second and first.startswith("inst_")
    for n, (path, color) in enumerate([("M10 10 L50 50", "red"), ("M0 0 H90", "#00f")]):
        args = {"instance_id": first, "path": path, "color": color, "width": 3}
        setup.call("canvas", "draw", args, f"draw-{n}")
        _complete(setup, f"draw-{n}")
    setup.call("canvas", "draw", {"instance_id": second, "path": "M1 1 L2 2"}, "draw-b")
    _complete(setup, "draw-b")
    canvas = _canvas(setup, first)
    assert [s["path"] for s in canvas["strokes"]] == ["M10 10 L50 50", "M0 0 H90"]
    assert (canvas["width"], canvas["height"], canvas["status"]) == (800, 600, "open")
    setup.call("canvas", "undo", {"instance_id": first}, "undo-1")
    _complete(setup, "undo-1")
    assert [s["color"] for s in _canvas(setup, first)["strokes"]] == ["red"]
    setup.call("canvas", "clear", {"instance_id": first}, "clear-1")
    _complete(setup, "clear-1")
    assert _canvas(setup, first)["strokes"] == []
    # Undo takes back the last operation: undoing the clear brings the stroke back.
    setup.call("canvas", "undo", {"instance_id": first}, "undo-2")
    _complete(setup, "undo-2")
    assert [s["path"] for s in _canvas(setup, first)["strokes"]] == ["M10 10 L50 50"]
    assert [s["path"] for s in _canvas(setup, second)["strokes"]] == ["M1 1 L2 2"]
    setup.call("canvas", "close", {"instance_id": first}, "close-1")
    _complete(setup, "close-1")
    assert _canvas(setup, first)["status"] == "closed"
    closed = setup.call("canvas", "draw", {"instance_id": first, "path": "M0 0"}, "late")
    assert closed["code"] == "not_found"
    unknown = setup.call("canvas", "undo", {"instance_id": "inst_nope"}, "nope")
    assert unknown["code"] == "not_found"
    listed = setup.ana.ok(setup.ana.get(f"/canvases?conversationId={setup.conversation}"))
    assert [c["id"] for c in listed["canvases"]] == [first, second]


def test_a_canvas_draw_beyond_the_limits_is_refused(setup: Setup):
    instance = _open(setup, "open-1")
    long_path = "M0 0 " + "L1 1 " * (MAX_PATH_LENGTH // 5)
    assert len(long_path) > MAX_PATH_LENGTH
    refused = setup.call("canvas", "draw", {"instance_id": instance, "path": long_path}, "big")
    assert refused["code"] == "invalid_argument"
    markup = {"instance_id": instance, "path": "<script>alert(1)</script>"}
    assert setup.call("canvas", "draw", markup, "markup")["code"] == "invalid_argument"
    color = {"instance_id": instance, "path": "M0 0", "color": "url(javascript:x)"}
    assert setup.call("canvas", "draw", color, "color")["code"] == "invalid_argument"
    huge = setup.call("canvas", "open", {"width": 100_000, "height": 10}, "huge")
    assert huge["code"] == "invalid_argument"


def test_canvas_calls_are_answered_in_the_order_they_were_made(setup: Setup):
    instance = _open(setup, "open-1")
    setup.call("canvas", "draw", {"instance_id": instance, "path": "M0 0 L1 1"}, "d1")
    setup.call("canvas", "draw", {"instance_id": instance, "path": "M2 2 L3 3"}, "d2")
    d1, d2 = setup.call_named("d1"), setup.call_named("d2")
    skipped = setup.answer(d2["id"], {"result": {"message": "drawn"}})
    assert (
        skipped.status_code == 409 and skipped.json()["error"]["details"]["toolCallId"] == d1["id"]
    )
    assert setup.answer(d1["id"], {"result": {"message": "drawn"}}).status_code == 200
    assert setup.answer(d2["id"], {"result": {"message": "drawn"}}).status_code == 200
    assert [s["path"] for s in _canvas(setup, instance)["strokes"]] == ["M0 0 L1 1", "M2 2 L3 3"]
    wrong = setup.call("canvas", "draw", {"instance_id": instance, "path": "M9 9"}, "d3")
    assert wrong["type"] == "ack"
    d3 = setup.call_named("d3")["id"]
    assert setup.answer(d3, {"result": {"message": "cleared"}}).status_code == 400


def test_closing_a_canvas_ends_the_calls_still_pending_on_it_with_not_found(setup: Setup):
    instance = _open(setup, "open-1")
    setup.call("canvas", "close", {"instance_id": instance}, "close")
    setup.call("canvas", "draw", {"instance_id": instance, "path": "M0 0 L1 1"}, "after")
    _complete(setup, "close")
    result = setup.result_frame()
    assert result["payload"]["call_id"] == "after"
    assert result["payload"]["error"]["code"] == "not_found"
    assert setup.call_named("after")["status"] == "failed"


def test_the_canvas_opened_by_one_app_is_the_one_every_app_answers_with(setup: Setup):
    setup.call("canvas", "open", {"width": 10, "height": 10}, "open-1")
    row = setup.call_named("open-1")
    other = {"message": "instance_id: inst_mine", "instance_id": "inst_mine"}
    assert setup.answer(row["id"], {"result": other}).status_code == 400
    assert row["instanceId"].startswith("inst_")
