"""Many idle agent connections with heartbeats on one node: memory per connection and CPU
(the idle-memory figure). Prints the figures in docs/benchmarks.md.

    .venv/bin/python bench/bench_idle.py [--agents 10000] [--per-workspace 100]
        [--heartbeat 25] [--window 60] [--database-url URL]

Pairs ``--agents`` agents (``--per-workspace`` to a workspace; pairing is rate-limited per
address, so the limit is raised for the run), connects them all (raising this process's open
file limit, which the hub inherits), waits until the hub is idle, and reads the hub's RSS
before and after. Then every agent beats every ``--heartbeat`` seconds (the default interval;
the hub marks an agent offline after two missed beats) for ``--window`` seconds while the
hub's CPU time is read from /proc. Agents connect as reconnecting agents do, with the last
sequence they saw, so no connection replays its workspace's log.

In the same run, a bare ``websockets`` server (the library the hub's sockets are built on,
its own asyncio server, one handler task per connection that answers each frame with an
ack-sized frame) takes as many connections beating as often: its memory per connection is
the reference, and the ratio of the two is printed. ``--tracemalloc DIR`` runs the hub under
tracemalloc and prints what the connections hold, by allocation site, per connection.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import websockets
from _harness import (
    ROOT,
    Hub,
    connect_agent,
    envelope,
    free_port,
    latest_sequence,
    load_average,
    pair,
    raise_nofile,
    running_hub,
    sign_up,
)
from _harness import workspaces as all_workspaces


async def _quiet(hub: Hub, below: float = 0.03, limit_s: float = 120) -> None:
    """Wait until the hub uses less than ``below`` of a core over a second."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        start = hub.cpu_seconds()
        await asyncio.sleep(1)
        if hub.cpu_seconds() - start < below:
            return


async def _agents_online(hub: Hub) -> int:
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"{hub.url}/metrics")).text
    for line in text.splitlines():
        if line.startswith('lineup_connections{kind="agent"}'):
            return int(float(line.split()[-1]))
    return -1


_BARE_SERVER = """
import asyncio, sys
from websockets.asyncio.server import serve
ACK = '{"type":"ack","id":"evt_01JBENCHBENCHBENCHBENCHBENCH","duplicate":false,"ignored":false}'
async def handler(ws):
    async for _ in ws:
        await ws.send(ACK)
async def main():
    async with serve(handler, "127.0.0.1", int(sys.argv[1]), max_size=1024 * 1024,
                     ping_interval=None, compression=None):
        print("ready", flush=True)
        await asyncio.Future()
asyncio.run(main())
"""


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1])


async def bare_reference(count: int, heartbeat: float) -> float:
    """KiB per connection of a bare ``websockets`` server holding ``count`` beating sockets."""
    port = free_port()
    python = str(ROOT / ".venv" / "bin" / "python")
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
        [python, "-c", _BARE_SERVER, str(port)], stdout=subprocess.PIPE, stderr=sys.stderr
    )
    try:
        assert process.stdout is not None
        await asyncio.to_thread(process.stdout.readline)
        await asyncio.sleep(1)
        before = _rss_kib(process.pid)
        semaphore = asyncio.Semaphore(32)
        sockets: list[Any] = []
        tasks: list[asyncio.Task[None]] = []

        async def beat(ws: Any) -> None:
            await asyncio.sleep(random.uniform(0, heartbeat))
            while True:
                await ws.send(envelope("agent.heartbeat", {}, "ws_bench"))
                await asyncio.sleep(heartbeat)

        async def drain(ws: Any) -> None:
            async for _ in ws:
                pass

        async def connect_one() -> None:
            async with semaphore:
                ws = await websockets.connect(
                    f"ws://127.0.0.1:{port}/", ping_interval=None, max_size=None, max_queue=None
                )
                await ws.send(envelope("agent.heartbeat", {}, "ws_bench"))
                await ws.recv()
            sockets.append(ws)
            tasks.append(asyncio.create_task(beat(ws)))
            tasks.append(asyncio.create_task(drain(ws)))

        await asyncio.gather(*(connect_one() for _ in range(count)))
        await asyncio.sleep(heartbeat)  # every socket has beaten at least once since
        after = _rss_kib(process.pid)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ws in sockets:
            ws.transport.abort()
        return (after - before) / count
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(15)


def _snapshot(hub: Hub, directory: Path, number: int) -> tracemalloc.Snapshot:
    path = directory / f"snapshot-{number}.bin"
    hub.process.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 120
    size = -1
    while time.monotonic() < deadline:  # written when its size stops changing
        time.sleep(0.5)
        if path.exists() and path.stat().st_size == size and size > 0:
            break
        size = path.stat().st_size if path.exists() else -1
    return tracemalloc.Snapshot.load(str(path))


def _held(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, count: int) -> None:
    """What ``count`` connections hold, by allocation site (the hub's own frames first)."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<*")]
    before, after = before.filter_traces(ignore), after.filter_traces(ignore)
    diff = after.compare_to(before, "traceback")
    total = sum(d.size_diff for d in diff)
    print(f"[tracemalloc] {total / count / 1024:.1f} KiB traced per connection; the top sites:")
    for stat in diff[:25]:
        if stat.size_diff <= 0:
            break
        recent = list(reversed(stat.traceback))  # the allocating frame first
        ours = [f for f in recent[1:] if "/lineup/" in f.filename][:2]
        where = " ← ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in [recent[0], *ours])
        print(
            f"  {stat.size_diff / count:7.0f} B/conn "
            f"{stat.count_diff / count:5.1f} blocks/conn  {where}"
        )


async def run(
    agents: int,
    per_workspace: int,
    heartbeat: float,
    window: float,
    url: str | None,
    deflate: bool,
    traced: Path | None = None,
) -> None:
    limit = raise_nofile(agents * 2 + 1000)
    print(f"open file limit {limit}; per-message deflate {'on' if deflate else 'off'}", flush=True)
    async with running_hub(
        url,
        deflate=deflate,
        tracemalloc=traced,
        LINEUP_HEARTBEAT_INTERVAL=str(heartbeat),
        LINEUP_PAIRING_ATTEMPTS_PER_IP=str(agents * 4 + 100),
    ) as hub:
        started = time.monotonic()
        workspaces = (agents + per_workspace - 1) // per_workspace
        sessions = await all_workspaces(await sign_up(hub), workspaces)
        creds: list[tuple[dict[str, Any], Any]] = []
        semaphore = asyncio.Semaphore(32)

        async def pair_one(i: int) -> None:
            session = sessions[i // per_workspace]
            async with semaphore:
                creds.append((await pair(hub, session, f"idle-{i}"), session))

        await asyncio.gather(*(pair_one(i) for i in range(agents)))
        paired = time.monotonic()
        print(f"paired {agents:,} agents in {workspaces} workspaces in {paired - started:.0f} s")
        latest = {s.workspace_id: await latest_sequence(s) for s in sessions}
        await _quiet(hub)
        rss_before = hub.rss_kib()
        snapped = await asyncio.to_thread(_snapshot, hub, traced, 1) if traced else None
        sockets: list[Any] = []
        tasks: list[asyncio.Task[None]] = []

        async def beat(ws: Any, ws_id: str) -> None:
            await asyncio.sleep(random.uniform(0, heartbeat))
            while True:
                await ws.send(envelope("agent.heartbeat", {}, ws_id))
                await asyncio.sleep(heartbeat)

        async def drain(ws: Any) -> None:
            async for _ in ws:
                pass

        async def connect_one(c: dict[str, Any]) -> None:
            async with semaphore:
                ws = await connect_agent(
                    hub, c, latest[c["workspaceId"]], ping_interval=None, max_size=None
                )
            sockets.append(ws)
            # beat from the start, as an agent does: the hub closes a silent one
            tasks.append(asyncio.create_task(beat(ws, c["workspaceId"])))
            tasks.append(asyncio.create_task(drain(ws)))

        await asyncio.gather(*(connect_one(c) for c, _ in creds))
        connected = time.monotonic()
        print(f"connected {agents:,} agents in {connected - paired:.0f} s", flush=True)
        await asyncio.sleep(heartbeat)  # every agent has beaten at least once since
        await _quiet(hub, below=0.02 + agents / heartbeat * 200e-6)
        rss_after = hub.rss_kib()
        per = (rss_after - rss_before) / agents
        if traced is not None and snapped is not None:
            _held(snapped, await asyncio.to_thread(_snapshot, hub, traced, 2), agents)
        tag = "idle, deflate on" if deflate else "idle"
        print(
            f"[{tag}] {agents:,} idle agents, {await _agents_online(hub):,} online: hub RSS "
            f"{rss_before / 1024:.0f} → {rss_after / 1024:.0f} MiB, {per:.1f} KiB per "
            f"connection; {load_average()}",
            flush=True,
        )
        cpu_start = hub.cpu_seconds()
        await asyncio.sleep(window)
        cpu = (hub.cpu_seconds() - cpu_start) / window
        rss_beating = hub.rss_kib()
        print(
            f"[{tag}] {agents:,} agents beating every {heartbeat:g} s "
            f"({agents / heartbeat:,.0f} beats/s): hub CPU {cpu * 100:.1f}% of one core, "
            f"RSS {rss_beating / 1024:.0f} MiB, {await _agents_online(hub):,} still online; "
            f"{load_average()}",
            flush=True,
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ws in sockets:
            ws.transport.abort()
        await sessions[0].client.aclose()
        gc.collect()
    if traced is None:
        bare = await bare_reference(agents, heartbeat)
        print(
            f"[idle] a bare websockets server with {agents:,} connections beating every "
            f"{heartbeat:g} s: {bare:.1f} KiB per connection; the hub's agent connection is "
            f"{per / bare:.2f}x that ({per:.1f} KiB); {load_average()}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--per-workspace", type=int, default=100)
    parser.add_argument("--heartbeat", type=float, default=25.0)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="serve with per-message deflate on, as `lineup serve` once did",
    )
    parser.add_argument("--tracemalloc", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    asyncio.run(
        run(
            args.agents,
            args.per_workspace,
            args.heartbeat,
            args.window,
            args.database_url,
            args.deflate,
            args.tracemalloc,
        )
    )


if __name__ == "__main__":
    main()
