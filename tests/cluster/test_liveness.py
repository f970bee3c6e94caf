"""Agents' liveness across three nodes under load: an agent whose socket stays open on a live
node, and whose heartbeats arrive, is never recorded offline — however busy the nodes are.

Tight timings make the test quick to fail: 1.5 s heartbeats, so offline after 3 s, and 8 s
leases, renewed every 2.7 s — as in the outside testers' report (2 s and 10 s), a liveness
rule that leans on a lease renewal gets well under a second of slack, and under this load it
fails within seconds. The agents beat every half second, so a test process slowed by the load
itself still beats well within the window.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.cluster.clients import Agent
from tests.cluster.conftest import Node
from tests.support.people import Person
from tests.support.waiting import until_async

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

LOAD_SECONDS = 15.0
IDLE_PER_NODE = 2
BUSY_PER_NODE = 2
IN_FLIGHT = 256


def _pair(person: Person, node: Node, name: str) -> tuple[str, str, str]:
    """A new agent paired through ``node``: its id, credential, and a task assigned to it."""
    code = person.send("/pairing-codes", {}, 201)["code"]
    response = httpx.post(f"{node.url}/api/pairing/redeem", json={"code": code}, timeout=10)
    assert response.status_code == 200, response.text
    creds: dict[str, Any] = response.json()
    person.confirm_agent(creds["agentId"])
    task = person.send("/tasks", {"title": name, "targetAgentId": creds["agentId"]}, 201)
    return creds["agentId"], creds["credential"], task["task"]["id"]


def _events(person: Person) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        page = person.read(f"/events?after={events[-1]['sequence'] if events else 0}&limit=1000")
        events.extend(page["events"])
        if not page["events"]:
            return events


async def _push(agent: Agent, task_id: str, stop: asyncio.Event) -> int:
    """Progress reports as fast as the hub acknowledges them (``IN_FLIGHT`` unanswered)."""
    sent = 0
    with contextlib.suppress(ConnectionClosed):  # the assertions below say what closed it
        while not stop.is_set():
            if sent - len(agent.acks) >= IN_FLIGHT:
                await asyncio.sleep(0.002)
                continue
            await agent.send(
                "task.status_changed",
                # each report changes something (a task starts at 0): each one is recorded
                {"status": "running", "progress": 1 + sent % 99},
                taskId=task_id,
                id=f"{task_id}-p{sent}",
            )
            sent += 1
    return sent


async def _monitor_holders(nodes: list[Node], stop: asyncio.Event, rounds: list[int]) -> None:
    """How many nodes say they hold the ``monitor`` lease, sampled every half second."""
    async with httpx.AsyncClient(timeout=10) as http:
        while not stop.is_set():
            try:
                bodies = [(await http.get(f"{n.url}/readyz/cluster")).json() for n in nodes]
            except httpx.HTTPError:
                continue  # a round with a node unheard of says nothing
            rounds.append(sum("monitor" in body["leases"] for body in bodies))
            await asyncio.sleep(0.5)


async def test_live_agents_are_never_recorded_offline_while_three_nodes_are_under_load(
    start_cluster: Callable[..., list[Node]],
) -> None:
    nodes = start_cluster(
        LINEUP_HEARTBEAT_INTERVAL="1.5", LINEUP_LEASE_TTL="8", LINEUP_GRACE_PERIOD="3"
    )
    await until_async(lambda: any(n.holds("monitor") for n in nodes), "a monitor lease holder")
    person = Person.at(nodes[0].url)
    agents: list[tuple[Agent, str, str]] = []  # (socket, agent id, task id)
    busy: list[tuple[Agent, str]] = []
    try:
        for node in nodes:
            for i in range(BUSY_PER_NODE + IDLE_PER_NODE):
                agent_id, credential, task_id = await asyncio.to_thread(
                    _pair, person, node, f"{node.name}-{i}"
                )
                agent = await Agent.connect(node.ws_url, credential, person.workspace_id, beat=0.5)
                accepted = await agent.send("task.accepted", {"taskId": task_id}, taskId=task_id)
                await until_async(lambda a=agent, e=accepted: e in a.acks, "task.accepted acked")  # type: ignore[misc]
                agents.append((agent, agent_id, task_id))
                if i < BUSY_PER_NODE:
                    busy.append((agent, task_id))

        stop = asyncio.Event()
        holders: list[int] = []
        pushers = [asyncio.create_task(_push(a, t, stop)) for a, t in busy]
        watcher = asyncio.create_task(_monitor_holders(nodes, stop, holders))
        started = time.monotonic()
        await asyncio.sleep(LOAD_SECONDS)  # the load runs for a fixed time: nothing to await
        stop.set()
        counts = await asyncio.gather(*pushers)
        await watcher
        elapsed = time.monotonic() - started
        sent = sum(counts)
        for (agent, _), count in zip(busy, counts, strict=True):
            if agent.ws.close_code is not None:
                continue  # asserted below
            # every report acknowledged (and task.accepted before them)
            await until_async(lambda a=agent, c=count: len(a.acks) > c, "the last reports acked")  # type: ignore[misc]
        print(f"{sent} reports in {elapsed:.1f} s: {sent / elapsed:.0f}/s across three nodes")

        # the test's own loop keeps the agents beating: blocking calls go to a thread
        events = await asyncio.to_thread(_events, person)
        offline = [
            (e["payload"]["agentId"], e["occurredAt"])
            for e in events
            if e["type"] == "agent.status_changed" and e["payload"].get("status") == "offline"
        ]
        assert offline == [], f"live agents recorded offline: {offline}"
        failed = [
            e["payload"]["taskId"]
            for e in events
            if e["type"] == "task.status_changed" and e["payload"].get("status") == "failed"
        ]
        assert failed == [], f"tasks of live agents failed: {failed}"
        for agent, agent_id, _ in agents:
            assert agent.ws.close_code is None, f"agent {agent_id}'s socket was closed"
            assert not agent.errors, agent.errors[:3]
            view = await asyncio.to_thread(person.read, f"/agents/{agent_id}")
            assert view["status"] == "online", view
        assert holders and 0 not in holders, f"the monitor went without a holder: {holders}"
    finally:
        for agent, _, _ in agents:
            with contextlib.suppress(Exception):
                await agent.close()
        person.close()
