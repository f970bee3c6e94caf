from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from lineup.sdk import Agent


@contextlib.asynccontextmanager
async def running(agent: Agent) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``agent`` for the block; stop it after, re-raising anything ``run`` raised."""
    task = asyncio.create_task(agent.run())
    try:
        yield task
    finally:
        agent.stop()
        async with asyncio.timeout(5):
            await task


async def crash(task: asyncio.Task[None]) -> None:
    """Kill a running agent abruptly: no goodbye, no flush; only committed state survives.

    Cancelling ``run`` cancels its handlers without letting them report anything, then closes
    the SQLite file, as a killed process would leave it.
    """
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
