"""``lineup mcp``: pair once, then serve MCP over stdio or streamable HTTP while the agent
stays connected to the hub.

One server per agent identity: the agent's state file (outbox, journal, answers) is held by
one process at a time, so a second ``lineup mcp`` with the same credentials refuses to start.
Several hosts share one identity through one HTTP server, or each pairs its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from lineup.mcp._person import PersonLink
from lineup.mcp._server import DEFAULT_WAIT, PROGRESS_EVERY, build_server
from lineup.sdk import Agent, AgentConfig, agent_home

logger = logging.getLogger("lineup.mcp")

Transport = Literal["stdio", "http"]


def default_credentials() -> Path:
    """``$LINEUP_AGENT_HOME/mcp/credentials.json``: the MCP server's own identity, apart from
    any Python SDK agent of the same machine."""
    return agent_home() / "mcp" / "credentials.json"


class AlreadyServing(RuntimeError):
    """Another ``lineup mcp`` holds this agent identity."""


@contextlib.contextmanager
def holding(state_dir: Path) -> Iterator[None]:
    state_dir.mkdir(parents=True, exist_ok=True)
    lock = (state_dir / "mcp.lock").open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise AlreadyServing(
            f"Another `lineup mcp` serves this agent already (its state: {state_dir}). Run one "
            "server per agent identity: share it over --transport http, or pair another."
        ) from None
    try:
        yield
    finally:
        lock.close()


async def serve(
    credentials: Path,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    wait: float = DEFAULT_WAIT,
    progress_every: float = PROGRESS_EVERY,
    elicitation: bool = True,
) -> None:
    config = AgentConfig.load(credentials)
    state_dir = Path(os.environ.get("LINEUP_MCP_STATE") or agent_home() / "state" / config.agent_id)
    with holding(state_dir):
        agent = Agent(config, name="lineup-mcp", runtime="mcp", state_dir=state_dir)
        person = PersonLink(agent)
        server = build_server(
            person, wait=wait, progress_every=progress_every, elicitation=elicitation
        )
        running = asyncio.create_task(agent.run(), name="lineup-mcp-agent")
        try:
            if transport == "stdio":
                await server.run_stdio_async()
            else:
                await server.run_streamable_http_async(host=host, port=port)
        finally:
            agent.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(running, timeout=10)
