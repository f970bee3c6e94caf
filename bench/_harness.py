"""Shared pieces of the benchmarks: start a real hub process, sign up, pair agents, open
sockets. Benchmarks print figures; they assert nothing about time."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]
LINEUP = ROOT / ".venv" / "bin" / "lineup"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def envelope(type_: str, payload: dict[str, Any], workspace_id: str, **extra: Any) -> str:
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


@dataclass
class Hub:
    url: str
    process: subprocess.Popen[bytes]
    home: Path

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://")

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1])

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks


@asynccontextmanager
async def running_hub(database_url: str | None = None, **env: str) -> AsyncIterator[Hub]:
    port = free_port()
    home = Path(tempfile.mkdtemp(prefix="lineup-bench-"))
    environment = {**os.environ, "LINEUP_HOME": str(home), **env}
    if database_url:
        environment["LINEUP_DATABASE_URL"] = database_url
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
        [str(LINEUP), "serve", "--port", str(port), "--log-level", "warning"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if (await client.get(f"{url}/readyz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the hub did not start")
                await asyncio.sleep(0.05)
        yield Hub(url, process, home)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


@dataclass
class Session:
    client: httpx.AsyncClient
    workspace_id: str
    csrf: str
    cookie: str

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        response = await self.client.post(
            f"/api/workspaces/{self.workspace_id}{path}",
            json=body,
            headers={"X-CSRF-Token": self.csrf},
        )
        response.raise_for_status()
        return response.json()


async def sign_up(hub: Hub) -> Session:
    client = httpx.AsyncClient(base_url=hub.url, timeout=30)
    response = await client.post(
        "/api/auth/signup",
        json={"email": f"{uuid.uuid4().hex}@bench.test", "password": "benchmark password"},
    )
    response.raise_for_status()
    body = response.json()
    return Session(client, body["workspaceId"], body["csrfToken"], client.cookies["lineup_session"])


async def pair(hub: Hub, session: Session, name: str) -> dict[str, Any]:
    code = (await session.post("/pairing-codes", {}))["code"]
    response = await session.client.post("/api/pairing/redeem", json={"code": code, "name": name})
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


async def connect_agent(hub: Hub, credentials: dict[str, Any]) -> Any:
    ws = await websockets.connect(
        f"{hub.ws_url}/ws/agent",
        additional_headers={"Authorization": f"Bearer {credentials['credential']}"},
        max_queue=None,
    )
    await ws.send(
        envelope(
            "agent.hello",
            {"agentVersion": "bench", "runtime": "python", "capabilities": []},
            credentials["workspaceId"],
        )
    )
    while json.loads(await ws.recv())["type"] != "agent.welcome":
        pass
    return ws


async def connect_client(hub: Hub, session: Session, last_sequence: int = 0) -> Any:
    ws = await websockets.connect(
        f"{hub.ws_url}/ws/client?workspaceId={session.workspace_id}",
        additional_headers={"Cookie": f"lineup_session={session.cookie}"},
        max_queue=None,
        max_size=None,
    )
    await ws.send(
        envelope("client.subscribe", {"lastSequence": last_sequence}, session.workspace_id)
    )
    return ws


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]
