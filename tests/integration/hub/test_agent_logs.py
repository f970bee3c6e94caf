"""An agent's diagnostic lines (``agent.logs``): kept per agent as a bounded ring, redacted
again by the hub, refused whole past the protocol's limits, seen only in the agent's own
workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.protocol.agent_logs import MAX_BATCH_BYTES, MAX_LINE_BYTES, MAX_LINES
from tests.integration.hub.conftest import fast_settings
from tests.support.envelopes import now_iso
from tests.support.hub_client import HubClient


def _line(n: int, message: str | None = None, **extra: Any) -> dict[str, Any]:
    line = {
        "id": f"line-{n}",
        "ts": now_iso(),
        "level": "info",
        "logger": "lineup.sdk",
        "message": message if message is not None else f"line {n}",
    }
    line.update(extra)
    return line


def test_the_lines_an_agent_sends_are_shown_newest_first_and_resending_adds_nothing(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    batch = [
        _line(
            1,
            "cannot reach the hub at ws://hub/ws/agent (refused); retry in 0.50s",
            level="warning",
        ),
        _line(2, "connected to ws://hub/ws/agent", fields={"attempt": 2, "nested": {"ok": True}}),
    ]
    with hub.agent(creds) as agent:
        ack = agent.call("agent.logs", {"lines": batch})
        assert ack["type"] == "ack" and "sequence" not in ack
        again = agent.call("agent.logs", {"lines": batch})  # its ack was lost, say
        assert again["type"] == "ack"
    body = ana.read(f"/agents/{creds['agentId']}/logs")
    assert body["kept"] == 500
    assert [(line["id"], line["level"]) for line in body["lines"]] == [
        ("line-2", "info"),
        ("line-1", "warning"),
    ]
    assert body["lines"][0]["fields"] == {"attempt": 2, "nested": {"ok": True}}
    assert body["lines"][1]["message"].startswith("cannot reach the hub")
    assert "fields" not in body["lines"][1]
    # nothing of it is in the workspace's log
    events = ana.read("/events")["events"]
    assert not [e for e in events if "logs" in e["type"]]


def test_the_hub_redacts_what_an_agent_forgot_to(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    leaked = creds["credential"]
    line = _line(
        1,
        f"retrying with Authorization: Bearer abc.def.ghi and {leaked} at "
        "https://bot:hunter22@example.test/hook?token=s3cr3tvalue&page=2",
        fields={"headers": {"api_key": "k-123456", "x": ["lut_" + "a" * 30]}},
    )
    with hub.agent(creds) as agent:
        assert agent.call("agent.logs", {"lines": [line]})["type"] == "ack"
    (kept,) = ana.read(f"/agents/{creds['agentId']}/logs")["lines"]
    text = repr(kept)
    for secret in ("abc.def.ghi", leaked[4:], "hunter22", "s3cr3tvalue", "k-123456", "a" * 30):
        assert secret not in text
    assert "page=2" in kept["message"] and "example.test/hook" in kept["message"]


def test_only_the_newest_lines_are_kept(hub_database: str, tmp_path: Path):
    settings = fast_settings(hub_database, tmp_path, agent_log_lines=150)
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        with hub.agent(creds) as agent:
            for start in range(0, 400, MAX_LINES):
                lines = [_line(n) for n in range(start, start + MAX_LINES)]
                assert agent.call("agent.logs", {"lines": lines})["type"] == "ack"
        body = ana.read(f"/agents/{creds['agentId']}/logs?limit=1000")
    assert body["kept"] == 150
    assert [line["id"] for line in body["lines"]] == [f"line-{n}" for n in range(399, 249, -1)]
    assert [line["position"] for line in body["lines"]][:2] == [400, 399]


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ([_line(n) for n in range(MAX_LINES + 1)], f"at most {MAX_LINES} items"),
        ([_line(1, "x" * 1900, fields={"blob": "y" * 3000})], f"at most {MAX_LINE_BYTES} bytes"),
        (
            [_line(n, "é" * 1900) for n in range(20)],
            f"at most {MAX_BATCH_BYTES} bytes of lines",
        ),
        ([], "at least 1 item"),
        ([_line(1, level="loud")], "'debug', 'info', 'warning', 'error' or 'critical'"),
    ],
    ids=["too-many-lines", "line-too-large", "batch-too-large", "empty", "unknown-level"],
)
def test_a_batch_beyond_the_limits_is_refused_whole_with_the_limit_named(
    hub: HubClient, lines: list[dict[str, Any]], problem: str
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        error = agent.call("agent.logs", {"lines": lines})
        assert agent.call("agent.heartbeat", {})["type"] == "ack", "the connection stays up"
    assert error["type"] == "error" and error["code"] == "invalid_argument"
    assert error["retryable"] is False
    assert error["message"].startswith("Invalid agent.logs payload:")
    assert any(problem in p["problem"] for p in error["details"]["problems"]), error
    assert ana.read(f"/agents/{creds['agentId']}/logs")["lines"] == []


def test_another_workspaces_agent_and_a_stranger_see_no_lines(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        assert agent.call("agent.logs", {"lines": [_line(1)]})["type"] == "ack"
    ben = hub.sign_up()
    response = ben.get(f"/agents/{creds['agentId']}/logs")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert ana.get("/agents/agent_nobody/logs").status_code == 404
    # ana's agent id under ben's workspace path is still not ben's
    hub.client.cookies.clear()
    assert hub.client.get(f"/api/workspaces/{creds['workspaceId']}/agents/x/logs").status_code in (
        401,
        403,
    )
