"""Shared pieces of the benchmarks: start a real hub process, sign up, pair agents, open
sockets. Benchmarks print figures; they assert nothing about time."""

from __future__ import annotations

import asyncio
import base64
import contextlib
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


_DEFLATE_HUB = """
import sys, uvicorn
from lineup.hub.app import create_app
from lineup.hub.config import Settings
port = int(sys.argv[1])
uvicorn.run(create_app(Settings.from_env(port=port)), host="127.0.0.1", port=port,
            log_level="warning", ws_max_size=1024 * 1024, ws_per_message_deflate=True)
"""


_TRACED_HUB = """
import signal, sys, tracemalloc
from pathlib import Path
tracemalloc.start(int(sys.argv[2]))
out, taken = Path(sys.argv[1]), []
def snapshot(*_):
    taken.append(1)
    tracemalloc.take_snapshot().dump(str(out / f"snapshot-{len(taken)}.bin"))
signal.signal(signal.SIGUSR1, snapshot)
from lineup.cli import main
sys.exit(main(sys.argv[3:]))
"""
"""``lineup`` under tracemalloc: each SIGUSR1 writes a snapshot to the directory given."""


@asynccontextmanager
async def running_hub(
    database_url: str | None = None,
    *,
    redis_url: str | None = None,
    node_id: str | None = None,
    deflate: bool = False,
    tracemalloc: Path | None = None,
    **env: str,
) -> AsyncIterator[Hub]:
    port = free_port()
    home = Path(tempfile.mkdtemp(prefix="lineup-bench-"))
    environment = {**os.environ, "LINEUP_HOME": str(home), **env}
    environment.pop("LINEUP_DATABASE_URL", None)
    environment.pop("LINEUP_REDIS_URL", None)
    if database_url:
        environment["LINEUP_DATABASE_URL"] = database_url
    if redis_url:
        environment["LINEUP_REDIS_URL"] = redis_url
    args = [str(LINEUP), "serve", "--port", str(port), "--log-level", "warning"]
    if node_id:
        args += ["--node-id", node_id]
    if deflate:  # `lineup serve` once served this way: per-message deflate on
        args = [str(ROOT / ".venv" / "bin" / "python"), "-c", _DEFLATE_HUB, str(port)]
    if tracemalloc is not None:
        python = str(ROOT / ".venv" / "bin" / "python")
        args = [python, "-c", _TRACED_HUB, str(tracemalloc), "8", *args[1:]]
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
        args,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            deadline = time.monotonic() + (90 if tracemalloc is None else 300)
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
    await session.post(f"/agents/{result['agentId']}/confirm", {})  # as its person would
    return result


async def connect_agent(
    hub: Hub, credentials: dict[str, Any], last_sequence: int | None = None, **options: Any
) -> Any:
    """An agent socket after its welcome. ``last_sequence`` as a reconnecting agent sends it
    (without one, the hub replays the workspace's whole log to find the agent's downlink)."""
    ws = await websockets.connect(
        f"{hub.ws_url}/ws/agent",
        additional_headers={"Authorization": f"Bearer {credentials['credential']}"},
        max_queue=None,
        **options,
    )
    hello: dict[str, Any] = {"agentVersion": "bench", "runtime": "python", "capabilities": []}
    if last_sequence is not None:
        hello["lastSequence"] = last_sequence
    await ws.send(envelope("agent.hello", hello, credentials["workspaceId"]))
    while json.loads(await ws.recv())["type"] != "agent.welcome":
        pass
    return ws


async def connect_client(
    hub: Hub, session: Session, last_sequence: int = 0, *, batch: bool = False
) -> Any:
    ws = await websockets.connect(
        f"{hub.ws_url}/ws/client?workspaceId={session.workspace_id}",
        additional_headers={"Cookie": f"lineup_session={session.cookie}"},
        max_queue=None,
        max_size=None,
    )
    await ws.send(
        envelope(
            "client.subscribe",
            {"lastSequence": last_sequence, **({"batch": True} if batch else {})},
            session.workspace_id,
        )
    )
    return ws


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


PG_ADMIN_URL = os.environ.get("LINEUP_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


@asynccontextmanager
async def throwaway_pg() -> AsyncIterator[str]:
    """A fresh PostgreSQL database on the local server; yields its URL; dropped after."""
    import asyncpg
    from sqlalchemy.engine import make_url

    name = f"lineup_bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(PG_ADMIN_URL)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    url = make_url(PG_ADMIN_URL).set(drivername="postgresql+asyncpg", database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        admin = await asyncpg.connect(PG_ADMIN_URL)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@asynccontextmanager
async def private_redis() -> AsyncIterator[str]:
    """A redis-server of our own on a free port (never the shared one); yields its URL."""
    port = free_port()
    directory = tempfile.mkdtemp(prefix="lineup-bench-redis-")
    process = subprocess.Popen(  # noqa: ASYNC220
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            directory,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                await asyncio.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


@asynccontextmanager
async def running_cluster(
    nodes: int, database_url: str, redis_url: str | None, **env: str
) -> AsyncIterator[list[Hub]]:
    """``nodes`` hub processes on one database (and Redis); started one after the other."""
    # Every node of a cluster needs the same secret key (32 bytes, base64url).
    env.setdefault("LINEUP_SECRET_KEY", base64.urlsafe_b64encode(os.urandom(32)).decode())
    async with contextlib.AsyncExitStack() as stack:
        hubs = [
            await stack.enter_async_context(
                running_hub(database_url, redis_url=redis_url, node_id=f"n{i + 1}", **env)
            )
            for i in range(nodes)
        ]
        yield hubs


@contextlib.contextmanager
def cpu_capped(pids: list[int], cores: float) -> Any:
    """Each process in ``pids`` held to ``cores`` of CPU time (a cgroup of its own, CFS quota):
    on one machine, nodes that each have a fixed small CPU, as separate machines would. Needs
    root and the cgroup v1 ``cpu`` controller or cgroup v2 with ``cpu`` enabled."""
    period = 100_000
    quota = max(1_000, int(cores * period))
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    if (v1 / "cpu.cfs_quota_us").exists():
        root = v1
        limits = {"cpu.cfs_period_us": str(period), "cpu.cfs_quota_us": str(quota)}
    elif "cpu" in (v2 / "cgroup.controllers").read_text().split():
        root, limits = v2, {"cpu.max": f"{quota} {period}"}
    else:
        raise SystemExit("--node-cpu needs a cgroup cpu controller (and root)")
    made: list[Path] = []
    try:
        for pid in pids:
            group = root / f"lineup-bench-{pid}"
            group.mkdir(exist_ok=True)
            made.append(group)
            for name, value in limits.items():
                (group / name).write_text(value)
            (group / "cgroup.procs").write_text(str(pid))
        yield
    finally:
        for group in made:
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (root / "cgroup.procs").write_text(pid)
            with contextlib.suppress(OSError):
                group.rmdir()


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (2 cores)"


def raise_nofile(wanted: int) -> int:
    """Raise this process's open-file limit (inherited by the hubs it starts)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, wanted), hard) if hard != resource.RLIM_INFINITY else wanted
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


async def latest_sequence(session: Session) -> int:
    response = await session.client.get(
        f"/api/workspaces/{session.workspace_id}/events", params={"limit": 1}
    )
    response.raise_for_status()
    return int(response.json()["latestSequence"])


def process_tree_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1])


async def workspaces(session: Session, count: int) -> list[Session]:
    """``session``'s workspace and ``count - 1`` more of the same person's (sign-ups are
    rate-limited per address; new workspaces are not)."""
    found = [session]
    for i in range(count - 1):
        response = await session.client.post(
            "/api/workspaces", json={"name": f"bench {i}"}, headers={"X-CSRF-Token": session.csrf}
        )
        response.raise_for_status()
        found.append(Session(session.client, response.json()["id"], session.csrf, session.cookie))
    return found
