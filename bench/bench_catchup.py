"""A person's app that missed 100,000 events reconnects: time until it has them all and is
live again. Prints the figure in docs/benchmarks.md.

    .venv/bin/python bench/bench_catchup.py [--missed 100000] [--configs sqlite,pg]
        [--repeat 1] [--py-spy DIR]

An app subscribes, is caught up, and disconnects; agents then commit ``--missed`` events
(real traffic through the agents' socket); the app reconnects with its last sequence and the
clock runs from the ``client.subscribe`` until the ``client.caught_up`` frame that follows
the last missed event. Every event is checked to arrive once, in order. Each figure comes
with the hub's CPU time for that catch-up: the catch-up is CPU-bound, so on a shared machine
that says more than the wall time alone.

Each reconnect is measured twice: asking for ``client.batch`` frames (as the web app does)
and one frame per event (an app that does not ask). ``--repeat`` reconnects that many times
after one fill (filling takes far longer than the
catch-up, and one figure on a shared machine is noise). ``--py-spy DIR`` records the hub with
py-spy during the first reconnect (a raw flame graph per configuration in DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import time
from pathlib import Path
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
                        {"status": "running", "progress": sent % 100 + 1},
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


async def measure(
    label: str, hub: Hub, missed: int, repeat: int = 1, profile: Path | None = None
) -> None:
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
    for run, batch in [(r, b) for r in range(repeat) for b in (True, False)]:
        # the hub's own background work on the fresh events (the notification worker's pass
        # over them) is done before the app comes back, as it would be after a real absence
        await _quiet(hub)
        mode = f"{label}, {'batched' if batch else 'one a frame'}"
        spy = await _py_spy(hub, profile, mode) if profile is not None and run == 0 else None
        try:
            await _catch_up(mode, hub, session, last_seen, latest, batch)
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes what it has
                await spy.wait()
    await session.client.aclose()


PY_SPY = (
    shutil.which("py-spy") or Path(__file__).resolve().parent.parent / ".venv" / "bin" / "py-spy"
)


async def _py_spy(hub: Hub, directory: Path, label: str) -> asyncio.subprocess.Process:
    name = "".join(c if c.isalnum() else "-" for c in label)
    output = directory / f"{name}.txt"
    process = await asyncio.create_subprocess_exec(
        *(str(PY_SPY), "record", "--pid", str(hub.process.pid), "--format", "raw"),
        *("--rate", "250", "--nonblocking", "--output", str(output)),
        stdout=asyncio.subprocess.DEVNULL,
    )
    await asyncio.sleep(0.5)  # py-spy attaches before the clock starts
    return process


async def _catch_up(
    label: str, hub: Hub, session: Any, last_seen: int, latest: int, batch: bool
) -> None:
    cpu_before = hub.cpu_seconds()
    started = time.perf_counter()
    app = await connect_client(hub, session, last_seen, batch=batch)
    expected = last_seen + 1
    first_event = None
    while True:
        frame = json.loads(await app.recv())
        if frame.get("type") == "client.caught_up":
            if frame["payload"]["sequence"] >= latest:
                break
            continue
        frames = frame["payload"]["events"] if frame.get("type") == "client.batch" else [frame]
        for each in frames:
            sequence = each.get("sequence")
            if sequence is None:
                continue
            if first_event is None:
                first_event = time.perf_counter() - started
            if sequence != expected:
                raise AssertionError(f"got {sequence}, expected {expected}")
            expected += 1
    elapsed = time.perf_counter() - started
    hub_cpu = hub.cpu_seconds() - cpu_before
    await app.close()
    received = expected - 1 - last_seen
    print(
        f"[{label}] reconnected after missing {received:,} events: caught up in {elapsed:.2f} s "
        f"({received / elapsed:,.0f} events/s; first event after {first_event or 0:.3f} s; "
        f"hub CPU {hub_cpu:.2f} s); "
        f"{load_average()}",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--missed", type=int, default=100_000)
    parser.add_argument("--configs", default="sqlite,pg")
    parser.add_argument("--repeat", type=int, default=1, help="reconnects after one fill")
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
    env = {"LINEUP_HEARTBEAT_INTERVAL": "60", "LINEUP_PAIRING_ATTEMPTS_PER_IP": "1000"}
    for config in args.configs.split(","):
        if config == "sqlite":
            async with running_hub(None, **env) as hub:
                await measure("1 node, SQLite", hub, args.missed, args.repeat, args.py_spy)
        elif config == "pg":
            async with throwaway_pg() as url, running_hub(url, **env) as hub:
                await measure("1 node, PostgreSQL", hub, args.missed, args.repeat, args.py_spy)
        else:
            raise SystemExit(f"unknown configuration {config!r}")


if __name__ == "__main__":
    asyncio.run(main())
