"""An agent rotates its own credential: the new one is asked for with the old and saved for
the owner only, in place of the old one."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx
import pytest

from lineup.protocol.errors import Unauthenticated, Unavailable
from lineup.sdk import AgentConfig, rotate_credential

CONFIG = AgentConfig(
    hub_url="http://127.0.0.1:8000",
    websocket_url="ws://127.0.0.1:8000/ws/agent",
    agent_id="agent_1",
    workspace_id="ws_1",
    credential="lna_old",
)


async def test_rotation_sends_the_old_credential_and_saves_the_new_one(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = {
            "agentId": "agent_1",
            "credential": "lna_new",
            "rotatedAt": "2027-01-01T00:00:00.000Z",
        }
        return httpx.Response(200, json=body)

    path = tmp_path / "credentials.json"
    CONFIG.save(path)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        rotated = await rotate_credential(CONFIG, credentials_path=path, client=client)
    assert seen[0].url.path == "/api/agent/credential/rotate"
    assert seen[0].headers["Authorization"] == "Bearer lna_old"
    assert rotated.credential == "lna_new" and rotated.agent_id == "agent_1"
    assert json.loads(path.read_text())["credential"] == "lna_new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert AgentConfig.load(path) == rotated


async def test_a_refused_credential_is_reported_with_the_hubs_code_and_nothing_is_saved(
    tmp_path: Path,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        error = {"code": "unauthenticated", "message": "This agent's access was revoked."}
        return httpx.Response(401, json={"error": {**error, "details": {}}})

    path = tmp_path / "credentials.json"
    CONFIG.save(path)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(Unauthenticated):
            await rotate_credential(CONFIG, credentials_path=path, client=client)
    assert json.loads(path.read_text())["credential"] == "lna_old"


async def test_an_unreachable_hub_is_unavailable(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(Unavailable):
            await rotate_credential(CONFIG, credentials_path=tmp_path / "c.json", client=client)
