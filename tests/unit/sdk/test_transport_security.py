"""The SDK's side of transport security, without a network: plain text to another machine is
refused before a byte leaves, and the pin is saved with the credentials."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from lineup.sdk import AgentConfig, InsecureConnection, TlsOptions, WebSocketTransport, pair
from lineup.sdk._tls import TlsTrust

PIN = ":".join(["AB"] * 32)
ANSWER = {
    "agentId": "agent_1",
    "workspaceId": "ws_1",
    "credential": "lna_very_secret",
    "websocketUrl": "wss://hub.example/ws/agent",
    "tlsFingerprint": PIN,
}


def _counting(seen: list[httpx.Request]) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=ANSWER)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_the_websocket_transport_refuses_plain_ws_to_another_machine_before_connecting():
    transport = WebSocketTransport()  # 192.0.2.1 is a documentation address: never reached
    with pytest.raises(InsecureConnection) as refused:
        await transport.connect("ws://192.0.2.1:8000/ws/agent", {"Authorization": "Bearer x"})
    assert refused.value.code == "plain_text_to_remote_host"
    assert refused.value.url == "ws://192.0.2.1:8000/ws/agent"


async def test_pairing_over_plain_http_to_another_machine_sends_nothing(tmp_path: Path):
    seen: list[httpx.Request] = []
    async with _counting(seen) as client:
        with pytest.raises(InsecureConnection) as refused:
            await pair("http://hub.example", "ABCD-EFGH", name="a", client=client)
    assert refused.value.code == "plain_text_to_remote_host"
    assert seen == []


async def test_plain_text_to_another_machine_goes_through_when_explicitly_allowed(
    tmp_path: Path,
):
    seen: list[httpx.Request] = []
    path = tmp_path / "credentials.json"
    async with _counting(seen) as client:
        config = await pair(
            "http://hub.example",
            "ABCD-EFGH",
            name="a",
            client=client,
            allow_insecure=True,
            credentials_path=path,
        )
    assert len(seen) == 1
    assert config.tls.allow_insecure
    assert json.loads(path.read_text())["allowInsecure"] is True
    assert config.tls.fingerprint is None  # an answer over plain text pins nothing


async def test_a_pin_given_at_pairing_is_saved_with_the_credentials_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("LINEUP_TLS_FINGERPRINT", raising=False)
    config = AgentConfig(
        "https://hub.example",
        "wss://hub.example/ws/agent",
        "agent_1",
        "ws_1",
        "lna_x",
        tls=TlsOptions(fingerprint=PIN.lower().replace(":", "")),
    )
    path = config.save(tmp_path / "credentials.json")
    assert json.loads(path.read_text())["tlsFingerprint"] == PIN
    assert AgentConfig.load(path).tls.fingerprint == PIN


def test_the_environment_overrides_the_saved_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    other = ":".join(["CD"] * 32)
    config = AgentConfig(
        "https://h", "wss://h/ws/agent", "agent_1", "ws_1", "lna_x", tls=TlsOptions(PIN)
    )
    path = config.save(tmp_path / "credentials.json")
    monkeypatch.setenv("LINEUP_TLS_FINGERPRINT", other)
    assert AgentConfig.load(path).tls.fingerprint == other


def test_a_malformed_pin_is_refused_when_given():
    with pytest.raises(ValueError, match="SHA-256"):
        TlsOptions(fingerprint="not-a-fingerprint")


async def test_a_secure_url_needs_no_allowance_and_loopback_plain_text_gets_no_context():
    trust = TlsTrust(TlsOptions())
    assert await trust.context("ws://127.0.0.1:8000/ws/agent") is None
    assert await trust.context("wss://hub.example/ws/agent") is not None


async def test_a_self_signed_hubs_pairing_answer_pins_its_fingerprint_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("LINEUP_TLS_FINGERPRINT", raising=False)
    seen: list[httpx.Request] = []
    path = tmp_path / "credentials.json"
    async with _counting(seen) as client:
        config = await pair(
            "https://hub.example", "ABCD-EFGH", name="a", client=client, credentials_path=path
        )
    assert config.tls.fingerprint == PIN
    assert AgentConfig.load(path).tls.fingerprint == PIN
