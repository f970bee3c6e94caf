"""The hub killed with SIGKILL mid-stream loses no acknowledged event."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.e2e.processes import HubProcess
from tests.support.people import Person


def _envelope(type_: str, payload: dict, workspace_id: str, **extra: object) -> str:
    return json.dumps(
        {
            "id": extra.pop("id", None) or uuid.uuid4().hex,
            "type": type_,
            "version": "0.1",
            "occurredAt": datetime.now(UTC).isoformat(),
            "workspaceId": workspace_id,
            "payload": payload,
            **extra,
        }
    )


def test_no_acknowledged_event_is_lost_when_the_hub_is_killed(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
):
    ana = sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    creds = httpx.post(f"{hub.url}/api/pairing/redeem", json={"code": code}).json()
    ana.confirm_agent(creds["agentId"])
    ws_id = creds["workspaceId"]
    task_id = ana.send("/tasks", {"title": "stream", "targetAgentId": creds["agentId"]}, 201)[
        "task"
    ]["id"]
    acked: dict[str, int] = {}
    with connect(
        creds["websocketUrl"], additional_headers={"Authorization": f"Bearer {creds['credential']}"}
    ) as socket:
        hello = {"agentVersion": "t", "runtime": "t", "capabilities": []}
        socket.send(_envelope("agent.hello", hello, ws_id))
        socket.send(_envelope("task.accepted", {"taskId": task_id}, ws_id, taskId=task_id))
        for i in range(2000):  # pipelined: the hub works through them while we read acks
            progress = {"status": "running", "progress": i % 100 + 1}  # each one a change
            socket.send(
                _envelope("task.status_changed", progress, ws_id, taskId=task_id, id=f"p{i}")
            )
        with contextlib.suppress(ConnectionClosed):  # the connection dies with the hub
            while len(acked) < 300:
                frame = json.loads(socket.recv(timeout=30))
                if frame.get("type") == "ack" and str(frame.get("id")).startswith("p"):
                    acked[frame["id"]] = frame["sequence"]
            hub.kill()  # mid-stream: many events are still in flight
    assert len(acked) >= 300, "the hub should have acknowledged events before the kill"
    hub.start()  # same home / database
    with httpx.Client(base_url=hub.url) as login:
        stored = _read_log(login, ws_id)
    missing = {k: v for k, v in acked.items() if stored.get(k) != v}
    assert not missing, f"acknowledged but lost or moved: {list(missing.items())[:5]}"
    sequences = sorted(stored.values())
    assert sequences == list(range(1, len(sequences) + 1)), "the log has a gap"


def _read_log(login: httpx.Client, ws_id: str) -> dict[str, int]:
    body = login.post(
        "/api/auth/signin", json={"email": "ana@example.test", "password": "correct horse battery"}
    ).json()
    assert body["workspaces"][0]["id"] == ws_id
    stored: dict[str, int] = {}
    after = 0
    while True:
        page = login.get(
            f"/api/workspaces/{ws_id}/events", params={"after": after, "limit": 1000}
        ).json()
        for event in page["events"]:
            stored[event["id"]] = event["sequence"]
        if not page["events"]:
            break
        after = page["events"][-1]["sequence"]
    return stored
