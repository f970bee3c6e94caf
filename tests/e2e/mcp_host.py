"""`lineup mcp` as the tests run it: paired with a real hub, served over stdio or HTTP."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.e2e.processes import LINEUP, free_port
from tests.support.people import Person
from tests.support.waiting import until


@dataclass
class PairedServer:
    """An MCP server identity, paired and confirmed by ``person``."""

    home: Path
    credentials: Path
    agent_id: str

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "LINEUP_AGENT_HOME": str(self.home)}

    def args(self, *extra: str) -> list[str]:
        return ["mcp", "--credentials", str(self.credentials), "--progress-every", "0.2", *extra]


def pair_mcp_server(hub_url: str, person: Person, home: Path, name: str = "Codex") -> PairedServer:
    code = person.send("/pairing-codes", {}, 201)["code"]
    credentials = home / "credentials.json"
    subprocess.run(
        [
            LINEUP,
            "mcp",
            "pair",
            "--hub",
            hub_url,
            "--code",
            code,
            "--name",
            name,
            "--credentials",
            str(credentials),
        ],
        check=True,
        env={**os.environ, "LINEUP_AGENT_HOME": str(home)},
        capture_output=True,
        timeout=60,
    )
    agent_id = json.loads(credentials.read_text())["agentId"]
    person.confirm_agent(agent_id)
    return PairedServer(home, credentials, agent_id)


@contextmanager
def http_server(paired: PairedServer) -> Iterator[str]:
    """``lineup mcp --transport http``; yields its endpoint."""
    port = free_port()
    log = (paired.home / "mcp-http.log").open("ab")
    process = subprocess.Popen(
        [LINEUP, *paired.args("--transport", "http", "--port", str(port))],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=paired.env,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    def listening() -> bool:
        assert process.poll() is None, (paired.home / "mcp-http.log").read_text()
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
        except httpx.HTTPError:
            return False
        return True

    try:
        until(listening, "lineup mcp to listen")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
