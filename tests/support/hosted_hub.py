"""A hub with hosted agents, in this process on a free port: composed with
:class:`~lineup.engines.hosting.EngineHosting` as ``lineup serve`` composes it (the hosted
agents connect to it over loopback like any agent), and a person who talks to it through
the HTTP API."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from lineup.engines.hosting import EngineHosting
from lineup.hub import Settings, create_app
from lineup.hub.state import HubState
from lineup.sdk import Backoff
from tests.support.waiting import until_async

API_KEY = "sk-test-9f3c2a7e51d84b06"


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Running:
    url: str
    hosting: EngineHosting
    app: Any

    @property
    def state(self) -> HubState:
        state: HubState = self.app.state.hub
        return state


@contextlib.asynccontextmanager
async def running_hub(settings: Settings, home: Path, **hosting: Any) -> AsyncIterator[Running]:
    """The hub, serving until the block ends; ``hosting`` are EngineHosting's options (the
    engines, the cap, …). Idle engines are reaped only when a test says so."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    engines = EngineHosting(
        url,
        home / "engines",
        engine_roots=settings.engine_roots,
        **{"reap_interval": 3600.0, "backoff": Backoff(initial=0.05, maximum=0.2), **hosting},
    )
    app = create_app(settings, engine_host=engines)
    server = _QuietServer(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await until_async(lambda: server.started, "the hub to serve")
        yield Running(url, engines, app)
    finally:
        server.should_exit = True
        await task
        sock.close()


@dataclass
class Person:
    http: httpx.AsyncClient
    csrf: str
    workspace_id: str

    async def get(self, path: str) -> Any:
        response = await self.http.get(f"/api/workspaces/{self.workspace_id}{path}")
        assert response.status_code == 200, response.text
        return response.json()

    async def post(self, path: str, body: dict[str, Any], status: int = 200) -> Any:
        response = await self.http.post(
            f"/api/workspaces/{self.workspace_id}{path}",
            json=body,
            headers={"X-CSRF-Token": self.csrf},
        )
        assert response.status_code == status, response.text
        return response.json() if response.content else None


async def sign_in(http: httpx.AsyncClient, first: bool) -> Person:
    body = {"email": "ana@example.test", "password": "long enough pw"}
    if first:
        response = await http.post("/api/auth/signup", json={**body, "displayName": "Ana"})
        assert response.status_code == 201, response.text
    else:
        response = await http.post("/api/auth/signin", json=body)
        assert response.status_code == 200, response.text
    data = response.json()
    workspace = data.get("workspaceId") or data["workspaces"][0]["id"]
    return Person(http, data["csrfToken"], workspace)


async def agent_replies(person: Person, conversation_id: str) -> list[str]:
    page = await person.get(f"/conversations/{conversation_id}/messages?limit=200")
    return [m["content"] for m in page["messages"] if m["author"]["kind"] == "agent"]


async def reply_containing(person: Person, conversation_id: str, text: str) -> str:
    async def found() -> str | None:
        return next((r for r in await agent_replies(person, conversation_id) if text in r), None)

    try:
        result: str = await until_async(found, f"an agent reply containing {text!r}")
    except AssertionError as missing:
        replies = await agent_replies(person, conversation_id)
        raise AssertionError(f"{missing}; the replies were {replies[-6:]!r}") from None
    return result


async def pending_approval(person: Person, conversation_id: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        page = await person.get(f"/conversations/{conversation_id}/messages?limit=200")
        pending = [i for i in page["interactions"] if i["status"] == "requested"]
        return pending[0] if pending else None

    result: dict[str, Any] = await until_async(found, "the engine's approval card")
    return result


def arguments_of(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def files_under(directory: Path) -> Iterator[Path]:
    for root, _dirs, names in os.walk(directory):
        for name in names:
            yield Path(root) / name
