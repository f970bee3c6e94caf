"""End-to-end latency, agent → hub → a person's app, at steady rates.

    .venv/bin/python bench/bench_latency.py [--configs sqlite,pg,cluster2]
        [--rates 100,1000,5000] [--seconds 10]

One agent sends ``task.status_changed`` at a fixed rate from its own process, each report
carrying its send time (``time.time_ns()``, one clock: same machine); a person's app — a raw
``/ws/client`` socket in this process — takes its arrival time. The latency therefore covers
the agent's socket, decoding and validation, the commit (durable), the fan-out and the app's
socket. ``cluster2`` puts the agent on node 1 and the app on node 2: the event also crosses
Redis Streams. A rate the hub cannot sustain shows as a growing latency and an achieved
rate below the target; both are printed.

After each of the hub's figures, the bare Redis Streams path (``bench_brokers.py``: a
publisher process ``XADD``s a message of the app's frame's size, a subscriber here
``XREAD``s it, on a private redis-server) runs at the same rate, and the ratio of the two
P95s is printed (``--no-reference`` skips it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import bench_brokers
from _harness import (
    Hub,
    connect_agent,
    connect_client,
    envelope,
    latest_sequence,
    load_average,
    pair,
    percentile,
    private_redis,
    running_cluster,
    running_hub,
    sign_up,
    throwaway_pg,
)


def _sender(spec: dict[str, Any], rate: int, seconds: float, start: float, out: Any) -> None:
    out.put(asyncio.run(_send(spec, rate, seconds, start)))


async def _send(spec: dict[str, Any], rate: int, seconds: float, start: float) -> dict[str, Any]:
    hub = Hub(spec["url"], None, Path("."))  # type: ignore[arg-type]
    ws = await connect_agent(hub, spec["creds"], spec["after"])
    ws_id = spec["creds"]["workspaceId"]
    task_id = spec["task"]
    errors = answered = 0
    total = int(rate * seconds)
    all_answered = asyncio.Event()

    async def drain() -> None:
        nonlocal errors, answered
        async for raw in ws:
            kind = json.loads(raw).get("type")
            if kind in ("ack", "error"):
                answered += 1
                errors += kind == "error"
                if answered >= total:
                    all_answered.set()

    drainer = asyncio.create_task(drain())
    interval = 1 / rate
    await asyncio.sleep(max(0.0, start - time.time()))
    began = time.perf_counter()
    for i in range(total):
        delay = began + i * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await ws.send(
            envelope(
                "task.status_changed",
                {"status": "running", "progress": i % 100, "summary": str(time.time_ns())},
                ws_id,
                taskId=task_id,
            )
        )
    sent_for = time.perf_counter() - began
    # an agent closing with frames unanswered would lose those the hub had not read yet
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(all_answered.wait(), 120)
    drainer.cancel()
    await ws.close()
    return {"sent": total, "sent_rate": total / sent_for, "errors": errors}


async def measure(label: str, hubs: list[Hub], rate: int, seconds: float) -> float:
    """Prints the figures; returns the steady P95 in milliseconds."""
    app_hub = hubs[-1]
    session = await sign_up(hubs[0])
    creds = await pair(hubs[0], session, f"latency-{rate}")
    task = await session.post("/tasks", {"title": "latency", "targetAgentId": creds["agentId"]})
    task_id = task["task"]["id"]
    # the task must be running: accept it once from here
    ws = await connect_agent(hubs[0], creds)
    await ws.send(
        envelope("task.accepted", {"taskId": task_id}, creds["workspaceId"], taskId=task_id)
    )
    while json.loads(await ws.recv()).get("type") != "ack":
        pass
    await ws.close()
    client = await connect_client(app_hub, session, await latest_sequence(session))
    while json.loads(await client.recv())["type"] != "client.caught_up":
        pass
    spec = {
        "url": hubs[0].url,
        "creds": creds,
        "task": task_id,
        "after": await latest_sequence(session),
    }
    total = int(rate * seconds)
    samples: list[float] = []
    arrivals: list[float] = []
    start = time.time() + 2.0
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    sender = context.Process(target=_sender, args=(spec, rate, seconds, start, out))
    sender.start()

    async def receive() -> None:
        while len(samples) < total:
            frame = json.loads(await client.recv())
            if frame.get("type") == "task.status_changed" and frame["payload"].get("summary"):
                now = time.time_ns()
                samples.append((now - int(frame["payload"]["summary"])) / 1e6)
                arrivals.append(now / 1e9)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(receive(), seconds + 120)
    result = await asyncio.to_thread(out.get, True, 60)
    sender.join(30)
    await client.close()
    await session.client.aclose()
    span = (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else float("nan")
    steady = samples[len(samples) // 10 :]  # the first tenth warms up
    print(
        f"[{label}] {rate:,}/s target: sent {result['sent_rate']:,.0f}/s, received "
        f"{len(samples):,}/{total:,} at {len(samples) / span:,.0f}/s; latency p50 "
        f"{percentile(steady, 50):.1f} ms, p95 {percentile(steady, 95):.1f} ms, p99 "
        f"{percentile(steady, 99):.1f} ms, max {max(samples, default=float('nan')):.0f} ms; "
        f"{result['errors']} errors; {load_average()}",
        flush=True,
    )
    return percentile(steady, 95)


async def reference(
    label: str, redis_url: str | None, p95: float, rate: int, seconds: float
) -> None:
    """The bare Redis Streams path at ``rate``, and the hub's P95 over its P95."""
    if redis_url is None:
        return
    bare = await bench_brokers.run("redis", redis_url, rate, seconds)
    print(
        f"[{label}] {rate:,}/s: agent → app P95 {p95:.1f} ms is {p95 / bare:.1f}x the bare Redis "
        f"Streams P95 {bare:.2f} ms measured just after; {load_average()}",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", default="sqlite,pg,cluster2")
    parser.add_argument("--rates", default="100,1000,5000")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-reference", action="store_true", help="no bare Redis Streams run")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    env = {"LINEUP_HEARTBEAT_INTERVAL": "60", "LINEUP_PAIRING_ATTEMPTS_PER_IP": "100000"}
    async with contextlib.AsyncExitStack() as stack:
        bare = None if args.no_reference else await stack.enter_async_context(private_redis())
        for config in args.configs.split(","):
            await run_config(config, rates, args.seconds, env, bare)


async def run_config(
    config: str, rates: list[int], seconds: float, env: dict[str, str], bare: str | None
) -> None:
    if config == "sqlite":
        async with running_hub(None, **env) as hub:
            for rate in rates:
                p95 = await measure("1 node, SQLite", [hub], rate, seconds)
                await reference("1 node, SQLite", bare, p95, rate, seconds)
    elif config == "pg":
        async with throwaway_pg() as url, running_hub(url, **env) as hub:
            for rate in rates:
                p95 = await measure("1 node, PostgreSQL", [hub], rate, seconds)
                await reference("1 node, PostgreSQL", bare, p95, rate, seconds)
    elif config.startswith("cluster"):
        nodes = int(config.removeprefix("cluster"))
        label = f"{nodes} nodes, agent on n1 → app on n{nodes}"
        async with (
            throwaway_pg() as url,
            private_redis() as redis_url,
            running_cluster(nodes, url, redis_url, **env) as hubs,
        ):
            for rate in rates:
                p95 = await measure(label, hubs, rate, seconds)
                await reference(label, bare, p95, rate, seconds)
    else:
        raise SystemExit(f"unknown configuration {config!r}")


if __name__ == "__main__":
    asyncio.run(main())
