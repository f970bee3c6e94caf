"""The examples run: the demo agent completes the MVP loop against the in-memory hub."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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
