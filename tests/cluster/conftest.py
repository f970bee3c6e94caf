"""Cluster fixtures: real ``lineup serve`` nodes on loopback ports sharing a throwaway
PostgreSQL database and a private redis-server (never the shared one: tests here restart it)."""

from __future__ import annotations

import secrets
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from lineup.store.sealed import new_key_text
from tests.e2e.processes import HubProcess, free_port
from tests.support.databases import PG_ADMIN_URL, pg_url
from tests.support.waiting import until


def _admin(sql: str) -> None:
    import asyncio

    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run())


@dataclass
class RedisServer:
    directory: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        until(self._ready, "redis-server to answer")
        return self

    def _ready(self) -> bool:
        import socket

        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError("redis-server exited")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_database() -> Iterator[str]:
    name = f"lineup_t_{secrets.token_hex(6)}"
    _admin(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url(name)
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Node:
    name: str
    hub: HubProcess

    @property
    def url(self) -> str:
        return self.hub.url

    @property
    def ws_url(self) -> str:
        return self.hub.url.replace("http://", "ws://")

    def cluster(self) -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(f"{self.url}/readyz/cluster", timeout=5).json()
        return body

    def holds(self, lease: str) -> bool:
        try:
            return lease in self.cluster()["leases"]
        except httpx.TransportError:
            return False

    def metric(self, name: str) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=5).text
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total


@pytest.fixture
def start_cluster(
    pg_database: str, redis_server: RedisServer, tmp_path: Path
) -> Iterator[Callable[..., list[Node]]]:
    nodes: list[Node] = []
    secret_key = new_key_text()  # every node of a cluster needs the same one

    def start(names: tuple[str, ...] = ("a", "b", "c"), **env: str) -> list[Node]:
        started = []
        for name in names:
            home = tmp_path / f"node-{name}"
            home.mkdir()
            hub = HubProcess(
                home,
                pg_database,
                env={
                    "LINEUP_REDIS_URL": redis_server.url,
                    "LINEUP_NODE_ID": name,
                    "LINEUP_LEASE_TTL": "2",
                    "LINEUP_CLUSTER_CHECK_INTERVAL": "0.5",
                    "LINEUP_PAIRING_ATTEMPTS_PER_IP": "1000",
                    "LINEUP_SECRET_KEY": secret_key,
                    **env,
                },
            )
            node = Node(name, hub)
            nodes.append(node)
            hub.start()
            started.append(node)
        return started

    yield start
    for node in nodes:
        node.hub.stop()
    for node in nodes:
        if node.hub.process is not None and node.hub.process.returncode not in (0, None, -9):
            print(f"node {node.name} log:\n{node.hub.tail()}")
