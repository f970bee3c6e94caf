"""Push latency: from an ``interaction.requested`` being committed (its ack reaching the agent)
to the Web Push message arriving, decrypted, at a local push service. Prints P50/P95.

A real ``lineup serve`` process (SQLite by default) and the tests' local push service, which
decrypts each message (RFC 8291) with the keys a browser would have made.

    .venv/bin/python bench/bench_push.py [--count 50] [--postgres | --database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from _harness import (
    connect_agent,
    envelope,
    pair,
    percentile,
    running_hub,
    sign_up,
    throwaway_pg,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.hub.notify_endpoints import PushService


async def _ack(ws: object, event_id: str) -> float:
    """Wait for the ack of ``event_id``; returns when it arrived (perf_counter)."""
    while True:
        frame = json.loads(await ws.recv())  # type: ignore[attr-defined]
        if frame.get("type") in ("ack", "error") and frame.get("id") == event_id:
            if frame["type"] == "error":
                raise RuntimeError(frame)
            return time.perf_counter()


async def main(count: int, database_url: str | None) -> None:
    with PushService() as service:
        device = service.device("phone")
        env = {
            "LINEUP_PUSH_ALLOW_HTTP": "1",
            "LINEUP_PUSH_HOSTS": "127.0.0.1",
            "LINEUP_VAPID_SUBJECT": "mailto:bench@example.test",
        }
        async with running_hub(database_url, **env) as hub:
            session = await sign_up(hub)
            response = await session.client.post(
                "/api/notifications/devices",
                json=device.subscription(),
                headers={"X-CSRF-Token": session.csrf},
            )
            response.raise_for_status()
            creds = await pair(hub, session, "bench")
            ws = await connect_agent(hub, creds)
            workspace = creds["workspaceId"]
            task = await session.post(
                "/tasks", {"title": "bench", "targetAgentId": creds["agentId"]}
            )
            task_id = task["task"]["id"]
            accept = f"acc-{task_id}"
            await ws.send(
                envelope("task.accepted", {"taskId": task_id}, workspace, taskId=task_id, id=accept)
            )
            await _ack(ws, accept)

            since_commit: list[float] = []
            since_send: list[float] = []
            for i in range(count + 3):  # the first three warm up
                interaction_id = f"int_bench_{i}"
                event_id = f"evt_bench_{i}"
                sent = time.perf_counter()
                await ws.send(
                    envelope(
                        "interaction.requested",
                        {"interaction": {"id": interaction_id, "type": "approval", "title": "Go?"}},
                        workspace,
                        taskId=task_id,
                        id=event_id,
                    )
                )
                committed = await _ack(ws, event_id)
                received = await asyncio.to_thread(
                    service.wait_for,
                    lambda got, iid=interaction_id: [
                        r for r in got if r.payload and r.payload.get("subjectId") == iid
                    ],
                    f"push {i}",
                    30.0,
                )
                if i >= 3:
                    since_commit.append((received[0].at - committed) * 1000)
                    since_send.append((received[0].at - sent) * 1000)
            await ws.close()

    print(f"push latency over {count} interactions ({'PostgreSQL' if database_url else 'SQLite'})")
    print(
        f"  commit (ack) -> push decrypted: P50 {percentile(since_commit, 50):.1f} ms, "
        f"P95 {percentile(since_commit, 95):.1f} ms, max {max(since_commit):.1f} ms"
    )
    print(
        f"  agent send   -> push decrypted: P50 {percentile(since_send, 50):.1f} ms, "
        f"P95 {percentile(since_send, 95):.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--postgres", action="store_true", help="a throwaway local database")
    args = parser.parse_args()

    async def run() -> None:
        if args.postgres:
            async with throwaway_pg() as url:
                await main(args.count, url)
        else:
            await main(args.count, args.database_url)

    asyncio.run(run())
