"""Several hub nodes on one PostgreSQL database and Redis Streams (DESIGN principle 7).

Three real ``lineup serve`` processes on loopback ports; an agent on one node; people's apps
(raw ``/ws/client`` sockets) on the others. Events must reach every app in sequence order,
with nothing missed or doubled, across a node killed with SIGKILL and a Redis restart; work
that runs once (grace-period expiry) must run exactly once when its node is killed.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.cluster.clients import Agent, Browser
from tests.cluster.conftest import Node, RedisServer
from tests.support.people import Person
from tests.support.waiting import until_async

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

STREAM = 600


async def _holder(nodes: list[Node], lease: str = "monitor") -> Node:
    found: Node = await until_async(
        lambda: next((n for n in nodes if n.holds(lease)), None), f"a node holding {lease!r}"
    )
    return found


def _pair(person: Person, node: Node) -> tuple[dict[str, Any], str]:
    code = person.send("/pairing-codes", {}, 201)["code"]
    response = httpx.post(f"{node.url}/api/pairing/redeem", json={"code": code}, timeout=10)
    assert response.status_code == 200, response.text
    creds: dict[str, Any] = response.json()
    person.confirm_agent(creds["agentId"])
    task = person.send("/tasks", {"title": "stream", "targetAgentId": creds["agentId"]}, 201)
    return creds, task["task"]["id"]


def _events(person: Person) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        page = person.read(f"/events?after={events[-1]['sequence'] if events else 0}&limit=1000")
        events.extend(page["events"])
        if not page["events"]:
            return events


async def _stream(
    agent: Agent, task_id: str, count: int, at: dict[int, Callable[[], Any]] | None = None
) -> int:
    """Send ``count`` progress reports (~300/s), running ``at[i]`` before report ``i``; return
    the highest sequence acknowledged once every report is."""
    for i in range(count):
        if at and i in at:
            result = at[i]()
            if asyncio.iscoroutine(result):
                await result
        await agent.send(
            "task.status_changed",
            {"status": "running", "progress": i % 100 + 1},
            taskId=task_id,
            id=f"{task_id}-p{i}",
        )
        await asyncio.sleep(0.003)
    await until_async(
        lambda: sum(1 for k in agent.acks if k.startswith(f"{task_id}-p")) >= count,
        "every report acknowledged",
    )
    assert not agent.errors, agent.errors[:3]
    return max(agent.acks.values())


async def test_browsers_on_other_nodes_see_every_event_in_order_when_a_node_is_killed(
    start_cluster: Callable[..., list[Node]],
) -> None:
    nodes = start_cluster()
    holder = await _holder(nodes)
    agent_node, doomed = [n for n in nodes if n is not holder]
    person = Person.at(agent_node.url)
    try:
        creds, task_id = _pair(person, agent_node)
        cookie = person.session
        ws_id = person.workspace_id
        agent = await Agent.connect(agent_node.ws_url, creds["credential"], ws_id)
        await agent.send("task.accepted", {"taskId": task_id}, taskId=task_id)
        browsers = [
            Browser("doomed-1", [doomed.ws_url, holder.ws_url], ws_id, cookie).start(),
            Browser("doomed-2", [doomed.ws_url, holder.ws_url], ws_id, cookie).start(),
            Browser("holder", [holder.ws_url, doomed.ws_url], ws_id, cookie).start(),
        ]
        try:
            for browser in browsers:
                await asyncio.wait_for(browser.caught_up.wait(), 30)
            # a streamed delta (live only) crosses nodes too
            await agent.send("message.delta", {"messageId": "m1", "delta": "hello"})
            await until_async(lambda: all("hello" in b.deltas for b in browsers), "the delta")

            async def kill_mid_stream() -> None:
                await until_async(
                    lambda: browsers[0].last > 100, "the doomed node's apps to stream"
                )
                doomed.hub.kill()

            final = await _stream(agent, task_id, STREAM, at={200: kill_mid_stream})
            await until_async(
                lambda: all(b.last >= final for b in browsers), "every app to catch up"
            )
            for browser in browsers:
                browser.check_order(final)
            assert browsers[0].reconnects >= 1 and browsers[1].reconnects >= 1
            # the events crossed nodes through Redis Streams (not only the database check)
            assert holder.metric("lineup_stream_lag_seconds_count") > 0
            # a task created through another node reaches the agent's socket on its node
            async with httpx.AsyncClient(base_url=holder.url, cookies=person.cookies()) as other:
                created = await other.post(
                    f"/api/workspaces/{ws_id}/tasks",
                    json={"title": "from afar", "targetAgentId": creds["agentId"]},
                    headers={"X-CSRF-Token": person.csrf},
                )
                assert created.status_code == 201, created.text
                far_task = created.json()["task"]["id"]
            await until_async(
                lambda: any(
                    f.get("type") == "task.assigned" and f["payload"].get("taskId") == far_task
                    for f in agent.frames
                ),
                "the task assigned through another node",
            )
            # the agent, held by another node than the lease holder, stayed online all along
            agent_view = person.read(f"/agents/{creds['agentId']}")
            assert agent_view["status"] == "online", agent_view
            assert "agent.status_changed" not in browsers[2].types
        finally:
            for browser in browsers:
                await browser.stop()
            await agent.close()
    finally:
        person.close()


async def test_delivery_resumes_after_redis_restarts_with_nothing_lost_or_doubled(
    start_cluster: Callable[..., list[Node]], redis_server: RedisServer
) -> None:
    nodes = start_cluster()
    a, b, c = nodes
    person = Person.at(a.url)
    try:
        creds, task_id = _pair(person, a)
        cookie = person.session
        ws_id = person.workspace_id
        agent = await Agent.connect(a.ws_url, creds["credential"], ws_id)
        await agent.send("task.accepted", {"taskId": task_id}, taskId=task_id)
        browsers = [
            Browser("b", [b.ws_url], ws_id, cookie).start(),
            Browser("c", [c.ws_url], ws_id, cookie).start(),
        ]
        try:
            for browser in browsers:
                await asyncio.wait_for(browser.caught_up.wait(), 30)
            final = await _stream(
                agent,
                task_id,
                STREAM,
                at={
                    150: lambda: redis_server.stop(signal.SIGKILL),
                    350: redis_server.start,
                },
            )
            await until_async(
                lambda: all(b.last >= final for b in browsers), "every app to catch up"
            )
            for browser in browsers:
                browser.check_order(final)
            assert all(br.reconnects == 0 for br in browsers), "the apps' sockets never broke"
            # the nodes stream through Redis again, and the hole was healed from the database
            await until_async(
                lambda: all(n.cluster()["stream"]["healthy"] for n in nodes),
                "every node to read and write the stream again",
            )
            assert b.metric("lineup_stream_gap_fills_total") >= 1
            # and what is committed now arrives through the stream
            more = await _stream(agent, task_id, 50)
            await until_async(lambda: all(b.last >= more for b in browsers), "live events after")
            for browser in browsers:
                browser.check_order(more)
        finally:
            for browser in browsers:
                await browser.stop()
            await agent.close()
    finally:
        person.close()


async def test_grace_expiry_fires_exactly_once_when_the_lease_holder_is_killed(
    start_cluster: Callable[..., list[Node]],
) -> None:
    nodes = start_cluster(LINEUP_GRACE_PERIOD="3")
    holder = await _holder(nodes)
    survivors = [n for n in nodes if n is not holder]
    person = Person.at(survivors[0].url)
    try:
        creds, task_id = _pair(person, survivors[0])
        # the agent is on the node that holds the lease; both die together
        agent = await Agent.connect(holder.ws_url, creds["credential"], person.workspace_id)
        accepted = await agent.send("task.accepted", {"taskId": task_id}, taskId=task_id)
        await until_async(lambda: accepted in agent.acks, "task.accepted acknowledged")
        holder.hub.kill()
        await agent.close()

        # a survivor takes the lease over, finds the agent's node dead, records it offline,
        # and after the grace period fails its task — once
        def failed() -> bool:
            task: dict[str, Any] = person.read(f"/tasks/{task_id}")["task"]
            return task["status"] == "failed"

        await until_async(failed, "the task to fail agent_unreachable", timeout=90)
        new_holder = await _holder(survivors)
        events = _events(person)
        failures = [
            e
            for e in events
            if e["type"] == "task.status_changed" and e["payload"].get("status") == "failed"
        ]
        assert len(failures) == 1, failures
        assert failures[0]["payload"]["error"] == "agent_unreachable"
        offline = [
            e
            for e in events
            if e["type"] == "agent.status_changed" and e["payload"].get("status") == "offline"
        ]
        assert len(offline) == 1, offline
        assert sum(n.holds("monitor") for n in survivors) == 1
        assert new_holder in survivors
        assert person.read(f"/agents/{creds['agentId']}")["status"] == "offline"
    finally:
        person.close()
