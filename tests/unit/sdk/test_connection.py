"""The connection (seed 001 §7.4, §10): hello with a cursor, outbox resends, refusal, beats."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from unittest.mock import Mock

import pytest

from lineup.protocol.errors import Conflict, ErrorCode
from lineup.protocol.events import SystemResyncRequired
from lineup.sdk import Agent, ConnectionRefusedByHub, TaskContext
from lineup.sdk._downlink import Downlink
from lineup.sdk._state import StateStore

from .fakehub import FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]


async def test_hello_carries_the_last_processed_sequence(hub: FakeHub, make_agent: MakeAgent):
    async def handle(ctx: TaskContext) -> str:
        return "done"

    first = make_agent()
    first.task(handle)
    async with running(first):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assigned = hub.log[-1].sequence

    again = make_agent()
    again.task(handle)
    async with running(again):
        await hub.wait_for(lambda: len(hub.hellos) == 2)

    assert hub.hellos[0]["lastSequence"] == 0
    assert hub.hellos[1]["lastSequence"] == assigned
    assert len(hub.effects_of("task.accepted")) == 1


async def test_hello_declares_runtime_version_and_capabilities(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent(agent_version="2.5", capabilities=["tasks", "deploy"])
    async with running(agent):
        await hub.wait_for(lambda: hub.hellos)
    assert hub.hellos[0]["agentVersion"] == "2.5"
    assert hub.hellos[0]["runtime"] == "python"
    assert hub.hellos[0]["capabilities"] == ["tasks", "deploy"]
    hello = next(e for e in hub.received if e.type == "agent.hello")
    assert hello.workspace_id == hub.workspace_id


async def test_every_uplink_is_resent_after_a_dropped_connection_and_takes_effect_once(
    hub: FakeHub, make_agent: MakeAgent
):
    # The hub records each of these, then the connection drops before the ack reaches the agent.
    hub.drop_after = {"task.accepted": 1, "task.status_changed": 2, "artifact.created": 1}
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(50, "Halfway")
        await ctx.artifact("Report", "https://example.test/report.html")
        return "Done"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
        await agent.drain()

    kinds = [e.type for e in hub.effects]
    assert kinds == [
        "task.accepted",
        "task.status_changed",
        "artifact.created",
        "task.status_changed",
    ]
    assert len({e.id for e in hub.effects}) == 4
    assert {e.id for e in hub.duplicates} == {e.id for e in hub.effects}  # same ids resent
    assert len(hub.connections) == 5


async def test_tasks_assigned_while_the_agent_was_offline_are_replayed_in_order(
    hub: FakeHub, make_agent: MakeAgent
):
    first = hub.assign_task("First")
    second = hub.assign_task("Second")
    agent = make_agent()
    titles: list[str] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        titles.append(ctx.title)

    async with running(agent):
        await hub.wait_for(
            lambda: hub.final_status(first) == hub.final_status(second) == "succeeded"
        )
    assert titles == ["First", "Second"]


async def test_a_retryable_error_is_retried_with_the_same_id(hub: FakeHub, make_agent: MakeAgent):
    hub.refuse = {"task.status_changed": [ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE]}
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        await ctx.progress(20, "Working")

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    progress = hub.statuses(task_id)[0]
    assert progress == {"status": "running", "progress": 20, "summary": "Working"}
    sent = [e for e in hub.received if e.type == "task.status_changed"]
    assert len(sent) == 4  # refused twice, then accepted; then the final status
    assert sent[0].id == sent[1].id == sent[2].id


async def test_a_final_error_for_a_frame_reaches_the_caller_as_the_taxonomy_exception(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.refuse = {"artifact.created": [ErrorCode.CONFLICT]}
    agent = make_agent()
    caught: list[Conflict] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.artifact("Report", "https://example.test/r")
        except Conflict as exc:
            caught.append(exc)
        return "carried on"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert len(caught) == 1
    assert caught[0].code is ErrorCode.CONFLICT
    assert hub.effects_of("artifact.created") == []
    sent = [e for e in hub.received if e.type == "artifact.created"]
    assert len(sent) == 1  # a final error is not retried


async def test_a_revoked_credential_raises_connection_refused_without_retrying(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.revoked = True
    agent = make_agent()
    with pytest.raises(ConnectionRefusedByHub) as caught:
        async with asyncio.timeout(5):
            await agent.run()

    refusal = caught.value
    assert refusal.code == "unauthenticated"
    assert refusal.diagnostic == "LNP-AUTH-REVOKED"
    assert refusal.next_step == "Pair the agent again from the Agents page."
    assert "LNP-AUTH-REVOKED" in str(refusal)
    assert hub.connect_attempts == 1
    assert not agent.connected


async def test_a_refusal_close_code_without_an_error_frame_is_final_too(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    async with asyncio.timeout(5):
        runner = asyncio.create_task(agent.run())
        await hub.wait_for(lambda: hub.live is not None)
        assert hub.live is not None
        hub.live.shut(4403, "This agent was moved to another workspace.")
        with pytest.raises(ConnectionRefusedByHub) as caught:
            await runner
    assert caught.value.code == "forbidden"
    assert caught.value.close_code == 4403
    assert hub.connect_attempts == 1


async def test_network_errors_are_retried_with_backoff_until_connected(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.fail_connects = 3
    agent = make_agent()
    async with running(agent):
        await hub.wait_for(lambda: hub.hellos)
    assert hub.connect_attempts == 4


async def test_heartbeats_are_sent_at_the_configured_interval(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent(heartbeat_interval=0.01)
    async with running(agent):
        await hub.wait_for(lambda: len(hub.heartbeats) >= 3)
        assert agent.connected


async def test_without_an_override_the_hubs_heartbeat_interval_is_used(make_agent: MakeAgent):
    hub = FakeHub(heartbeat_interval_ms=100)
    agent = make_agent(heartbeat_interval=None, transport=hub)
    async with running(agent):
        await hub.wait_for(lambda: len(hub.heartbeats) >= 2)


async def test_resync_required_keeps_the_agents_cursor_for_the_replay_that_follows(
    hub: FakeHub, make_agent: MakeAgent, caplog: pytest.LogCaptureFixture
):
    hub.sequence = 41
    hub.earliest_sequence = 30
    agent = make_agent()
    with caplog.at_level(logging.WARNING, logger="lineup.sdk"):
        async with running(agent):
            await hub.wait_for(lambda: hub.hellos)
            hub.drop()
            await hub.wait_for(lambda: len(hub.hellos) == 2)
    # the hub replays what it kept for the agent after its own cursor: nothing is skipped
    assert hub.hellos[0]["lastSequence"] == 0
    assert hub.hellos[1]["lastSequence"] == 0
    assert any("compacted its log" in r.getMessage() for r in caplog.records)


def test_a_resync_without_resume_after_moves_the_cursor_to_the_latest(tmp_path: Path):
    """An older hub replays nothing after the resync: the cursor jumps to its latest."""
    store = StateStore(tmp_path / StateStore.FILE_NAME, "agent_1")
    try:
        downlink = Downlink(lambda: store, Mock(), Mock())
        downlink.resync(SystemResyncRequired(reason="pruned", latest_sequence=41))
        assert store.cursor == 41
        downlink.resync(
            SystemResyncRequired(reason="compacted", latest_sequence=90, resume_after=12)
        )
        assert store.cursor == 12
    finally:
        store.close()


async def test_stop_returns_from_run_while_waiting_to_reconnect(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.fail_connects = 1_000_000
    agent = make_agent()
    runner = asyncio.create_task(agent.run())
    await hub.wait_for(lambda: hub.connect_attempts >= 2)
    agent.stop()
    async with asyncio.timeout(5):
        await runner


async def test_async_with_runs_the_agent_for_the_block(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    async with agent:
        await hub.wait_for(lambda: hub.hellos)
    assert not agent.connected
    assert hub.connections[-1].closed


async def test_run_refuses_to_start_twice(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    async with running(agent):
        await hub.wait_for(lambda: hub.hellos)
        with pytest.raises(RuntimeError, match="already running"):
            await agent.run()
