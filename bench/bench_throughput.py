"""Maximum sustained durable events/s: one node on SQLite, one node on PostgreSQL, and two and
three nodes on PostgreSQL + Redis Streams. Prints the figures in docs/benchmarks.md.

    .venv/bin/python bench/bench_throughput.py [--configs sqlite,pg,cluster2,cluster3]
        [--seconds 10] [--agents 8] [--window 128] [--generators 2] [--workspaces 4]
        [--synchronous-commit on|off] [--writer-connections 4] [--node-cpu 0.3]

Agents pipeline ``task.status_changed`` reports (at most ``--window`` unacknowledged each) as
fast as the acks come back; an ack means the event is committed, so acks/s is durable
events/s. Agents are spread over the nodes round robin and over ``--workspaces`` workspaces;
the load comes from ``--generators`` separate processes. ``--synchronous-commit off`` sets
PostgreSQL's ``synchronous_commit`` for the benchmark's database (acks then no longer mean
the event survives a database crash: see docs/deploy.md). After each configuration every
workspace's log is checked: sequences 1..n with no gap, matching the workspace's counter.
While it runs, the CPU time of every part (hub nodes, PostgreSQL, Redis, load generators) is
sampled from /proc: on a 2-core machine they all share the same two cores, and the shares
say where the time goes. ``--node-cpu`` holds every hub node to that many cores (a cgroup
each; root only): nodes with a fixed CPU each, as on separate machines, so that adding nodes
adds CPU even on this two-core machine (PostgreSQL, Redis and the generators are not held).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

from _harness import (
    Hub,
    connect_agent,
    cpu_capped,
    envelope,
    latest_sequence,
    load_average,
    pair,
    private_redis,
    running_cluster,
    running_hub,
    sign_up,
    throwaway_pg,
)


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pids_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
    return found


# --- the load generator (runs in its own process) ------------------------------------------


def _generator(agents: list[dict[str, Any]], start: float, seconds: float, window: int, out: Any):
    out.put(asyncio.run(_generate(agents, start, seconds, window)))


async def _generate(
    agents: list[dict[str, Any]], start: float, seconds: float, window: int
) -> dict[str, int]:
    counted = 0
    errors = 0

    async def one(spec: dict[str, Any]) -> None:
        nonlocal counted, errors
        hub = Hub(spec["url"], None, Path("."))  # type: ignore[arg-type]
        ws = await connect_agent(hub, spec["creds"], spec["after"], max_size=None)
        ws_id = spec["creds"]["workspaceId"]
        task_id = spec["task"]
        await ws.send(envelope("task.accepted", {"taskId": task_id}, ws_id, taskId=task_id))
        in_flight = 1
        window_open = asyncio.Event()
        window_open.set()
        end = start + seconds

        async def reader() -> None:
            nonlocal in_flight, counted, errors
            async for raw in ws:
                frame = json.loads(raw)
                kind = frame.get("type")
                if kind == "ack":
                    in_flight -= 1
                    if start <= time.time() < end and frame.get("sequence"):
                        counted += 1
                    window_open.set()
                elif kind == "error":
                    in_flight -= 1
                    errors += 1
                    window_open.set()

        task = asyncio.create_task(reader())
        await asyncio.sleep(max(0.0, start - time.time()))
        sent = 0
        while time.time() < end:
            if in_flight >= window:
                window_open.clear()
                await window_open.wait()
                continue
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
        deadline = time.time() + 30
        while in_flight > 0 and time.time() < deadline:  # noqa: ASYNC110 - own counter
            await asyncio.sleep(0.01)
        task.cancel()
        await ws.close()

    await asyncio.gather(*(one(spec) for spec in agents))
    return {"acked": counted, "errors": errors}


# --- one configuration ---------------------------------------------------------------------


async def _prepare(hubs: list[Hub], agents: int, workspaces: int) -> list[dict[str, Any]]:
    sessions = [await sign_up(hubs[0]) for _ in range(workspaces)]
    specs = []
    for i in range(agents):
        session = sessions[i % workspaces]
        creds = await pair(hubs[0], session, f"load-{i}")
        task = await session.post(
            "/tasks", {"title": f"load {i}", "targetAgentId": creds["agentId"]}
        )
        specs.append(
            {
                "url": hubs[i % len(hubs)].url,
                "creds": creds,
                "task": task["task"]["id"],
                "after": await latest_sequence(session),
            }
        )
    for session in sessions:
        await session.client.aclose()
    return specs


async def measure(
    label: str,
    hubs: list[Hub],
    redis_pid: int | None,
    *,
    seconds: float,
    agents: int,
    window: int,
    generators: int,
    workspaces: int,
) -> float:
    specs = await _prepare(hubs, agents, workspaces)
    start = time.time() + 3.0
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    procs = [
        context.Process(target=_generator, args=(specs[g::generators], start, seconds, window, out))
        for g in range(generators)
    ]
    for proc in procs:
        proc.start()
    await asyncio.sleep(max(0.0, start - time.time()))
    parts: dict[str, list[int]] = {
        "hub nodes": [h.process.pid for h in hubs],
        "PostgreSQL": pids_named("postgres"),
        "load generators": [p.pid for p in procs if p.pid is not None],
    }
    if redis_pid is not None:
        parts["Redis"] = [redis_pid]
    before = {k: sum(cpu_seconds(p) for p in v) for k, v in parts.items()}
    await asyncio.sleep(seconds)
    used = {k: sum(cpu_seconds(p) for p in v) - before[k] for k, v in parts.items()}
    load = load_average()
    results = [await asyncio.to_thread(out.get, True, 120) for _ in procs]
    for proc in procs:
        proc.join(30)
    acked = sum(r["acked"] for r in results)
    errors = sum(r["errors"] for r in results)
    rate = acked / seconds
    shares = ", ".join(f"{k} {v / seconds * 100:.0f}%" for k, v in used.items() if v > 0.05)
    # CPU per event holds still when other work takes the cores; events/s does not.
    per_event = used["hub nodes"] / max(acked, 1) * 1e6
    print(
        f"[{label}] {rate:,.0f} durable events/s ({agents} agents in {workspaces} workspaces, "
        f"window {window}, "
        f"{generators} generator processes, {errors} errors); CPU of one core: {shares}; "
        f"hub CPU {per_event:.0f} µs per event; {load}",
        flush=True,
    )
    return rate


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", default="sqlite,pg,cluster2,cluster3")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--window", type=int, default=128)
    parser.add_argument("--generators", type=int, default=2)
    parser.add_argument("--workspaces", type=int, default=4)
    parser.add_argument("--synchronous-commit", choices=("on", "off"), default="on")
    parser.add_argument("--writer-connections", type=int, default=4)
    parser.add_argument("--node-cpu", type=float, default=None)
    args = parser.parse_args()
    options = {
        "seconds": args.seconds,
        "agents": args.agents,
        "window": args.window,
        "generators": args.generators,
        "workspaces": args.workspaces,
    }
    env = {
        "LINEUP_HEARTBEAT_INTERVAL": "60",
        "LINEUP_PAIRING_ATTEMPTS_PER_IP": "100000",
        "LINEUP_SIGNIN_ATTEMPTS_PER_IP": "100000",
        "LINEUP_WRITER_CONNECTIONS": str(args.writer_connections),
    }
    rates: dict[str, float] = {}

    def capped(hubs: list[Hub]) -> contextlib.AbstractContextManager[Any]:
        if args.node_cpu is None:
            return contextlib.nullcontext()
        return cpu_capped([h.process.pid for h in hubs], args.node_cpu)

    held = f", each node held to {args.node_cpu} of a core" if args.node_cpu else ""
    for config in args.configs.split(","):
        if config == "sqlite":
            async with running_hub(None, **env) as hub:
                with capped([hub]):
                    rates[config] = await measure(f"1 node, SQLite{held}", [hub], None, **options)
                check_sqlite(hub.home / "lineup.db")
        elif config == "pg":
            async with throwaway_pg() as url:
                await set_synchronous_commit(url, args.synchronous_commit)
                async with running_hub(url, **env) as hub:
                    label = (
                        f"1 node, PostgreSQL (synchronous_commit {args.synchronous_commit}){held}"
                    )
                    with capped([hub]):
                        rates[config] = await measure(label, [hub], None, **options)
                await check_pg(url)
        elif config.startswith("cluster"):
            nodes = int(config.removeprefix("cluster"))
            async with throwaway_pg() as url, private_redis() as redis_url:
                await set_synchronous_commit(url, args.synchronous_commit)
                async with running_cluster(nodes, url, redis_url, **env) as hubs:
                    redis_pid = _redis_pid(redis_url)
                    label = (
                        f"{nodes} nodes, PostgreSQL + Redis "
                        f"(synchronous_commit {args.synchronous_commit}){held}"
                    )
                    with capped(hubs):
                        rates[config] = await measure(label, hubs, redis_pid, **options)
                await check_pg(url)
        else:
            raise SystemExit(f"unknown configuration {config!r}")
    base = rates.get("pg")
    ratios = [f"pg / sqlite {base / rates['sqlite']:.2f}"] if base and rates.get("sqlite") else []
    ratios += [f"{c} / pg {r / base:.2f}" for c, r in rates.items() if base and c[:7] == "cluster"]
    if ratios:
        print("[ratios, this run] " + "; ".join(ratios), flush=True)


# --- the log afterwards: gap-free per workspace --------------------------------------------

_GAPS = """
SELECT w.id, w.last_sequence, count(e.sequence), coalesce(min(e.sequence), 0),
       coalesce(max(e.sequence), 0)
FROM workspaces w LEFT JOIN events e ON e.workspace_id = w.id
GROUP BY w.id, w.last_sequence
"""


def _report_gaps(rows: list[tuple[str, int, int, int, int]]) -> None:
    broken = [r[0] for r in rows if not (r[2] == r[4] == r[1] and (r[2] == 0 or r[3] == 1))]
    events = sum(r[2] for r in rows)
    verdict = "gap-free" if not broken else f"GAPS OR REPEATS in {len(broken)}: {broken[:3]}"
    print(f"    sequences: {len(rows)} workspaces, {events:,} events, {verdict}", flush=True)


def check_sqlite(path: Path) -> None:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        _report_gaps(conn.execute(_GAPS).fetchall())


def _plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def check_pg(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(_plain(url))
    try:
        _report_gaps([tuple(r) for r in await conn.fetch(_GAPS)])
    finally:
        await conn.close()


async def set_synchronous_commit(url: str, value: str) -> None:
    """For every later connection to the benchmark's database (the hubs start after this)."""
    import asyncpg

    conn = await asyncpg.connect(_plain(url))
    try:
        name = await conn.fetchval("SELECT current_database()")
        await conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = {value}')
    finally:
        await conn.close()


def _redis_pid(url: str) -> int | None:
    port = url.rsplit(":", 1)[1].split("/")[0]
    for pid in pids_named("redis-server"):
        with contextlib.suppress(OSError):
            if f":{port}" in Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ") or (
                port in Path(f"/proc/{pid}/cmdline").read_text()
            ):
                return pid
    return None


if __name__ == "__main__":
    asyncio.run(main())
