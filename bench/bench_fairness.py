"""One workspace floods the hub; another workspace's person should hardly notice.

    .venv/bin/python bench/bench_fairness.py [--configs sqlite,pg,split] [--agents 4]
        [--requests 150] [--window 256] [--workspace-windows 256,32]

Workspace A's ``--agents`` agents push ``task.status_changed`` as fast as the hub acks them
(each keeps ``--window`` frames in flight), from processes of their own. Meanwhile a person
of workspace B, in this process, makes requests one after the other: ``GET /tasks``,
``POST`` a message to B's agent (the command's own time), and that message's trip to the
agent (from the POST until ``message.delivered`` arrives on B's agent's socket; B's app
socket, open throughout, gets ``message.created`` before the POST returns). Each request
kind's P50 and P95 are printed idle (no flood) and under the flood, with the ratio of the
P95s (the target: at most 2×) and the rate A's agents committed meanwhile. A's agents share
the node's in-flight window for their workspace (``LINEUP_WORKSPACE_IN_FLIGHT``);
``--workspace-windows`` runs each configuration once per value given. ``split`` is two nodes
on PostgreSQL and Redis, every agent on the first and B's person on the second (agents'
nodes and people's nodes, docs/deploy.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import httpx
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

KINDS = ("list tasks", "post message", "message to agent")


def _flooder(spec: dict[str, Any], window: int, stop_at: float, out: Any) -> None:
    out.put(asyncio.run(_flood(spec, window, stop_at)))


async def _flood(spec: dict[str, Any], window: int, stop_at: float) -> int:
    """Pipelined reports until ``stop_at``; returns how many were acked."""
    hub = Hub(spec["url"], None, Path("."))  # type: ignore[arg-type]
    ws = await connect_agent(hub, spec["creds"], spec["after"])
    ws_id, task_id = spec["creds"]["workspaceId"], spec["task"]
    acked = sent = 0
    while time.time() < stop_at:
        while sent - acked < window:
            sent += 1
            frame = envelope(
                "task.status_changed",
                {"status": "running", "progress": sent % 100 + 1},
                ws_id,
                taskId=task_id,
            )
            await ws.send(frame)
        kind = json.loads(await ws.recv()).get("type")
        if kind in ("ack", "error"):
            acked += 1
    await ws.close()
    return acked


async def _flood_links(hub: Hub, agents: int) -> list[dict[str, Any]]:
    session = await sign_up(hub)
    specs = []
    for i in range(agents):
        creds = await pair(hub, session, f"flood-{i}")
        task = await session.post(
            "/tasks", {"title": f"flood {i}", "targetAgentId": creds["agentId"]}
        )
        task_id = task["task"]["id"]
        ws = await connect_agent(hub, creds)
        await ws.send(
            envelope("task.accepted", {"taskId": task_id}, creds["workspaceId"], taskId=task_id)
        )
        while json.loads(await ws.recv()).get("type") != "ack":
            pass
        await ws.close()
        specs.append({"url": hub.url, "creds": creds, "task": task_id})
    after = await latest_sequence(session)
    for spec in specs:
        spec["after"] = after
    await session.client.aclose()
    return specs


async def _requests(
    session: Any, agent: Any, conversation: str, agent_id: str, count: int
) -> dict[str, list[float]]:
    """``count`` rounds of B's three request kinds, one after the other; milliseconds."""
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    base = f"/api/workspaces/{session.workspace_id}"
    for n in range(count):
        started = time.perf_counter()
        response = await session.client.get(f"{base}/tasks")
        response.raise_for_status()
        times["list tasks"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        posted = await session.post(
            f"/conversations/{conversation}/messages",
            {"content": f"m{n}", "targetAgentId": agent_id},
        )
        times["post message"].append((time.perf_counter() - started) * 1000)
        message_id = posted["message"]["id"]
        while True:
            frame = json.loads(await agent.recv())
            payload = frame.get("payload") or {}
            if frame.get("type") == "message.delivered" and payload.get("messageId") == message_id:
                break
        times["message to agent"].append((time.perf_counter() - started) * 1000)
    return times


async def measure(
    label: str, hub: Hub, agents: int, requests: int, window: int, agents_hub: Hub | None = None
) -> None:
    """``agents_hub``, when given, is the node every agent connects to, A's and B's; people
    (B's requests and app socket) use ``hub``."""
    agents_hub = agents_hub or hub
    specs = await _flood_links(agents_hub, agents)
    person = await sign_up(hub)
    creds = await pair(hub, person, "quiet")
    agent_id = creds["agentId"]
    conversation = (
        await person.post("/conversations", {"title": "quiet", "agentIds": [agent_id]})
    )["id"]
    app = await connect_client(hub, person, await latest_sequence(person))
    while json.loads(await app.recv())["type"] != "client.caught_up":
        pass
    drain = asyncio.create_task(_drain(app))
    agent = await connect_agent(agents_hub, creds, await latest_sequence(person))
    await _requests(person, agent, conversation, agent_id, 10)  # warm up
    idle = await _requests(person, agent, conversation, agent_id, requests)

    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    flood_for = 600.0  # stopped by the deadline below once B's requests are done
    stop_at = time.time() + flood_for
    processes = [
        context.Process(target=_flooder, args=(spec, window, stop_at, out)) for spec in specs
    ]
    for process in processes:
        process.start()
    await asyncio.sleep(3)  # the agents connect and fill their windows
    cpu_before, flood_started = agents_hub.cpu_seconds(), time.perf_counter()
    people_cpu_before = hub.cpu_seconds()
    before = await committed(agents_hub)
    flooded = await _requests(person, agent, conversation, agent_id, requests)
    flood_events = await committed(agents_hub) - before
    flood_seconds = time.perf_counter() - flood_started
    hub_cpu = agents_hub.cpu_seconds() - cpu_before
    people_cpu = hub.cpu_seconds() - people_cpu_before
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(10)
    drain.cancel()
    await app.close()
    await agent.close()
    await person.client.aclose()
    print(
        f"[{label}] workspace A: {agents} agents flooding ({window} in flight each), "
        f"{flood_events / flood_seconds:,.0f} events/s committed during B's requests "
        f"(hub CPU {hub_cpu / flood_seconds:.0%} of a core"
        + (f"; the people's node {people_cpu / flood_seconds:.0%}" if agents_hub is not hub else "")
        + f"); {load_average()}",
        flush=True,
    )
    for kind in KINDS:
        i50, i95 = percentile(idle[kind], 50), percentile(idle[kind], 95)
        f50, f95 = percentile(flooded[kind], 50), percentile(flooded[kind], 95)
        print(
            f"[{label}]   workspace B {kind:>13}: idle p50 {i50:6.1f} ms p95 {i95:6.1f} ms; "
            f"flooded p50 {f50:6.1f} ms p95 {f95:6.1f} ms; p95 ratio {f95 / i95:.1f}x",
            flush=True,
        )


async def _drain(app: Any) -> None:
    async for _ in app:
        pass


async def committed(hub: Hub) -> int:
    """Events the hub committed so far (its metrics: the flood's workspace has no session
    here to ask for its latest sequence)."""
    async with httpx.AsyncClient(base_url=hub.url) as client:
        text = (await client.get("/metrics")).text
    for line in text.splitlines():
        if line.startswith("lineup_events_committed_total"):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", default="sqlite,pg")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument(
        "--workspace-windows",
        default="256,32",
        help="LINEUP_WORKSPACE_IN_FLIGHT values to run with, comma-separated",
    )
    args = parser.parse_args()
    env = {"LINEUP_HEARTBEAT_INTERVAL": "60", "LINEUP_PAIRING_ATTEMPTS_PER_IP": "1000"}
    for config in args.configs.split(","):
        for shared in args.workspace_windows.split(","):
            hub_env = {**env, "LINEUP_WORKSPACE_IN_FLIGHT": shared}
            names = {"sqlite": "SQLite", "pg": "PostgreSQL", "split": "agents' node, people's node"}
            label = f"{names.get(config, config)}, workspace window {shared}"
            if config == "sqlite":
                async with running_hub(None, **hub_env) as hub:
                    await measure(label, hub, args.agents, args.requests, args.window)
            elif config == "pg":
                async with throwaway_pg() as url, running_hub(url, **hub_env) as hub:
                    await measure(label, hub, args.agents, args.requests, args.window)
            elif config == "split":
                async with (
                    throwaway_pg() as url,
                    private_redis() as redis_url,
                    running_cluster(2, url, redis_url, **hub_env) as (agents_node, people_node),
                ):
                    await measure(
                        label, people_node, args.agents, args.requests, args.window, agents_node
                    )
            else:
                raise SystemExit(f"unknown configuration {config!r}")


if __name__ == "__main__":
    asyncio.run(main())
