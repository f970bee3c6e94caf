"""Reference figures for bare brokers on this machine, with LineUp's own message sizes: NATS
core pub/sub (nats-py) and Redis Streams (redis-py asyncio). LineUp's figures divided by these
are its overhead over a broker that stores nothing durably and checks nothing.

    .venv/bin/pip install nats-py      # or: pip install -e '.[bench]'
    .venv/bin/python bench/bench_brokers.py [--nats nats://127.0.0.1:4222] [--seconds 5]

For each broker: (1) latency publisher → subscriber at 100, 1,000 and 5,000 messages/s,
publisher in its own process (as LineUp's agent is), P50/P95/P99; (2) the most messages/s a
publisher can push through to one subscriber. The message is what LineUp sends: an agent's
``task.status_changed`` frame (~330 bytes) in, the app's frame (~420 bytes) out — the larger
is used. Redis Streams runs on a private redis-server started here, never the shared one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time
from typing import Any

from _harness import load_average, percentile, private_redis

SUBJECT = "lineup.bench"
STREAM = "lineup:bench"


def message(sent_ns: int, i: int) -> bytes:
    """The size and shape of the frame LineUp sends a person's app for a progress report."""
    frame = {
        "id": f"evt_01JDZ8Y5K8M1V2Q3R4S5T6V7W{i % 10}",
        "type": "task.status_changed",
        "version": "0.1",
        "occurredAt": "2026-11-30T06:40:00.123Z",
        "workspaceId": "ws_01JDZ8Y5K8M1V2Q3R4S5T6V7WX",
        "conversationId": "conv_01JDZ8Y5K8M1V2Q3R4S5T6V7WX",
        "taskId": "task_01JDZ8Y5K8M1V2Q3R4S5T6V7WX",
        "sequence": i + 1,
        "payload": {
            "taskId": "task_01JDZ8Y5K8M1V2Q3R4S5T6V7WX",
            "status": "running",
            "progress": i % 100,
            "summary": str(sent_ns),
        },
        "actor": "agent:agent_01JDZ8Y5K8M1V2Q3R4S5T6V7WX",
    }
    return json.dumps(frame, separators=(",", ":")).encode()


# --- publishers (own process) --------------------------------------------------------------


def _publisher(kind: str, url: str, rate: int, count: int, start: float, out: Any) -> None:
    out.put(asyncio.run(_publish(kind, url, rate, count, start)))


async def _publish(kind: str, url: str, rate: int, count: int, start: float) -> float:
    if kind == "nats":
        import nats

        nc = await nats.connect(url)

        async def send(body: bytes) -> None:
            await nc.publish(SUBJECT, body)

        async def close() -> None:
            await nc.flush()
            await nc.close()
    else:
        from redis.asyncio import Redis

        client = Redis.from_url(url)

        async def send(body: bytes) -> None:
            await client.xadd(STREAM, {"m": body}, maxlen=100_000, approximate=True)

        async def close() -> None:
            await client.aclose()

    await asyncio.sleep(max(0.0, start - time.time()))
    began = time.perf_counter()
    interval = 1 / rate if rate else 0.0
    for i in range(count):
        if rate:
            delay = began + i * interval - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        await send(message(time.time_ns(), i))
    elapsed = time.perf_counter() - began
    await close()
    return count / elapsed


# --- subscribers (this process) ------------------------------------------------------------


async def _subscribe(kind: str, url: str, count: int, ready: asyncio.Event) -> list[float]:
    latencies: list[float] = []
    if kind == "nats":
        import nats

        nc = await nats.connect(url)
        done = asyncio.Event()

        async def on_message(msg: Any) -> None:
            sent = int(json.loads(msg.data)["payload"]["summary"])
            latencies.append((time.time_ns() - sent) / 1e6)
            if len(latencies) >= count:
                done.set()

        await nc.subscribe(SUBJECT, cb=on_message)
        await nc.flush()
        ready.set()
        await done.wait()
        await nc.close()
        return latencies
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    tail = await client.xrevrange(STREAM, count=1)
    last = tail[0][0] if tail else b"0-0"
    ready.set()
    while len(latencies) < count:
        response = await client.xread({STREAM: last}, count=1000, block=1000)
        for _stream, entries in response or ():
            for entry_id, fields in entries:
                last = entry_id
                sent = int(json.loads(fields[b"m"])["payload"]["summary"])
                latencies.append((time.time_ns() - sent) / 1e6)
    await client.aclose()
    return latencies


async def run(kind: str, url: str, rate: int, seconds: float) -> float:
    """Prints the figures; returns the P95 in milliseconds (at a rate; else NaN)."""
    count = int(rate * seconds) if rate else int(50_000 * seconds / 5)
    ready = asyncio.Event()
    receiver = asyncio.create_task(_subscribe(kind, url, count, ready))
    await ready.wait()
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    start = time.time() + 1.5
    proc = context.Process(target=_publisher, args=(kind, url, rate, count, start, out))
    proc.start()
    latencies = await asyncio.wait_for(receiver, seconds + 120)
    received_by = time.time()
    sent_rate = await asyncio.to_thread(out.get, True, 60)
    proc.join(30)
    name = "NATS core" if kind == "nats" else "Redis Streams"
    size = len(message(time.time_ns(), 0))
    if rate:
        steady = latencies[len(latencies) // 10 :]
        print(
            f"[{name}] {rate:,}/s, {size} B messages: p50 {percentile(steady, 50):.2f} ms, "
            f"p95 {percentile(steady, 95):.2f} ms, p99 {percentile(steady, 99):.2f} ms "
            f"(n={len(latencies):,}); {load_average()}",
            flush=True,
        )
        return percentile(steady, 95)
    else:
        through = count / (received_by - start)
        print(
            f"[{name}] as fast as one publisher can: sent {sent_rate:,.0f}/s, delivered "
            f"{through:,.0f}/s to one subscriber ({count:,} × {size} B); {load_average()}",
            flush=True,
        )
    return float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--rates", default="100,1000,5000,0", help="0: as fast as possible")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--brokers", default="nats,redis")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    for broker in args.brokers.split(","):
        if broker == "nats":
            for rate in rates:
                await run("nats", args.nats, rate, args.seconds)
        else:
            async with private_redis() as url:
                for rate in rates:
                    await run("redis", url, rate, args.seconds)


if __name__ == "__main__":
    asyncio.run(main())
