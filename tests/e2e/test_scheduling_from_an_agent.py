"""Seed 003 §8's three lines, end to end with real processes: the demo agent, asked in a
project conversation, queries the orders and the machines' load, makes a trial schedule, and
publishes it — which waits for the person's approval on its confirm card — through the hub's
in-tree scheduling system; the published version is in the system and in the run record."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.e2e.processes import AgentProcess, HubProcess
from tests.support.people import Person
from tests.support.waiting import until


def test_query_trial_schedule_and_publish_run_from_an_agent(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    project = ana.send("/projects", {"name": "Plant 1", "context": "Assembly"}, 201)["id"]
    ana.send(
        "/policy/rules",
        {
            "capability": "scheduling.*",
            "effect": "allow",
            "projectId": project,
            "roles": ["owner", "editor"],
        },
        201,
    )
    code = ana.send("/pairing-codes", {}, 201)["code"]
    agent = AgentProcess(hub.url, tmp_path / "agent", code).start()
    try:
        agent_id = until(
            lambda: next(
                (a["id"] for a in ana.read("/agents")["agents"] if a["status"] == "online"), None
            ),
            "the demo agent to come online",
        )
        ana.confirm_agent(agent_id)  # what its person does once it shows up
        conversation = ana.send(
            "/conversations",
            {"title": "This week's plan", "agentIds": [agent_id], "projectId": project},
            201,
        )["id"]
        ana.send(
            f"/conversations/{conversation}/messages",
            {
                "content": "Please make this week's schedule and publish it.",
                "targetAgentId": agent_id,
            },
            201,
        )
        card = until(
            lambda: next(iter(ana.read("/approvals?view=waiting")["approvals"]), None),
            "the publish confirm card",
            timeout=60,
        )
        assert card["capability"] == "scheduling.schedule.publish"
        assert card["instance"] == "plant-1"
        assert card["resourceVersion"] == "1"
        assert card["summary"] and card["impact"]
        reads = ana.read(f"/executions?conversationId={conversation}")["executions"]
        assert {e["capability"] for e in reads} >= {
            "scheduling.orders.query",
            "scheduling.resources.load",
            "scheduling.schedule.preview",
        }
        assert all(e["status"] == "succeeded" for e in reads)

        decided = ana.send(f"/approvals/{card['id']}/decision", {"decision": "approve"})
        run = until(
            lambda: (
                (r := ana.read(f"/executions/{decided['executionId']}"))["execution"]["status"]
                == "succeeded"
                and r
            ),
            "the publication to end",
            timeout=60,
        )
        assert run["execution"]["output"]["publishedVersion"] == 2
        assert [e["kind"] for e in run["audit"]][-1] == "execution.finished"

        def told() -> bool:
            messages = ana.read(f"/conversations/{conversation}/messages")["messages"]
            return any("version 2" in (m.get("content") or "") for m in messages)

        until(told, "the agent to say the schedule was published", timeout=60)
        plant = hub.home / "providers" / "scheduling" / "plant-1.db"
        with sqlite3.connect(plant) as db:
            versions = [row[0] for row in db.execute("SELECT version FROM schedules ORDER BY 1")]
        assert versions == [1, 2]
    finally:
        agent.stop()
