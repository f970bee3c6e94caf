"""Pairing (seed 001 §7.1): a one-time code becomes a credential saved for the owner only."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from lineup.protocol.errors import NotFound, RateLimited
from lineup.sdk import AgentConfig, PairingFailed, pair

HUB = "http://127.0.0.1:8000"
ANSWER = {
    "agentId": "agent_1",
    "workspaceId": "ws_1",
    "credential": "lnp_very_secret",
    "websocketUrl": "ws://127.0.0.1:8000/ws/agent",
}


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def _answering(status: int, body: dict[str, Any], seen: list[httpx.Request] | None = None):
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, json=body)

    return handler


async def test_pairing_redeems_the_code_and_saves_credentials_readable_only_by_the_owner(
    tmp_path: Path,
):
    seen: list[httpx.Request] = []
    path = tmp_path / "agent" / "credentials.json"
    old_umask = os.umask(0)  # even a permissive umask must not widen the file's mode
    try:
        async with _client(_answering(200, ANSWER, seen)) as client:
            config = await pair(
                HUB + "/",
                " ABCD-EFGH ",
                name="my-agent",
                agent_version="1.0",
                credentials_path=path,
                client=client,
            )
    finally:
        os.umask(old_umask)

    assert str(seen[0].url) == f"{HUB}/api/pairing/redeem"
    assert json.loads(seen[0].content) == {
        "code": "ABCD-EFGH",
        "name": "my-agent",
        "runtime": "python",
        "agentVersion": "1.0",
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "hubUrl": HUB,
        "websocketUrl": "ws://127.0.0.1:8000/ws/agent",
        "agentId": "agent_1",
        "workspaceId": "ws_1",
        "credential": "lnp_very_secret",
    }
    assert AgentConfig.load(path) == config
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"]  # no temp file left


async def test_pairing_saves_under_lineup_agent_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LINEUP_AGENT_HOME", str(tmp_path / "home"))
    async with _client(_answering(200, ANSWER)) as client:
        config = await pair(HUB, "ABCD-EFGH", name="my-agent", client=client)
    assert AgentConfig.load() == config
    assert (tmp_path / "home" / "credentials.json").exists()


async def test_pairing_again_replaces_the_saved_credentials(tmp_path: Path):
    path = tmp_path / "credentials.json"
    async with _client(_answering(200, ANSWER)) as client:
        await pair(HUB, "ABCD-EFGH", name="a", credentials_path=path, client=client)
    async with _client(_answering(200, {**ANSWER, "credential": "lnp_new"})) as client:
        await pair(HUB, "WXYZ-1234", name="a", credentials_path=path, client=client)
    assert AgentConfig.load(path).credential == "lnp_new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_wrong_or_used_code_is_not_found_with_the_hubs_diagnostic_and_next_step(
    tmp_path: Path,
):
    body = {
        "error": {
            "code": "not_found",
            "message": "This pairing code is wrong, used or expired.",
            "details": {
                "diagnostic": "LNP-PAIR-INVALID",
                "nextStep": "Create a new code on the Agents page.",
            },
        }
    }
    path = tmp_path / "credentials.json"
    async with _client(_answering(404, body)) as client:
        with pytest.raises(PairingFailed) as caught:
            await pair(HUB, "ABCD-EFGH", name="a", credentials_path=path, client=client)
    failure = caught.value
    assert failure.code == "not_found"
    assert isinstance(failure.error, NotFound)
    assert failure.diagnostic == "LNP-PAIR-INVALID"
    assert failure.next_step == "Create a new code on the Agents page."
    assert "LNP-PAIR-INVALID" in str(failure)
    assert "Create a new code" in str(failure)
    assert not failure.retryable
    assert not path.exists()


async def test_a_throttled_pairing_is_retryable_and_says_when(tmp_path: Path):
    body = {
        "error": {
            "code": "rate_limited",
            "message": "Too many attempts.",
            "details": {"retryAfterMs": 1500, "diagnostic": "LNP-PAIR-THROTTLED"},
        }
    }
    async with _client(_answering(429, body)) as client:
        with pytest.raises(PairingFailed) as caught:
            await pair(HUB, "ABCD-EFGH", name="a", credentials_path=tmp_path / "c", client=client)
    assert isinstance(caught.value.error, RateLimited)
    assert caught.value.retryable
    assert caught.value.retry_after == 1.5


async def test_an_unreachable_hub_is_unavailable_with_a_diagnostic(tmp_path: Path):
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with _client(unreachable) as client:
        with pytest.raises(PairingFailed) as caught:
            await pair(HUB, "ABCD-EFGH", name="a", credentials_path=tmp_path / "c", client=client)
    assert caught.value.code == "unavailable"
    assert caught.value.diagnostic == "LNP-PAIR-UNREACHABLE"


async def test_an_error_without_the_error_envelope_still_gets_a_code_from_the_status(
    tmp_path: Path,
):
    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="Bad gateway")

    async with _client(broken) as client:
        with pytest.raises(PairingFailed) as caught:
            await pair(HUB, "ABCD-EFGH", name="a", credentials_path=tmp_path / "c", client=client)
    assert caught.value.code == "unavailable"


async def test_a_websocket_path_is_resolved_against_the_hub_address(tmp_path: Path):
    answer = {**ANSWER, "websocketUrl": "/ws/agent"}
    async with _client(_answering(200, answer)) as client:
        config = await pair(
            "https://lineup.example.org",
            "ABCD-EFGH",
            name="a",
            credentials_path=tmp_path / "c",
            client=client,
        )
    assert config.websocket_url == "wss://lineup.example.org/ws/agent"


def test_the_credential_is_not_shown_in_the_config_repr():
    config = AgentConfig(
        hub_url=HUB,
        websocket_url="ws://x/ws/agent",
        agent_id="agent_1",
        workspace_id="ws_1",
        credential="lnp_very_secret",
    )
    assert "lnp_very_secret" not in repr(config)


def test_loading_missing_credentials_says_to_pair_first(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="Pair this agent first"):
        AgentConfig.load(tmp_path / "nothing.json")


def test_loading_incomplete_credentials_names_what_is_missing(tmp_path: Path):
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"hubUrl": HUB, "agentId": "a"}))
    with pytest.raises(ValueError, match="websocketUrl"):
        AgentConfig.load(path)
