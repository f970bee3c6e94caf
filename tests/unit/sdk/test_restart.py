"""Crash and restart: durable handlers resume where they stopped, acting once (seed 001 §15)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from lineup.sdk import Agent, TaskContext
from lineup.sdk._state import StateStore

from .fakehub import AGENT, FakeHub
from .helpers import crash, running

MakeAgent = Callable[..., Agent]


async def test_a_restarted_agent_resumes_the_task_without_repeating_completed_steps(
    hub: FakeHub, make_agent: MakeAgent
):
    effects_in_the_world: list[str] = []
    runs: list[str] = []

    async def handle(ctx: TaskContext) -> str:
        runs.append(ctx.task_id)
        await ctx.progress(10, "Started")
        ticket = await ctx.step(
            "open ticket", lambda: effects_in_the_world.append("ticket") or "T-1"
        )
        await ctx.say("Opened the ticket, asking for approval.", chunk=8)
        approval = await ctx.ask_approval("Deploy now?", risk="high")
        await ctx.progress(90, "Deploying")
        return f"{ticket} approved={approval.approved}"

    first = make_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task("Deploy")
    await hub.wait_for(lambda: hub.interactions())
    await first.drain()  # every ack is in; nothing is left to resend
    deltas_before = len(hub.deltas)
    await crash(first_run)

    # The person answers while the agent is down.
    hub.resolve(hub.interactions()[0]["id"], option_id="approve")

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert runs == [task_id, task_id]  # the handler ran again, fast-forwarding
    assert effects_in_the_world == ["ticket"]  # the step's side effect happened once
    assert [(e.type, e.payload.get("progress")) for e in hub.effects] == [
        ("task.accepted", None),
        ("task.status_changed", 10),
        ("message.create", None),
        ("interaction.requested", None),
        ("task.status_changed", 90),
        ("task.status_changed", 100),
    ]
    assert hub.duplicates == []  # completed steps were not sent again
    assert len(hub.deltas) == deltas_before  # nor streamed again
    assert hub.statuses(task_id)[-1]["summary"] == "T-1 approved=True"


async def test_a_frame_unacked_at_the_crash_is_resent_with_the_same_id_and_acts_once(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.drop_after = {"task.status_changed": 1}  # recorded by the hub, ack never arrives
    stop_here = asyncio.Event()

    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(30, "Working")
        await stop_here.wait()
        return "done"

    first = make_agent(backoff=None)  # default backoff: no reconnect before the crash
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    await hub.wait_for(lambda: hub.statuses(task_id))
    await crash(first_run)

    stop_here.set()
    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert [s.get("progress") for s in hub.statuses(task_id)] == [30, 100]
    assert [d.type for d in hub.duplicates] == ["task.status_changed"]
    assert hub.duplicates[0].id == hub.effects_of("task.status_changed")[0].id


async def test_an_answer_that_arrived_just_before_a_crash_is_not_lost(
    hub: FakeHub, make_agent: MakeAgent, state_dir: Path
):
    hold = asyncio.Event()
    answers: list[bool] = []

    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(1)
        await hold.wait()  # the first run is still busy when the answer comes
        approval = await ctx.ask_approval("Go?")
        answers.append(approval.approved)
        return "ok"

    async def ask_first(ctx: TaskContext) -> str:
        await ctx.progress(1)
        await ctx.ask_approval("Go?")
        await hold.wait()
        return "unreachable"

    first = make_agent()
    first.task(ask_first)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    await hub.wait_for(lambda: hub.interactions())
    hub.resolve(hub.interactions()[0]["id"], option_id="approve")
    hub.assign_task("Marker")  # read after the answer; once it is journaled, so is the answer
    await hub.wait_for(lambda: len(hub.effects_of("task.accepted")) == 2)
    await crash(first_run)
    hub.log.clear()  # the hub could not replay anything now: the journal must suffice

    hold.set()
    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert answers == [True]


async def test_a_task_cancelled_while_the_agent_was_down_is_reported_cancelled(
    hub: FakeHub, make_agent: MakeAgent
):
    working = asyncio.Event()

    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(5)
        working.set()
        await asyncio.Event().wait()
        return "never"

    first = make_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    async with asyncio.timeout(5):
        await working.wait()
    await crash(first_run)
    hub.cancel(task_id, "Too late")

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")
        await second.drain()

    assert [s["status"] for s in hub.statuses(task_id)] == ["running", "cancelled"]


async def test_a_finished_task_is_never_run_again(
    hub: FakeHub, make_agent: MakeAgent, state_dir: Path
):
    runs: list[str] = []

    async def handle(ctx: TaskContext) -> str:
        runs.append(ctx.task_id)
        return "done"

    first = make_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    await crash(first_run)

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: len(hub.hellos) == 2)
        await second.drain()

    assert runs == [task_id]
    store = StateStore(state_dir / StateStore.FILE_NAME, AGENT)
    try:
        job = store.job(task_id)
        assert job is not None and job.done
        assert store.step(task_id, 0) is None  # a finished task's journal is dropped
        assert store.outbox_size() == 0
    finally:
        store.close()


async def test_a_resumed_handler_that_takes_different_steps_fails_the_task(
    hub: FakeHub, make_agent: MakeAgent
):
    async def original(ctx: TaskContext) -> str:
        await ctx.progress(10)
        await asyncio.Event().wait()
        return "never"

    async def changed(ctx: TaskContext) -> str:
        await ctx.artifact("Report", "https://example.test/r")
        return "changed"

    first = make_agent()
    first.task(original)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    await hub.wait_for(lambda: hub.statuses(task_id))
    await first.drain()
    await crash(first_run)

    second = make_agent()
    second.task(changed)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "failed")

    assert hub.statuses(task_id)[-1]["error"].startswith("JournalMismatch: Step 1")
    assert hub.effects_of("artifact.created") == []


def test_the_state_of_one_agent_is_refused_to_another(state_dir: Path):
    StateStore(state_dir / "lineup-agent.db", AGENT).close()
    with pytest.raises(ValueError, match="belongs to agent"):
        StateStore(state_dir / "lineup-agent.db", "agent_other")


def test_the_state_file_is_private_to_its_owner(state_dir: Path):
    store = StateStore(state_dir / "lineup-agent.db", AGENT)
    store.close()
    assert (state_dir / "lineup-agent.db").stat().st_mode & 0o077 == 0


def test_the_cursor_only_moves_forward_except_on_resync(state_dir: Path):
    store = StateStore(state_dir / "lineup-agent.db", AGENT)
    try:
        store.advance(7)
        store.advance(3)
        assert store.cursor == 7
        store.reset_cursor(2)
        assert store.cursor == 2
    finally:
        store.close()
