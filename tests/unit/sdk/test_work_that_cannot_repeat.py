"""Handlers whose work cannot be replayed after a restart (a hosted engine's turn): a message
handler keeps steps like a task's, a resumed one can go on after what it recorded — its
unanswered questions withdrawn, its new reports new to the hub — and an approval may come
back with the input the person edited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lineup.sdk import Agent, MessageContext, TaskContext

from .fakehub import FakeHub
from .helpers import crash, running

MakeAgent = Callable[..., Agent]


async def test_an_approval_comes_back_with_the_input_the_person_edited(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    seen: list[object] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        approval = await ctx.ask_approval(
            "Write notes.txt?",
            content="notes.txt: draft",
            editable_input={"path": "notes.txt", "text": "draft"},
        )
        seen.append(approval.input)
        plain = await ctx.ask_approval("And push it?")
        seen.append(plain.input)
        return "ok"

    async with running(agent):
        task_id = hub.assign_task("Notes")
        await hub.wait_for(lambda: hub.interactions())
        card = hub.interactions()[0]
        assert card["editableInput"] == {"path": "notes.txt", "text": "draft"}
        assert card["content"] == "notes.txt: draft"
        hub.resolve(card["id"], option_id="approve", input={"path": "notes.txt", "text": "final"})
        await hub.wait_for(lambda: len(hub.interactions()) == 2)
        hub.resolve(hub.interactions()[1]["id"], option_id="approve")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert seen == [{"path": "notes.txt", "text": "final"}, None]


async def test_a_message_handler_asks_every_kind_of_question_and_keeps_steps(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    answers: asyncio.Queue[object] = asyncio.Queue()
    effects: list[str] = []

    @agent.on_message
    async def handle(ctx: MessageContext) -> None:
        await ctx.step("effect", lambda: effects.append("once") or 1)
        answers.put_nowait((await ctx.ask_choice("Which?", ["red", "blue"])).label)
        answers.put_nowait((await ctx.ask_input("Name?")).text)
        answers.put_nowait((await ctx.ask_review("Plan ok?", content="1. do it")).approved)
        resolved = await ctx.ask({"type": "approval", "title": "Raw?"})
        answers.put_nowait(resolved.response.option_id)

    got: list[object] = []
    async with running(agent):
        hub.deliver_message("go")
        for answer in (
            {"option_id": "blue"},
            {"text": "Ana"},
            {"option_id": "approve"},
            {"option_id": "reject"},
        ):
            asked = len(got) + 1
            await hub.wait_for(lambda asked=asked: len(hub.interactions()) == asked)
            hub.resolve(hub.interactions()[-1]["id"], **answer)  # type: ignore[arg-type]
            got.append(await asyncio.wait_for(answers.get(), 30))  # the handler's own pace
    assert got == ["blue", "Ana", True, "reject"]
    assert effects == ["once"]
    assert [i["type"] for i in hub.interactions()] == ["choice", "input", "review", "approval"]


async def test_a_resumed_handler_skips_its_recorded_steps_and_withdraws_what_it_asked(
    hub: FakeHub, make_agent: MakeAgent
):
    runs: list[list[tuple[str, str]]] = []

    async def handle(ctx: MessageContext) -> None:
        fresh: list[bool] = []
        await ctx.step("turn", lambda: fresh.append(True) or True)
        if fresh:
            await ctx.activity.reasoning("thinking")
            await ctx.say("working on it")
            await ctx.ask_approval("Run make install?")  # never answered: the agent dies
            return
        skipped = await ctx.skip_recorded("The work it belonged to stopped.")
        runs.append([(step.kind, step.name) for step in skipped])
        await ctx.activity.error("unavailable", "The work stopped with the agent.")
        await ctx.say("I stopped in the middle of that.")

    first = make_agent()
    first.on_message(handle)
    first_run = asyncio.create_task(first.run())
    hub.deliver_message("install")
    await hub.wait_for(lambda: hub.interactions())
    await first.drain()
    await crash(first_run)

    second = make_agent()
    second.on_message(handle)
    async with running(second):
        await hub.wait_for(lambda: len(hub.effects_of("message.create")) == 2)
        await hub.wait_for(lambda: hub.effects_of("interaction.cancel"))
    assert runs == [[("message.create", "say"), ("interaction.requested", "approval")]]
    [withdrawn] = hub.effects_of("interaction.cancel")
    assert withdrawn.payload["interactionId"] == hub.interactions()[0]["id"]
    assert withdrawn.payload["reason"] == "The work it belonged to stopped."
    assert [m.payload["content"] for m in hub.effects_of("message.create")] == [
        "working on it",
        "I stopped in the middle of that.",
    ]
    started = hub.effects_of("activity.started")
    assert [e.payload["kind"] for e in started] == ["reasoning", "error"]
    assert started[0].payload["activityId"] != started[1].payload["activityId"]
    assert started[1].payload["code"] == "unavailable"
    assert hub.duplicates == []


async def test_a_context_entry_carries_its_snapshot_as_a_hub_file(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent(http_transport=hub.http)

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.activity.context("3 turns, 1 reference", '{"turns": 3}')
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Context")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    [entry] = hub.effects_of("activity.started")
    [stored] = hub.files.values()
    assert entry.payload["kind"] == "context" and entry.payload["text"] == "3 turns, 1 reference"
    assert entry.payload["snapshotUrl"] == stored["url"]
    assert stored["content"] == b'{"turns": 3}'


async def test_a_question_nothing_waits_for_any_more_is_withdrawn(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    gave_up = asyncio.Event()

    @agent.on_message
    async def handle(ctx: MessageContext) -> None:
        asking = asyncio.create_task(ctx.ask_approval("Run it?"))
        await hub.wait_for(lambda: hub.interactions())
        await agent.drain()  # the card is acknowledged: the handler waits for the person
        asking.cancel()  # the engine that asked was interrupted
        await asyncio.gather(asking, return_exceptions=True)
        gave_up.set()

    async with running(agent):
        hub.deliver_message("go")
        await gave_up.wait()
        await hub.wait_for(lambda: hub.effects_of("interaction.cancel"))
    [withdrawn] = hub.effects_of("interaction.cancel")
    assert withdrawn.payload["interactionId"] == hub.interactions()[0]["id"]
