"""The hub ended a task itself (a cancel the agent did not confirm in time, seed 001 §11): the
handler stops, the agent reports nothing more for it, and what it still had queued is dropped
or, refused by the hub as ``task_ended``, never resent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from lineup.protocol.errors import ErrorCode
from lineup.sdk import Agent, TaskCancelled, TaskContext, TaskEnded
from lineup.sdk._state import StateStore

from .fakehub import AGENT, FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]


def _job_state(state_dir: Path, task_id: str) -> tuple[str, str | None]:
    store = StateStore(state_dir / StateStore.FILE_NAME, AGENT)
    try:
        row = store._db.execute(
            "SELECT state, outcome FROM jobs WHERE scope = ?", (task_id,)
        ).fetchone()
        assert store.outbox_size() == 0, "nothing is left queued for the hub"
        return str(row[0]), row[1]
    finally:
        store.close()


async def test_a_running_handler_is_stopped_and_nothing_is_reported_after_the_hubs_end(
    hub: FakeHub, make_agent: MakeAgent, state_dir: Path
):
    agent = make_agent()
    working = asyncio.Event()
    seen: dict[str, object] = {}

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        if ctx.title == "Later":
            return "done"
        await ctx.progress(5, "Working")
        working.set()
        try:
            await asyncio.Event().wait()  # stuck: it never gets to confirm a cancel
        except asyncio.CancelledError:
            seen["ended_by_hub"] = ctx.ended_by_hub
            try:
                await ctx.ask_input("Why?")  # cleanup that asks a person is refused at once
            except TaskEnded as ended:
                seen["raised"] = (type(ended), ended.cause, isinstance(ended, TaskCancelled))
            raise
        return "never"

    async with running(agent):
        task_id = hub.assign_task()
        async with asyncio.timeout(5):
            await working.wait()
        hub.end_task(task_id)
        hub.assign_task("Later")  # proves the end has been read by the time this is done
        await hub.wait_for(lambda: len(hub.effects_of("task.accepted")) == 2)
        await agent.drain()

    assert seen == {"ended_by_hub": "cancel_timeout", "raised": (TaskEnded, "cancel_timeout", True)}
    assert hub.statuses(task_id) == [{"status": "running", "progress": 5, "summary": "Working"}]
    assert hub.interactions() == []
    assert _job_state(state_dir, task_id) == ("done", "ended:cancel_timeout")


async def test_reports_queued_while_away_are_dropped_when_the_agent_hears_of_the_end(
    hub: FakeHub, make_agent: MakeAgent, state_dir: Path
):
    agent = make_agent()
    release, reporting = asyncio.Event(), asyncio.Event()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        if ctx.title == "Later":
            return "done"
        await release.wait()
        reporting.set()
        await ctx.progress(90, "Almost")  # queued while the hub is unreachable
        return "done"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.effects_of("task.accepted"))
        hub.fail_connects = 1_000_000  # the agent is cut off ...
        hub.drop()
        release.set()
        async with asyncio.timeout(5):
            await reporting.wait()  # the handler runs on, its report queues up
        hub.end_task(task_id)  # ... while the hub ends its task
        hub.fail_connects = 0
        await hub.wait_for(lambda: len(hub.hellos) == 2)
        hub.assign_task("Later")
        await hub.wait_for(lambda: len(hub.effects_of("task.accepted")) == 2)
        await agent.drain()

    assert hub.effects_of("task.status_changed", task_id) == [], "nothing late was recorded"
    assert [e.type for e in hub.received if e.task_id == task_id] == ["task.accepted"]
    assert _job_state(state_dir, task_id)[0] == "done"


async def test_a_report_the_hub_refuses_as_task_ended_is_not_resent_and_ends_the_job(
    hub: FakeHub, make_agent: MakeAgent, state_dir: Path
):
    agent = make_agent()
    hub.refuse["task.status_changed"] = [ErrorCode.CONFLICT]
    hub.refusal_details["task.status_changed"] = {
        "reason": "task_ended",
        "status": "cancelled",
        "cause": "cancel_timeout",
    }

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        if ctx.title == "Later":
            return "done"
        await ctx.progress(50, "Halfway")  # the hub ended the task before it heard of it
        return "never reported"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.refuse["task.status_changed"] == [])
        hub.assign_task("Later")
        await hub.wait_for(lambda: len(hub.effects_of("task.accepted")) == 2)
        await agent.drain()

    sent = [e for e in hub.received if e.type == "task.status_changed" and e.task_id == task_id]
    assert len(sent) == 1, "the refused report was sent once, and no final report followed"
    assert hub.effects_of("task.status_changed", task_id) == []
    assert _job_state(state_dir, task_id) == ("done", "ended")
