"""An SDK agent's own log lines reach the Agents screen: the failed attempts while the hub was
down arrive once it is back, and what the adapter marked sensitive never leaves the agent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from lineup.hub import Settings, create_app
from lineup.sdk import Agent, AgentConfig, Backoff, TaskContext, WebSocketTransport, pair
from lineup.sdk._transport import Connection
from tests.support.waiting import until_async

API_KEY = "sk-live-4f9a8b7c6d5e"


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serving(settings: Settings, port: int) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    server = _QuietServer(
        uvicorn.Config(
            create_app(replace(settings, port=port)),
            log_config=None,
            log_level="warning",
            lifespan="on",
        )
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Counting(WebSocketTransport):
    """The real WebSocket transport, counting the attempts that failed."""

    failures = 0

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        try:
            return await super().connect(url, headers)
        except Exception:
            self.failures += 1
            raise


async def test_an_agent_that_could_not_reach_the_hub_shows_why_once_it_connects(
    settings: Settings, tmp_path: Path
) -> None:
    port = _free_port()
    async with serving(settings, port) as url, httpx.AsyncClient(base_url=url) as http:
        signed_up = await http.post(
            "/api/auth/signup",
            json={"email": "ana@example.test", "password": "long enough pw", "displayName": "Ana"},
        )
        assert signed_up.status_code == 201, signed_up.text
        csrf, ws = signed_up.json()["csrfToken"], signed_up.json()["workspaceId"]
        code = (
            await http.post(
                f"/api/workspaces/{ws}/pairing-codes", json={}, headers={"X-CSRF-Token": csrf}
            )
        ).json()["code"]
        await pair(url, code, name="builder", credentials_path=tmp_path / "creds.json")
        config = AgentConfig.load(tmp_path / "creds.json")
        confirmed = await http.post(
            f"/api/workspaces/{ws}/agents/{config.agent_id}/confirm",
            json={},
            headers={"X-CSRF-Token": csrf},
        )
        assert confirmed.status_code == 200, confirmed.text
        cookies = dict(http.cookies)

    transport = Counting()
    agent = Agent(
        config,
        state_dir=tmp_path / "state",
        heartbeat_interval=3600.0,
        backoff=Backoff(initial=0.02, maximum=0.05),
        answer_timeout=10.0,
        transport=transport,
        sensitive_fields=("api_key",),
        diagnostic_loggers=("builder",),
        diagnostics_interval=0.05,
    )

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        logging.getLogger("builder").warning(
            "calling the model with %s", API_KEY, extra={"api_key": API_KEY, "model": "m1"}
        )
        return "done"

    async with agent:
        await until_async(lambda: transport.failures >= 2, "two failed attempts")
        async with (
            serving(settings, port) as url,
            httpx.AsyncClient(base_url=url, cookies=cookies) as http,
        ):
            base = f"/api/workspaces/{ws}"

            async def lines() -> list[dict[str, Any]]:
                response = await http.get(f"{base}/agents/{config.agent_id}/logs")
                assert response.status_code == 200, response.text
                return list(response.json()["lines"])

            async def connected() -> list[dict[str, Any]] | None:
                found = await lines()
                return found if any("connected to" in x["message"] for x in found) else None

            shown = await until_async(connected, "the agent's lines")
            failed = [x for x in shown if x["message"].startswith("cannot reach the hub")]
            assert len(failed) >= 2, shown
            assert all(x["level"] == "warning" and x["logger"] == "lineup.sdk" for x in failed)
            assert any("starting" in x["message"] and "LineUp SDK" in x["message"] for x in shown)
            # newest first, and the failures came before the connection
            messages = [x["message"] for x in shown]
            connected_at = next(i for i, m in enumerate(messages) if "connected to" in m)
            assert connected_at < messages.index(failed[0]["message"])

            created = await http.post(
                f"{base}/tasks",
                json={"title": "Call the model", "targetAgentId": config.agent_id},
                headers={"X-CSRF-Token": csrf},
            )
            assert created.status_code == 201, created.text

            async def model_line() -> dict[str, Any] | None:
                return next((x for x in await lines() if x["logger"] == "builder"), None)

            line = await until_async(model_line, "the adapter's own line")
            assert line["fields"] == {"api_key": "[redacted]", "model": "m1"}
            assert line["message"] == "calling the model with [redacted]"
            everything = (await http.get(f"{base}/agents/{config.agent_id}/logs")).text
            assert API_KEY not in everything
            assert config.credential not in everything
