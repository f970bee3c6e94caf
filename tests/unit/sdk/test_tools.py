"""Tools on people's apps from the SDK: list, call, typed helpers, durability."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from lineup.protocol.builtin_tools import BUILTIN_NAMES
from lineup.protocol.errors import ErrorCode, InvalidArgument, NotFound, Unavailable
from lineup.sdk import Agent, Canvas, RequestWithdrawn, TaskContext, ToolReply

from .fakehub import FakeHub
from .helpers import crash, running

MakeAgent = Callable[..., Agent]


async def test_tools_list_returns_the_tools_the_hub_says_the_apps_offer(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    async with running(agent):
        listed = await agent.tools.list()
        assert {t["name"] for t in listed} == BUILTIN_NAMES
        hub.tool_catalogue = [{"name": "weather", "type": "action", "inputSchema": {}}]
        assert [t["name"] for t in await agent.tools.list()] == ["weather"]
    assert [q.payload for q in hub.tool_queries] == [{"tools": []}, {"tools": []}]
    assert hub.effects == []  # a query is not an event


async def test_using_tools_outside_a_running_agent_says_so(make_agent: MakeAgent):
    agent = make_agent()
    with pytest.raises(RuntimeError, match="not running"):
        await agent.tools.list()


async def test_a_choice_in_a_task_is_a_tool_call_of_the_task_and_returns_the_option(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    picked: list[str] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        picked.append(await ctx.tools.choice("Deploy where?", ["test", "staging"]))
        return picked[-1]

    async with running(agent):
        task_id = hub.assign_task()
        call = await hub.next_tool_call(1)
        assert call.payload == {
            "call_id": call.payload["call_id"],
            "name": "choice",
            "action": "select",
            "arguments": {"question": "Deploy where?", "options": ["test", "staging"]},
        }
        assert call.task_id == task_id and call.conversation_id == "conv_1"
        hub.answer_tool(call, {"message": "staging", "index": 1})
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert picked == ["staging"]


async def test_the_typed_helpers_return_typed_values(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    seen: dict[str, Any] = {}

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        seen["confirm"] = await ctx.tools.confirm("Restart?")
        seen["input"] = await ctx.tools.input("Email?", "email", placeholder="you@x.y")
        seen["sum"] = await ctx.tools.calculator.add(2, 3)
        seen["quotient"] = await ctx.tools.calculator.divide(1, 4)
        canvas = await ctx.tools.canvas.open(800, 600)
        seen["canvas"] = canvas
        await canvas.draw("M10 10 L50 50", color="red", width=3)
        await canvas.undo()
        await canvas.clear()
        await canvas.close()
        seen["raw"] = await ctx.tools.call("canvas", "open", width=10, height=20)

    answers = [
        {"message": "yes", "confirmed": True},
        {"message": "ana@example.test"},
        {"message": "5", "value": 5},
        {"message": "0.25", "value": 0.25},
        {"message": "instance_id: inst_1", "instance_id": "inst_1"},
        {"message": "drawn"},
        {"message": "undone"},
        {"message": "cleared"},
        {"message": "closed"},
        {"message": "instance_id: inst_2", "instance_id": "inst_2"},
    ]
    async with running(agent):
        task_id = hub.assign_task()
        for number, answer in enumerate(answers, start=1):
            hub.answer_tool(await hub.next_tool_call(number), answer)
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    calls = [
        (c.payload["name"], c.payload.get("action"), c.payload["arguments"])
        for c in hub.tool_calls()
    ]
    assert calls[:5] == [
        ("confirm", None, {"message": "Restart?"}),
        ("input", None, {"question": "Email?", "format": "email", "placeholder": "you@x.y"}),
        ("calculator", "add", {"a": 2, "b": 3}),
        ("calculator", "divide", {"a": 1, "b": 4}),
        ("canvas", "open", {"width": 800, "height": 600}),
    ]
    assert calls[5] == (
        "canvas",
        "draw",
        {"instance_id": "inst_1", "path": "M10 10 L50 50", "color": "red", "width": 3},
    )
    assert [c[1] for c in calls[6:9]] == ["undo", "clear", "close"]
    assert all(c[2] == {"instance_id": "inst_1"} for c in calls[6:9])
    assert seen["confirm"] is True and seen["input"] == "ana@example.test"
    assert (seen["sum"], seen["quotient"]) == (5, 0.25)
    assert isinstance(seen["canvas"], Canvas) and seen["canvas"].instance_id == "inst_1"
    raw: ToolReply = seen["raw"]
    assert (raw.name, raw.action, raw.message) == ("canvas", "open", "instance_id: inst_2")
    assert raw.data["instance_id"] == "inst_2"
    assert len({c.payload["call_id"] for c in hub.tool_calls()}) == len(answers)


async def test_an_error_answer_raises_the_taxonomy_exception(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    raised: list[BaseException] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        try:
            await ctx.tools.calculator.divide(1, 0)
        except InvalidArgument as exc:
            raised.append(exc)
        try:
            await ctx.tools.choice("Now?", ["yes", "later"], timeout_ms=50)
        except Unavailable as exc:
            raised.append(exc)

    async with running(agent):
        task_id = hub.assign_task()
        divide = await hub.next_tool_call(1)
        hub.answer_tool(
            divide, error={"code": "invalid_argument", "message": "Cannot divide by zero."}
        )
        choice = await hub.next_tool_call(2)
        assert choice.payload["timeout_ms"] == 50
        hub.answer_tool(choice, error={"code": "unavailable", "message": "No app answered."})
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert [type(e) for e in raised] == [InvalidArgument, Unavailable]
    assert raised[0].details["call_id"] == divide.payload["call_id"]
    assert raised[0].details["tool"] == "calculator"


async def test_a_call_the_hub_withdrew_raises_request_withdrawn(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    async with running(agent):
        waiting = asyncio.create_task(agent.tools.confirm("Ready?"))
        call = await hub.next_tool_call(1)
        hub.withdraw_tool_call(call.payload["call_id"])
        with pytest.raises(RequestWithdrawn) as raised:
            await waiting
    assert raised.value.request_id == call.payload["call_id"]
    assert raised.value.reason == "The task was cancelled."


async def test_a_call_the_hub_refuses_raises_its_error(hub: FakeHub, make_agent: MakeAgent):
    hub.refuse["tool.call"] = [ErrorCode.NOT_FOUND]
    agent = make_agent()
    async with running(agent):
        with pytest.raises(NotFound):
            await agent.tools.call("fax", None, to="+33")


async def test_an_agent_level_call_waits_for_the_answer(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    async with running(agent):
        waiting = asyncio.create_task(agent.tools.confirm("Ready?"))
        call = await hub.next_tool_call(1)
        assert call.task_id is None and call.conversation_id is None
        hub.answer_tool(call, {"message": "no", "confirmed": False})
        assert await waiting is False


async def test_a_call_resent_after_a_restart_keeps_its_call_id_and_uses_the_answer_given_meanwhile(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.drop_after = {"tool.call": 1}  # recorded, but the ack never arrives before the crash
    results: list[str] = []

    async def handle(ctx: TaskContext) -> str:
        results.append(await ctx.tools.input("Release name?"))
        return results[-1]

    first = make_agent(backoff=None)
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    call = await hub.next_tool_call(1)
    await crash(first_run)

    hub.answer_tool(call, {"message": "Aurora"})  # the person answers while the agent is down

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert results == ["Aurora"]
    assert len(hub.tool_calls()) == 1
    assert [d.payload["call_id"] for d in hub.duplicates] == [call.payload["call_id"]]
    assert hub.duplicates[0].id == call.id


async def test_an_answer_that_arrived_while_the_agent_was_down_is_used_on_resume(
    hub: FakeHub, make_agent: MakeAgent
):
    results: list[bool] = []

    async def handle(ctx: TaskContext) -> str:
        results.append(await ctx.tools.confirm("Go?"))
        return "ok"

    first = make_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    call = await hub.next_tool_call(1)
    await first.drain()
    await crash(first_run)
    hub.answer_tool(call, {"message": "yes", "confirmed": True})

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert results == [True]
    assert hub.duplicates == [] and len(hub.tool_calls()) == 1


async def test_an_agent_level_call_with_its_own_call_id_resumes_after_a_restart(
    hub: FakeHub, make_agent: MakeAgent
):
    first = make_agent()
    async with running(first):
        waiting = asyncio.create_task(first.tools.confirm("Ship?", call_id="ship-1"))
        call = await hub.next_tool_call(1)
        assert call.payload["call_id"] == "ship-1"
        await first.drain()
    with pytest.raises(asyncio.CancelledError):
        await waiting  # the agent stopped; the call is not withdrawn
    assert hub.effects_of("tool.cancel") == []
    hub.answer_tool(call, {"message": "yes", "confirmed": True})

    second = make_agent()
    async with running(second):
        reply = await second.tools.call("confirm", None, message="Ship?", call_id="ship-1")
    assert reply.data["confirmed"] is True
    assert len(hub.tool_calls()) == 1


async def test_a_cancelled_task_withdraws_its_pending_tool_call(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.tools.choice("Which?", ["a", "b"])
        return "unreachable"

    async with running(agent):
        task_id = hub.assign_task()
        call = await hub.next_tool_call(1)
        hub.cancel(task_id)
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")
        await hub.wait_for(lambda: hub.effects_of("tool.cancel"))
    withdrawn = hub.effects_of("tool.cancel")[0]
    assert withdrawn.payload["call_id"] == call.payload["call_id"]


async def test_a_person_s_result_for_an_answered_call_is_kept_only_until_the_task_ends(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        return str(await ctx.tools.calculator.multiply(6, 7))

    async with running(agent):
        task_id = hub.assign_task()
        hub.answer_tool(await hub.next_tool_call(1), {"message": "42", "value": 42})
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
        call_id = hub.tool_calls()[0].payload["call_id"]
        assert agent._core is not None
        assert agent._core.store.answer(f"tool:{call_id}") is None
    assert hub.statuses(task_id)[-1]["summary"] == "42"
