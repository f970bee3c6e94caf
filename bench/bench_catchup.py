"""A person's app that missed 100,000 events reconnects: time until it has them all and is
live again (issue 7). Prints the figure in docs/benchmarks.md.

    .venv/bin/python bench/bench_catchup.py [--missed 100000] [--configs sqlite,pg]

An app subscribes, is caught up, and disconnects; agents then commit ``--missed`` events
(real traffic through the agents' socket); the app reconnects with its last sequence and the
clock runs from the ``client.subscribe`` until the ``client.caught_up`` frame that follows
the last missed event. Every event is checked to arrive once, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from _harness import (
    Hub,
    connect_agent,
    connect_client,
    envelope,
    latest_sequence,
    load_average,
    pair,
    running_hub,
    sign_up,
    throwaway_pg,
)


async def _fill(hub: Hub, session: Any, count: int, agents: int = 4, window: int = 256) -> None:
    """Commit ``count`` progress reports through ``agents`` pipelining agents."""
    per = count // agents
    links = []
    for i in range(agents):
        creds = await pair(hub, session, f"fill-{i}")
        task = await session.post(
            "/tasks", {"title": f"fill {i}", "targetAgentId": creds["agentId"]}
        )
        links.append((creds, task["task"]["id"]))
    after = await latest_sequence(session)

    async def one(creds: dict[str, Any], task_id: str, n: int) -> None:
        ws = await connect_agent(hub, creds, after, max_size=None)
        ws_id = creds["workspaceId"]
        await ws.send(envelope("task.accepted", {"taskId": task_id}, ws_id, taskId=task_id))
        acked = -1  # the task.accepted
        sent = 0
        in_flight = 1

        while acked < n:
            while in_flight < window and sent < n:
                sent += 1
                in_flight += 1
                await ws.send(
                    envelope(
                        "task.status_changed",
                        {"status": "running", "progress": sent % 100},
                        ws_id,
                        taskId=task_id,
                    )
                )
            frame = json.loads(await ws.recv())
            if frame.get("type") == "ack":
                in_flight -= 1
                acked += 1
            elif frame.get("type") == "error":
                raise RuntimeError(frame)
        await ws.close()

    await asyncio.gather(*(one(c, t, per) for c, t in links))


async def _quiet(hub: Hub, below: float = 0.05, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        start = hub.cpu_seconds()
        await asyncio.sleep(1)
        if hub.cpu_seconds() - start < below:
            return


async def measure(label: str, hub: Hub, missed: int) -> None:
    session = await sign_up(hub)
    app = await connect_client(hub, session)
    while json.loads(await app.recv())["type"] != "client.caught_up":
        pass
    await app.close()
    last_seen = await latest_sequence(session)
    filled_at = time.monotonic()
    await _fill(hub, session, missed)
    latest = await latest_sequence(session)
    print(
        f"[{label}] committed {latest - last_seen:,} events in "
        f"{time.monotonic() - filled_at:.0f} s while the app was away",
        flush=True,
    )
    # the hub's own background work on the fresh events (the notification worker's pass
    # over them) is done before the app comes back, as it would be after a real absence
    await _quiet(hub)
    started = time.perf_counter()
    app = await connect_client(hub, session, last_seen)
    expected = last_seen + 1
    first_event = None
    while True:
        frame = json.loads(await app.recv())
        sequence = frame.get("sequence")
        if frame.get("type") == "client.caught_up":
            if frame["payload"]["sequence"] >= latest:
                break
        elif sequence is not None:
            if first_event is None:
                first_event = time.perf_counter() - started
            if sequence != expected:
                raise AssertionError(f"got {sequence}, expected {expected}")
            expected += 1
    elapsed = time.perf_counter() - started
    await app.close()
    await session.client.aclose()
    received = expected - 1 - last_seen
    print(
        f"[{label}] reconnected after missing {received:,} events: caught up in {elapsed:.2f} s "
        f"({received / elapsed:,.0f} events/s; first event after {first_event or 0:.3f} s); "
        f"{load_average()}",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--missed", type=int, default=100_000)
    parser.add_argument("--configs", default="sqlite,pg")
    args = parser.parse_args()
    env = {"LINEUP_HEARTBEAT_INTERVAL": "60", "LINEUP_PAIRING_ATTEMPTS_PER_IP": "1000"}
    for config in args.configs.split(","):
        if config == "sqlite":
            async with running_hub(None, **env) as hub:
                await measure("1 node, SQLite", hub, args.missed)
        elif config == "pg":
            async with throwaway_pg() as url, running_hub(url, **env) as hub:
                await measure("1 node, PostgreSQL", hub, args.missed)
        else:
            raise SystemExit(f"unknown configuration {config!r}")


if __name__ == "__main__":
    asyncio.run(main())
