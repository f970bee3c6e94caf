"""Direct mode in the SDK's configuration (seed 000 §3.1): an agent switches between a
hub and direct mode by configuration alone — the credentials file or the environment."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from lineup.direct import RedactTokens, loopback_host, people_urls
from lineup.sdk import AgentConfig, DirectEndpoint, DirectOptions, new_direct_token
from lineup.sdk._direct import check_direct_token

TOKEN = "k7wq-3hxa-p2mn-t8rv-c4zd"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "LINEUP_MODE",
        "LINEUP_DIRECT_TOKEN",
        "LINEUP_DIRECT_HOST",
        "LINEUP_DIRECT_PORT",
        "LINEUP_DIRECT_PERSON",
    ):
        monkeypatch.delenv(name, raising=False)


def test_a_credentials_file_in_direct_mode_gives_a_direct_config(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"mode": "direct", "port": 9600, "token": TOKEN}))
    config = AgentConfig.load(path)
    assert config.mode == "direct"
    assert config.direct == DirectOptions(token=TOKEN, host="0.0.0.0", port=9600)
    assert config.websocket_url == "ws://127.0.0.1:9600/ws/agent"
    assert config.agent_id.startswith("agent_") and config.workspace_id.startswith("ws_")
    assert TOKEN not in repr(config) and config.credential not in repr(config)


def test_a_paired_credentials_file_stays_in_hub_mode(tmp_path: Path) -> None:
    saved = AgentConfig("http://hub:8000", "ws://hub:8000/ws/agent", "agent_1", "ws_1", "lna_x")
    path = saved.save(tmp_path / "credentials.json")
    loaded = AgentConfig.load(path)
    assert loaded == saved and loaded.mode == "hub" and loaded.direct is None


def test_the_environment_switches_to_direct_mode_without_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LINEUP_MODE", "direct")
    monkeypatch.setenv("LINEUP_DIRECT_TOKEN", TOKEN)
    monkeypatch.setenv("LINEUP_DIRECT_HOST", "127.0.0.1")
    monkeypatch.setenv("LINEUP_DIRECT_PORT", "9700")
    monkeypatch.setenv("LINEUP_DIRECT_PERSON", "ana")
    config = AgentConfig.load(tmp_path / "does-not-exist.json")
    assert config.direct == DirectOptions(TOKEN, "127.0.0.1", 9700, "ana")


def test_direct_mode_from_the_environment_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEUP_MODE", "direct")
    with pytest.raises(ValueError, match="LINEUP_DIRECT_TOKEN"):
        AgentConfig.load()
    monkeypatch.setenv("LINEUP_MODE", "relay")
    with pytest.raises(ValueError, match="LINEUP_MODE"):
        AgentConfig.load()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"mode": "direct"}, "token"),
        ({"mode": "direct", "token": "short"}, "at least 8"),
        ({"mode": "direct", "token": "has space inside"}, "without spaces"),
        ({"mode": "direct", "token": TOKEN, "port": "9527"}, "whole number"),
        ({"mode": "direct", "token": TOKEN, "port": 70000}, "between 0 and 65535"),
        ({"mode": "direct", "token": TOKEN, "host": ""}, "host"),
        ({"mode": "relay", "token": TOKEN}, "mode"),
    ],
)
def test_a_bad_direct_config_is_refused_with_the_reason(data: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        AgentConfig.from_json(data)


def test_a_direct_config_saves_and_loads_as_itself(tmp_path: Path) -> None:
    config = AgentConfig.for_direct(DirectOptions(TOKEN, port=9601, person_name="ana"))
    path = config.save(tmp_path / "credentials.json")
    assert json.loads(path.read_text()) == {
        "mode": "direct",
        "host": "0.0.0.0",
        "port": 9601,
        "token": TOKEN,
        "personName": "ana",
    }
    assert path.stat().st_mode & 0o777 == 0o600
    assert AgentConfig.load(path).direct == config.direct


def test_generated_tokens_are_long_random_and_easy_to_type() -> None:
    tokens = {new_direct_token() for _ in range(50)}
    assert len(tokens) == 50
    for token in tokens:
        assert re.fullmatch(r"([a-z2-9]{4}-){4}[a-z2-9]{4}", token)
        assert not set(token) & set("ilo01")
        assert check_direct_token(token) == token


def test_people_get_addresses_with_the_token_after_the_hash() -> None:
    endpoint = DirectEndpoint("0.0.0.0", 9527, ("http://192.168.1.5:9527", "http://127.0.0.1:9527"))
    assert endpoint.with_token("a b&c") == (
        "http://192.168.1.5:9527/#token=a%20b%26c",
        "http://127.0.0.1:9527/#token=a%20b%26c",
    )
    assert people_urls("127.0.0.1", 9527) == ("http://127.0.0.1:9527",)
    assert people_urls("::1", 9527) == ("http://[::1]:9527",)
    assert people_urls("0.0.0.0", 9527)[-1] == "http://127.0.0.1:9527"
    assert loopback_host("0.0.0.0") == "127.0.0.1"
    assert loopback_host("::") == "::1"
    assert loopback_host("192.168.1.5") == "192.168.1.5"


def test_the_server_logs_redact_a_token_in_an_address() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("192.168.1.9:5000", "GET", f"/inbox?x=1&token={TOKEN}&y=2", "1.1", 200),
        None,
    )
    assert RedactTokens().filter(record)
    message = record.getMessage()
    assert TOKEN not in message
    assert "/inbox?x=1&token=[redacted]&y=2" in message
