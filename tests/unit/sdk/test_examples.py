"""The examples run: the demo agent completes the MVP loop and the scheduling scenario
against the in-memory hub."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lineup.protocol.envelope import Envelope
from lineup.sdk import AgentConfig, Backoff
from lineup.sdk import demo as demo_module

from .fakehub import FakeHub
from .helpers import running

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _options(hub: FakeHub, state_dir: Path) -> dict[str, Any]:
    return {
        "state_dir": state_dir,
        "transport": hub,
        "heartbeat_interval": 3600.0,
        "backoff": Backoff(initial=0.001, maximum=0.005),
        "http_transport": hub.http,
    }


async def test_the_demo_agent_completes_the_mvp_loop(
    hub: FakeHub, config: AgentConfig, state_dir: Path, tmp_path: Path
):
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )

    async with running(agent):
        task_id = hub.assign_task("Rotate the API keys")
        await hub.wait_for(lambda: hub.interactions())
        hub.resolve(hub.interactions()[0]["id"], option_id="approve")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
        hub.deliver_message("Thanks!")
        await hub.wait_for(lambda: len(hub.effects_of("message.create")) == 2)

    progress = [s.get("progress") for s in hub.statuses(task_id)]
    assert progress == [10, 40, 70, 100]
    assert len(hub.effects_of("task.child_created")) == 1
    artifact = hub.effects_of("artifact.created")[0].payload
    [report] = hub.files.values()
    assert artifact["url"] == report["url"]  # a file people can open, not a path on this machine
    assert report["content"].decode().startswith("# Rotate the API keys")
    assert (report["name"], artifact["mimeType"]) == (f"{task_id}.md", "text/markdown")
    replies = [e.payload["content"] for e in hub.effects_of("message.create")]
    assert replies[0].startswith("Done: Ana approved")
    assert replies[1] == "Noted: “Thanks!”."


async def test_the_demo_agent_declines_cleanly(
    hub: FakeHub, config: AgentConfig, state_dir: Path, tmp_path: Path
):
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )
    async with running(agent):
        task_id = hub.assign_task("Delete old backups")
        await hub.wait_for(lambda: hub.interactions())
        hub.resolve(hub.interactions()[0]["id"], option_id="reject", text="Keep them")
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")

    assert hub.statuses(task_id)[-1]["summary"] == "Declined; nothing was changed"
    assert hub.effects_of("artifact.created") == []
    assert "(Keep them)" in hub.effects_of("message.create")[0].payload["content"]


def test_the_examples_import():
    assert hasattr(_load("echo_agent"), "main")
    assert _load("demo_agent").run is demo_module.run


def _scheduling(hub: FakeHub, *, publish: bool = True) -> None:
    """The scheduling provider as the hub lists it, answering the reads at once and putting
    the publish in front of a person."""

    def spec(name: str, effect: str, mode: str = "sync") -> dict[str, Any]:
        return {
            "id": name,
            "provider": "scheduling",
            "effect": effect,
            "mode": mode,
            "description": name,
            "inputSchema": {"type": "object"},
            "instances": ["plant-1"],
        }

    hub.capability_catalogue = [
        spec("scheduling.orders.query", "read"),
        spec("scheduling.resources.load", "read"),
        spec("scheduling.schedule.preview", "read"),
    ]
    if publish:
        hub.capability_catalogue.append(spec("scheduling.schedule.publish", "write", "async"))
    resources = [{"id": "M1", "name": "Press 1"}, {"id": "M2", "name": "Lathe"}]
    hub.capability_script = {
        "scheduling.orders.query": [
            {
                "status": "succeeded",
                "output": {
                    "orders": [
                        {"id": "SO-1", "product": "gear", "quantity": 5, "dueDate": "2026-12-03"},
                        {"id": "SO-2", "product": "axle", "quantity": 9, "dueDate": "2026-12-04"},
                    ]
                },
            }
        ],
        "scheduling.resources.load": [
            {
                "status": "succeeded",
                "output": {
                    "scheduleVersion": 3,
                    "resources": resources,
                    "load": [
                        {"resourceId": "M1", "date": "2026-12-02", "loadPercent": 80.0},
                        {"resourceId": "M2", "date": "2026-12-02", "loadPercent": 40.0},
                    ],
                },
            }
        ],
        "scheduling.schedule.preview": [
            {
                "status": "succeeded",
                "output": {
                    "draftId": "draft_7",
                    "basedOnVersion": 3,
                    "assignments": [],
                    "lateOrders": [
                        {
                            "orderId": "SO-2",
                            "dueDate": "2026-12-04",
                            "finishDate": "2026-12-06",
                            "daysLate": 2,
                        }
                    ],
                    "load": [
                        {"resourceId": "M1", "date": "2026-12-03", "loadPercent": 125.0},
                        {"resourceId": "M2", "date": "2026-12-03", "loadPercent": 60.0},
                    ],
                },
            }
        ],
        "scheduling.schedule.publish": [
            {"status": "waiting_for_approval", "approvalId": "apr_1"},
        ],
    }


async def _publish_invoke(hub: FakeHub) -> Envelope:
    await hub.wait_for(
        lambda: any(i.payload["capability"] == "scheduling.schedule.publish" for i in hub.invokes())
    )
    return hub.invokes()[-1]


async def test_the_demo_agent_schedules_reports_and_publishes_once_approved(
    hub: FakeHub, config: AgentConfig, state_dir: Path, tmp_path: Path
):
    _scheduling(hub)
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )
    async with running(agent):
        task_id = hub.assign_task("Schedule next week's production")
        publish = await _publish_invoke(hub)
        hub.capability_result(publish, "accepted", executionId="exe_1")
        hub.capability_result(publish, "succeeded", output={"publishedVersion": 4})
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert [i.payload["capability"] for i in hub.invokes()] == [
        "scheduling.orders.query",
        "scheduling.resources.load",
        "scheduling.schedule.preview",
        "scheduling.schedule.publish",
    ]
    assert publish.payload["params"] == {"draftId": "draft_7", "basedOnVersion": 3}
    assert all(i.task_id == task_id for i in hub.invokes())
    report, published = (e.payload["content"] for e in hub.effects_of("message.create"))
    assert "2 open order(s)" in report and "SO-2" in report and "2 day(s) late" in report
    assert "Press 1 125% on 2026-12-03" in report
    assert published == "Published: trial draft_7 is now schedule version 4."
    assert hub.statuses(task_id)[-1]["summary"] == "Published schedule version 4"
    assert hub.interactions() == []  # the approval is the hub's confirm card, not the agent's


@pytest.mark.parametrize(
    ("status", "error", "said"),
    [
        ("rejected", {"code": "forbidden", "message": "Rejected by Ana: wait for Monday."}, "Ana"),
        ("rejected", {"code": "conflict", "message": "The schedule changed."}, "changed after"),
        ("failed", {"code": "conflict", "message": "Stale draft."}, "changed after"),
    ],
)
async def test_the_demo_agent_says_why_a_schedule_was_not_published(
    hub: FakeHub,
    config: AgentConfig,
    state_dir: Path,
    tmp_path: Path,
    status: str,
    error: dict[str, Any],
    said: str,
):
    _scheduling(hub)
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )
    async with running(agent):
        task_id = hub.assign_task("排产: next week")
        hub.capability_result(await _publish_invoke(hub), status, error=error)
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")
    last = hub.effects_of("message.create")[-1].payload["content"]
    assert last.startswith("Not published") and said in last
    assert hub.statuses(task_id)[-1]["summary"] == f"Not published ({status})"


async def test_the_demo_agent_says_politely_when_it_has_no_scheduling_capabilities(
    hub: FakeHub, config: AgentConfig, state_dir: Path, tmp_path: Path
):
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )
    async with running(agent):
        task_id = hub.assign_task("Schedule the orders")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    [reply] = hub.effects_of("message.create")
    assert reply.payload["content"].startswith("Sorry — I have no access to a scheduling system")
    assert hub.invokes() == [] and hub.interactions() == []


async def test_the_demo_agent_makes_a_trial_but_does_not_publish_where_it_may_only_read(
    hub: FakeHub, config: AgentConfig, state_dir: Path, tmp_path: Path
):
    _scheduling(hub, publish=False)
    agent = demo_module.build_agent(
        config, work_seconds=0, reports_dir=tmp_path / "reports", **_options(hub, state_dir)
    )
    async with running(agent):
        hub.deliver_message("Can you schedule the open orders?")
        await hub.wait_for(lambda: len(hub.effects_of("message.create")) == 2)
    report, draft = (e.payload["content"] for e in hub.effects_of("message.create"))
    assert "Trial schedule draft_7" in report
    assert draft.startswith("I may not publish schedules here, so trial draft_7 stays a draft")
    assert len(hub.invokes()) == 3
    assert all(i.conversation_id == "conv_1" for i in hub.invokes())
