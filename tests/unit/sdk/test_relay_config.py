"""Relay mode in the SDK's configuration: the credentials file or the environment alone
switch an agent to it, and the IM token stays out of repr()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineup.sdk import AgentConfig, RelayOptions

TOKEN = "im-token-of-the-agent-123"
FILE = {"mode": "relay", "server": "wss://im.example.org/", "api": "https://im.example.org/api",
        "uid": "bot", "token": TOKEN, "people": ["ana", "ben"]}  # fmt: skip


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODE", "RELAY_SERVER", "RELAY_API", "RELAY_UID", "RELAY_TOKEN",
                 "RELAY_PEOPLE"):  # fmt: skip
        monkeypatch.delenv(f"LINEUP_{name}", raising=False)


def test_a_credentials_file_in_relay_mode_gives_a_relay_config(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps(FILE))
    config = AgentConfig.load(path)
    assert config.mode == "relay" and config.hosted
    assert config.relay is not None and config.relay.people == ("ana", "ben")
    assert TOKEN not in repr(config)
    assert config.to_json() == FILE


def test_the_environment_selects_relay_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEUP_MODE", "relay")
    monkeypatch.setenv("LINEUP_RELAY_SERVER", "ws://127.0.0.1:5200/")
    monkeypatch.setenv("LINEUP_RELAY_API", "http://127.0.0.1:8090")
    monkeypatch.setenv("LINEUP_RELAY_UID", "bot")
    monkeypatch.setenv("LINEUP_RELAY_TOKEN", TOKEN)
    monkeypatch.setenv("LINEUP_RELAY_PEOPLE", "ana, ben")
    config = AgentConfig.load()
    assert config.relay == RelayOptions("ws://127.0.0.1:5200/", "http://127.0.0.1:8090", "bot",
                                        TOKEN, ("ana", "ben"))  # fmt: skip


def test_relay_mode_without_its_token_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEUP_MODE", "relay")
    monkeypatch.setenv("LINEUP_RELAY_SERVER", "ws://127.0.0.1:5200/")
    with pytest.raises(ValueError, match="LINEUP_RELAY_TOKEN"):
        AgentConfig.load()


@pytest.mark.parametrize(
    ("change", "problem"),
    [({"people": []}, "at least one"), ({"people": ["bot"]}, "own uid"),
     ({"server": "http://x"}, "ws://"), ({"uid": "a/b"}, "uid")],
)  # fmt: skip
def test_a_relay_config_that_cannot_work_is_refused(
    tmp_path: Path, change: dict[str, object], problem: str
) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({**FILE, **change}))
    with pytest.raises(ValueError, match=problem):
        AgentConfig.load(path)
