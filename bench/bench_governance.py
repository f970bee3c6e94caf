"""Governed capability calls through a real hub process and its in-tree scheduling system:
what one read costs end to end (invoke → ack → capability.result), what a write costs from the
person's approval to the agent hearing the published version, and how long ``lineup audit
verify`` takes over the chain they leave.

    .venv/bin/python bench/bench_governance.py [--database-url URL] [--reads 300] [--writes 30]

Reads go one at a time (latency, not throughput under load); each write is preview → publish →
approve over HTTP → accepted → succeeded. Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import time
from typing import Any

from _harness import LINEUP, Hub, connect_agent, envelope, pair, running_hub, sign_up


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _result(ws: Any, invocation: str, *statuses: str) -> dict[str, Any]:
    while True:
        frame = json.loads(await ws.recv())
        if frame.get("type") == "capability.result":
            payload: dict[str, Any] = frame["payload"]
            if payload["invocationId"] == invocation and payload["status"] in statuses:
                return payload


async def _invoke(
    ws: Any, ws_id: str, conversation: str, invocation: str, capability: str, params: dict[str, Any]
) -> None:
    body = {"invocationId": invocation, "capability": capability, "params": params}
    await ws.send(envelope("capability.invoke", body, ws_id, conversationId=conversation))


async def run(hub: Hub, reads: int, writes: int, database_url: str | None) -> None:
    session = await sign_up(hub)
    project = (await session.post("/projects", {"name": "Plant 1"}))["id"]
    await session.post(
        "/policy/rules", {"capability": "scheduling.*", "effect": "allow", "projectId": project}
    )
    creds = await pair(hub, session, "bench")
    conversation = (
        await session.post(
            "/conversations",
            {"title": "bench", "agentIds": [creds["agentId"]], "projectId": project},
        )
    )["id"]
    ws_id = creds["workspaceId"]
    ws = await connect_agent(hub, creds, last_sequence=0)
    done = ("succeeded", "failed", "rejected", "unknown_result")

    cpu0 = hub.cpu_seconds()
    latencies: list[float] = []
    started = time.perf_counter()
    for i in range(reads):
        t0 = time.perf_counter()
        await _invoke(ws, ws_id, conversation, f"r{i}", "scheduling.orders.query", {"limit": 5})
        await _result(ws, f"r{i}", *done)
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - started
    cpu = hub.cpu_seconds() - cpu0
    print(
        f"reads: {reads} in {wall:.2f} s ({reads / wall:.0f}/s one at a time); "
        f"p50 {_ms(latencies, 0.5):.1f} ms, p95 {_ms(latencies, 0.95):.1f} ms; "
        f"hub CPU {cpu / reads * 1e6:.0f} µs per read"
    )

    approve_to_done: list[float] = []
    whole: list[float] = []
    cpu0 = hub.cpu_seconds()
    for i in range(writes):
        t0 = time.perf_counter()
        await _invoke(ws, ws_id, conversation, f"p{i}", "scheduling.schedule.preview", {})
        trial = (await _result(ws, f"p{i}", *done))["output"]
        params = {"draftId": trial["draftId"], "basedOnVersion": trial["basedOnVersion"]}
        await _invoke(ws, ws_id, conversation, f"w{i}", "scheduling.schedule.publish", params)
        waiting = await _result(ws, f"w{i}", "waiting_for_approval")
        t1 = time.perf_counter()
        await session.post(f"/approvals/{waiting['approvalId']}/decision", {"decision": "approve"})
        final = await _result(ws, f"w{i}", *done)
        assert final["status"] == "succeeded", final
        approve_to_done.append(time.perf_counter() - t1)
        whole.append(time.perf_counter() - t0)
    cpu = hub.cpu_seconds() - cpu0
    print(
        f"writes: {writes}; approval → published p50 {_ms(approve_to_done, 0.5):.1f} ms, "
        f"p95 {_ms(approve_to_done, 0.95):.1f} ms; whole (preview → publish → approve → "
        f"published) p50 {_ms(whole, 0.5):.1f} ms; hub CPU {cpu / writes * 1000:.1f} ms per write"
    )
    await ws.close()
    await session.client.aclose()

    environment = {**os.environ, "LINEUP_HOME": str(hub.home)}
    if database_url:
        environment["LINEUP_DATABASE_URL"] = database_url
    t0 = time.perf_counter()
    verified = subprocess.run(  # noqa: ASYNC221 - once, after the load
        [str(LINEUP), "audit", "verify"], env=environment, capture_output=True, text=True
    )
    seconds = time.perf_counter() - t0
    print(f"audit verify: {verified.stdout.strip()} in {seconds:.2f} s (process start included)")
    print(f"mean read {statistics.mean(latencies) * 1000:.1f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args()
    async with running_hub(args.database_url) as hub:
        await run(hub, args.reads, args.writes, args.database_url)


if __name__ == "__main__":
    asyncio.run(main())
