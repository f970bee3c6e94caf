"""``ctx.activity``: transcript entries reach the hub through the outbox, in order, with
command output coalesced and large output uploaded as a file and referenced."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lineup.protocol.activity import MAX_INLINE_OUTPUT
from lineup.protocol.errors import InvalidArgument
from lineup.sdk import Agent, TaskContext

from .fakehub import FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]


@pytest.fixture
def make_uploading_agent(make_agent: MakeAgent, hub: FakeHub) -> MakeAgent:
    return lambda **options: make_agent(http_transport=hub.http, **options)


def _entries(hub: FakeHub, task_id: str) -> list[tuple[str, dict]]:
    return [
        (e.type, dict(e.payload))
        for e in hub.effects
        if e.type.startswith("activity.") and e.task_id == task_id
    ]


async def test_a_tool_call_a_command_a_diff_and_usage_reach_the_hub_in_order(
    hub: FakeHub, make_uploading_agent: MakeAgent
):
    agent = make_uploading_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        call = await ctx.activity.tool_call("read_file", {"path": "README.md"})
        await call.finish({"text": "# LineUp"})
        command = await ctx.activity.command("pytest -q", "/srv/app")
        for _ in range(500):  # 500 small writes: a few chunks, not 500 events
            await command.output(".")
        await command.output("1 failed\n", stream="stderr")
        await command.finish(1)
        await ctx.activity.file_change("app.py", "-x = 1\n+x = 2\n")
        await ctx.activity.usage(1200, 340, context_window=200_000)
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Fix the tests")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    entries = _entries(hub, task_id)
    kinds = [(t, p.get("kind")) for t, p in entries if t != "activity.output"]
    assert kinds == [
        ("activity.started", "tool_call"),
        ("activity.finished", None),
        ("activity.started", "command"),
        ("activity.finished", None),
        ("activity.started", "file_change"),
        ("activity.usage", None),
    ]
    outputs = [p for t, p in entries if t == "activity.output"]
    assert len(outputs) == 2  # stdout coalesced into one chunk, then stderr
    assert outputs[0] == {"activityId": outputs[0]["activityId"], "chunk": "." * 500, "offset": 0}
    assert outputs[1]["stream"] == "stderr" and outputs[1]["offset"] == 500
    finished = [p for t, p in entries if t == "activity.finished"][1]
    assert finished["exitCode"] == 1 and finished["status"] == "failed"
    assert finished["outputChars"] == 509 and "outputUrl" not in finished
    assert entries[1] == ("activity.finished", entries[1][1])
    assert entries[1][1]["result"] == {"text": "# LineUp"}


async def test_output_past_the_inline_limit_is_uploaded_and_referenced(
    hub: FakeHub, make_uploading_agent: MakeAgent
):
    agent = make_uploading_agent()
    line = "x" * 99 + "\n"
    lines = MAX_INLINE_OUTPUT // 100 + 500

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        command = await ctx.activity.command("yes x")
        for _ in range(lines):
            await command.output(line)
        await command.finish(0)
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Print a lot")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    entries = _entries(hub, task_id)
    inline = "".join(p["chunk"] for t, p in entries if t == "activity.output")
    assert len(inline) == MAX_INLINE_OUTPUT
    finished = entries[-1][1]
    assert finished["outputChars"] == lines * 100
    [stored] = hub.files.values()
    assert finished["outputUrl"] == stored["url"]
    assert stored["content"] == (line * lines).encode()


async def test_an_invalid_entry_is_refused_before_anything_is_sent(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    refused: list[Exception] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.activity.usage(-1, 0)
        except InvalidArgument as exc:
            refused.append(exc)
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Count")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert refused and "input_tokens" in str(refused[0].details)
    assert _entries(hub, task_id) == []
