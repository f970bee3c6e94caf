"""Operations: Prometheus metrics, readiness with the node's part in the cluster,
request ids, JSON logs. In-process, on SQLite (one node)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.hub.logs import JsonFormatter, request_id
from tests.integration.hub.conftest import fast_settings
from tests.support.databases import sqlite_url


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = fast_settings(sqlite_url(tmp_path), tmp_path, node_id="node-x")
    app = create_app(settings)
    # the metrics answer callers on the hub's own machine (or with the metrics token)
    with TestClient(app, base_url="http://testserver", client=("127.0.0.1", 50000)) as test_client:
        yield test_client


def test_metrics_count_committed_events_connections_and_errors_by_code(
    client: TestClient,
) -> None:
    signup = client.post(
        "/api/auth/signup", json={"email": "m@example.test", "password": "correct horse battery"}
    )
    assert signup.status_code == 201
    assert client.get("/api/workspaces/nope/tasks").status_code in (403, 404)
    text = client.get("/metrics").text
    committed = [line for line in text.splitlines() if line.startswith("lineup_events_committed")]
    assert committed and float(committed[0].split()[-1]) >= 1
    assert 'lineup_connections{kind="agent"} 0.0' in text
    assert "lineup_errors_total{" in text
    assert 'lineup_lease_held{name="monitor"} 1.0' in text
    assert "lineup_fanout_latency_seconds_bucket" in text


def test_readiness_names_the_node_its_mode_and_leases(client: TestClient) -> None:
    assert client.get("/readyz").json() == {"status": "ok", "checks": {"database": "ok"}}
    body = client.get("/readyz/cluster").json()
    assert body["node"] == "node-x"
    assert body["mode"] == "single"
    assert body["leases"] == ["monitor"]


def test_every_response_carries_a_request_id_and_keeps_the_callers(client: TestClient) -> None:
    assert len(client.get("/healthz").headers["x-request-id"]) >= 20
    given = client.get("/healthz", headers={"X-Request-ID": "req-123"})
    assert given.headers["x-request-id"] == "req-123"


def test_json_logs_carry_the_node_the_request_and_event_ids() -> None:
    formatter = JsonFormatter("node-x")
    record = logging.makeLogRecord(
        {"name": "lineup.hub", "levelno": logging.INFO, "levelname": "INFO", "msg": "hi %s"}
    )
    record.args = ("there",)
    record.event_id = "evt_1"
    token = request_id.set("req-9")
    try:
        entry = json.loads(formatter.format(record))
    finally:
        request_id.reset(token)
    assert entry["msg"] == "hi there"
    assert entry["node"] == "node-x"
    assert entry["request_id"] == "req-9"
    assert entry["event_id"] == "evt_1"
    assert entry["level"] == "info"
