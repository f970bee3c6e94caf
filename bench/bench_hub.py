"""One hub node: durable events/s, agent → app latency at a steady rate, memory per idle
agent connection. Prints the figures quoted in docs/benchmarks.md.

    .venv/bin/python bench/bench_hub.py [--database-url URL] [--seconds 5] [--idle 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from _harness import (
    Hub,
    Session,
    connect_agent,
    connect_client,
    envelope,
    pair,
    percentile,
    running_hub,
    sign_up,
)


async def _running_task(hub: Hub, session: Session, name: str) -> tuple[Any, dict[str, Any], str]:
    creds = await pair(hub, session, name)
    ws = await connect_agent(hub, creds)
    task = await session.post(
        "/tasks", {"title": f"bench {name}", "targetAgentId": creds["agentId"]}
    )
    task_id = task["task"]["id"]
    await ws.send(
        envelope("task.accepted", {"taskId": task_id}, creds["workspaceId"], taskId=task_id)
    )
    return ws, creds, task_id


async def _drain_acks(ws: Any, count: int) -> int:
    acked = 0
    while acked < count:
        frame = json.loads(await ws.recv())
        if frame["type"] == "ack" and frame.get("sequence"):
            acked += 1
        elif frame["type"] == "error":
            raise RuntimeError(frame)
    return acked


async def throughput(hub: Hub, seconds: float, agents: int = 4, window: int = 256) -> float:
    """Agents pipeline progress reports as fast as acks come back; acked = committed."""
    session = await sign_up(hub)
    links = [await _running_task(hub, session, f"load-{i}") for i in range(agents)]
    for ws, _, _ in links:
        await _drain_acks(ws, 1)  # task.accepted
    stop = time.monotonic() + seconds
    totals = [0] * agents

    async def blast(index: int) -> None:
        ws, creds, task_id = links[index]
        in_flight = 0
        sent = 0

        async def reader() -> None:
            nonlocal in_flight
            while True:
                frame = json.loads(await ws.recv())
                if frame["type"] == "ack" and frame.get("sequence"):
                    totals[index] += 1
                    in_flight -= 1
                elif frame["type"] == "error":
                    raise RuntimeError(frame)

        task = asyncio.create_task(reader())
        while time.monotonic() < stop:
            while in_flight < window and time.monotonic() < stop:
                sent += 1
                in_flight += 1
                await ws.send(
                    envelope(
                        "task.status_changed",
                        {"status": "running", "progress": sent % 100},
                        creds["workspaceId"],
                        taskId=task_id,
                    )
                )
            await asyncio.sleep(0.001)
        while in_flight > 0:  # noqa: ASYNC110 - a load generator polling its own counter
            await asyncio.sleep(0.005)
        task.cancel()

    started = time.monotonic()
    await asyncio.gather(*(blast(i) for i in range(agents)))
    elapsed = time.monotonic() - started
    for ws, _, _ in links:
        await ws.close()
    await session.client.aclose()
    return sum(totals) / elapsed


async def latency(hub: Hub, rate: int, seconds: float) -> dict[str, float]:
    """One agent sends at ``rate`` events/s; an app's socket timestamps each arrival."""
    session = await sign_up(hub)
    ws, creds, task_id = await _running_task(hub, session, f"latency-{rate}")
    await _drain_acks(ws, 1)
    client = await connect_client(hub, session)
    while json.loads(await client.recv())["type"] != "client.caught_up":
        pass
    total = int(rate * seconds)
    samples: list[float] = []

    async def receive() -> None:
        while len(samples) < total:
            frame = json.loads(await client.recv())
            if frame.get("type") == "task.status_changed":
                sent_ns = int(frame["payload"]["summary"])
                samples.append((time.perf_counter_ns() - sent_ns) / 1e6)

    async def drain() -> None:
        while True:
            await ws.recv()

    receiver = asyncio.create_task(receive())
    drainer = asyncio.create_task(drain())
    interval = 1 / rate
    start = time.perf_counter()
    for i in range(total):
        target = start + i * interval
        delay = target - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await ws.send(
            envelope(
                "task.status_changed",
                {"status": "running", "progress": i % 100, "summary": str(time.perf_counter_ns())},
                creds["workspaceId"],
                taskId=task_id,
            )
        )
    await asyncio.wait_for(receiver, 60)
    drainer.cancel()
    await ws.close()
    await client.close()
    await session.client.aclose()
    return {
        "p50": percentile(samples, 50),
        "p95": percentile(samples, 95),
        "p99": percentile(samples, 99),
        "n": len(samples),
    }


async def idle_memory(hub: Hub, connections: int) -> dict[str, float]:
    """RSS growth of the hub process per connected, idle (heartbeating) agent."""
    session = await sign_up(hub)
    creds = [await pair(hub, session, f"idle-{i}") for i in range(connections)]
    await asyncio.sleep(1)
    before = hub.rss_kib()
    cpu_before = hub.cpu_seconds()
    sockets = []
    for batch in range(0, connections, 100):
        sockets.extend(
            await asyncio.gather(*(connect_agent(hub, c) for c in creds[batch : batch + 100]))
        )
    await asyncio.sleep(2)
    after = hub.rss_kib()
    cpu_window = 10.0
    cpu_start = hub.cpu_seconds()
    beats = 0
    end = time.monotonic() + cpu_window
    while time.monotonic() < end:  # every agent beats once per second (25x the default rate)
        for ws, c in zip(sockets, creds, strict=True):
            await ws.send(envelope("agent.heartbeat", {}, c["workspaceId"]))
            beats += 1
        await asyncio.sleep(1)
    cpu = (hub.cpu_seconds() - cpu_start) / cpu_window
    for ws in sockets:
        await ws.close()
    await session.client.aclose()
    del cpu_before
    return {
        "per_connection_kib": (after - before) / connections,
        "rss_before_mib": before / 1024,
        "rss_after_mib": after / 1024,
        "cpu_fraction_at_1_beat_per_s": cpu,
        "beats": beats,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--rates", default="100,1000")
    args = parser.parse_args()
    label = "PostgreSQL" if args.database_url else "SQLite"
    # Pairing --idle agents from one address would trip the per-IP pairing limit (10/min).
    async with running_hub(
        args.database_url,
        LINEUP_HEARTBEAT_INTERVAL="60",
        LINEUP_PAIRING_ATTEMPTS_PER_IP=str(args.idle + 100),
    ) as hub:
        rate = await throughput(hub, args.seconds)
        print(f"[{label}] durable events/s (4 agents, window 256): {rate:,.0f}")
        for r in [int(x) for x in args.rates.split(",")]:
            figures = await latency(hub, r, args.seconds)
            print(
                f"[{label}] agent→app latency at {r}/s: p50 {figures['p50']:.1f} ms, "
                f"p95 {figures['p95']:.1f} ms, p99 {figures['p99']:.1f} ms (n={figures['n']})"
            )
        memory = await idle_memory(hub, args.idle)
        print(
            f"[{label}] {args.idle} idle agents: {memory['per_connection_kib']:.1f} KiB each "
            f"(RSS {memory['rss_before_mib']:.0f} → {memory['rss_after_mib']:.0f} MiB), "
            f"hub CPU {memory['cpu_fraction_at_1_beat_per_s'] * 100:.0f}% of a core "
            "with every agent beating once a second"
        )


if __name__ == "__main__":
    asyncio.run(main())
