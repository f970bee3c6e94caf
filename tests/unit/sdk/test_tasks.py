"""Task handlers (seed 001 §7.2, §7.3, §10.2): reports, questions, cancel, failure."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.sdk import (
    Agent,
    Approval,
    Choice,
    InputAnswer,
    InteractionExpired,
    MessageContext,
    RequestWithdrawn,
    Review,
    TaskCancelled,
    TaskContext,
)
from tests.support.waiting import until_async

from .fakehub import FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]


async def _answer_next(hub: FakeHub, count: int, **response: Any) -> dict[str, Any]:
    """Wait for the ``count``-th interaction card and answer it."""
    await hub.wait_for(lambda: len(hub.interactions()) >= count)
    card = hub.interactions()[count - 1]
    hub.resolve(card["id"], **response)
    return card


async def test_a_task_runs_from_accepted_through_every_report_to_succeeded(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    seen: dict[str, Any] = {}
    text = "All three migrations ran."

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        seen["title"] = ctx.title
        seen["conversation"] = ctx.conversation_id
        await ctx.progress(10, "Planning")
        child = await ctx.child("Check backups")
        seen["child"] = child
        await ctx.child_status(child, "succeeded", summary="Backups are fresh")
        seen["approval"] = await ctx.ask_approval(
            "Run 3 migrations on production?",
            why="They change the orders table.",
            impact="Orders are read-only for about a minute.",
            risk="high",
            details={"migrations": 3},
        )
        seen["artifact"] = await ctx.artifact(
            "Migration log", "https://example.test/log.txt", mime_type="text/plain"
        )
        seen["message"] = await ctx.say(text, chunk=10)
        return "Migrated"

    async with running(agent):
        task_id = hub.assign_task("Migrate the database")
        card = await _answer_next(hub, 1, option_id="approve", text="Go ahead")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    child = seen["child"]
    assert [(e.type, e.task_id) for e in hub.effects] == [
        ("task.accepted", task_id),
        ("task.status_changed", task_id),
        ("task.child_created", task_id),
        ("task.status_changed", child),
        ("interaction.requested", task_id),
        ("artifact.created", task_id),
        ("message.create", task_id),
        ("task.status_changed", task_id),
    ]
    assert seen["title"] == "Migrate the database"
    assert seen["conversation"] == "conv_1"
    assert hub.effects_of("task.accepted")[0].payload == {"taskId": task_id}
    assert hub.statuses(task_id) == [
        {"status": "running", "progress": 10, "summary": "Planning"},
        {"status": "succeeded", "progress": 100, "summary": "Migrated"},
    ]
    assert hub.effects_of("task.child_created")[0].payload == {
        "parentTaskId": task_id,
        "title": "Check backups",
        "status": "running",
        "childTaskId": child,
    }
    assert hub.statuses(child) == [{"status": "succeeded", "summary": "Backups are fresh"}]

    assert card["type"] == "approval"
    assert card["risk"] == "high"
    assert card["why"] == "They change the orders table."
    assert card["details"] == {"migrations": 3}
    assert [o["id"] for o in card["options"]] == ["approve", "reject"]
    approval = seen["approval"]
    assert isinstance(approval, Approval)
    assert approval.approved
    assert approval.note == "Go ahead"
    assert (approval.by, approval.by_name) == ("user_ana", "Ana")
    assert approval.at == datetime(2026, 7, 24, 12, tzinfo=UTC)

    artifact = hub.effects_of("artifact.created")[0].payload
    assert artifact == {
        "name": "Migration log",
        "url": "https://example.test/log.txt",
        "mimeType": "text/plain",
        "artifactId": seen["artifact"],
    }

    message = hub.effects_of("message.create")[0]
    assert message.payload == {"content": text, "messageId": seen["message"]}
    assert message.conversation_id == "conv_1"
    assert "".join(d.payload["delta"] for d in hub.deltas) == text
    assert len(hub.deltas) == 3
    assert {d.payload["messageId"] for d in hub.deltas} == {seen["message"]}
    assert all(d.conversation_id == "conv_1" for d in hub.deltas)


async def test_say_streams_the_pieces_of_an_async_iterable_then_sends_the_whole(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    async def tokens() -> AsyncIterator[str]:
        for token in ["Hel", "lo", "", " there"]:
            yield token

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        await ctx.say(tokens())
        await ctx.say("No deltas for this one", chunk=0)

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert [d.payload["delta"] for d in hub.deltas] == ["Hel", "lo", " there"]
    contents = [e.payload["content"] for e in hub.effects_of("message.create")]
    assert contents == ["Hello there", "No deltas for this one"]


async def test_an_exception_marks_the_task_failed_with_a_short_message(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        raise RuntimeError("the disk is full\nand here is a long story")

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "failed")

    assert hub.statuses(task_id) == [
        {"status": "failed", "error": "RuntimeError: the disk is full"}
    ]


async def test_an_invalid_report_is_refused_before_it_is_sent(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    caught: list[Exception] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        try:
            await ctx.progress(150)
        except InvalidArgument as exc:
            caught.append(exc)

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert len(caught) == 1
    assert hub.rejected == []
    assert len(hub.statuses(task_id)) == 1


async def test_cancel_reaches_the_handler_and_the_agent_reports_cancelled(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    working = asyncio.Event()
    seen: dict[str, Any] = {}

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(5, "Working")
        working.set()
        try:
            await asyncio.Event().wait()  # long work
        except asyncio.CancelledError:
            seen["flag"] = ctx.cancelled.is_set()
            seen["reason"] = ctx.cancel_reason
            await ctx.say("Stopping as asked.", chunk=0)  # cleanup may still report
            raise
        return "never"

    async with running(agent):
        task_id = hub.assign_task()
        async with asyncio.timeout(5):
            await working.wait()
        hub.cancel(task_id, "Changed my mind")
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")

    assert seen == {"flag": True, "reason": "Changed my mind"}
    assert hub.statuses(task_id)[-1] == {"status": "cancelled"}
    assert [e.payload["content"] for e in hub.effects_of("message.create")] == [
        "Stopping as asked."
    ]


async def test_cancel_stops_a_handler_waiting_for_a_person(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    raised: list[BaseException] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        try:
            await ctx.ask_approval("Deploy?")
        except asyncio.CancelledError:
            try:
                await ctx.ask_input("Why did you stop me?")
            except TaskCancelled as exc:
                raised.append(exc)
            raise

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.interactions())
        hub.cancel(task_id)
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")

    assert len(raised) == 1
    assert len(hub.interactions()) == 1


async def test_a_cancel_for_a_finished_task_changes_nothing(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        return "done"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
        hub.cancel(task_id)
        hub.assign_task("Later")  # proves the cancel has been read by the time this is done
        await hub.wait_for(lambda: len(hub.effects_of("task.accepted")) == 2)
        await agent.drain()

    assert [s["status"] for s in hub.statuses(task_id)] == ["succeeded"]


async def test_several_tasks_run_at_once(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        approval = await ctx.ask_approval(f"Go on with {ctx.title}?")
        return f"{ctx.title}: {approval.approved}"

    async with running(agent):
        first = hub.assign_task("A")
        second = hub.assign_task("B")
        await hub.wait_for(lambda: len(hub.interactions()) == 2)  # both wait at the same time
        cards = {c["title"]: c["id"] for c in hub.interactions()}
        hub.resolve(cards["Go on with B?"], option_id="reject")
        hub.resolve(cards["Go on with A?"], option_id="approve")
        await hub.wait_for(lambda: hub.final_status(first) and hub.final_status(second))

    assert hub.statuses(first)[-1]["summary"] == "A: True"
    assert hub.statuses(second)[-1]["summary"] == "B: False"


async def test_choice_input_and_review_answers_are_typed(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    answers: list[Any] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        answers.append(
            await ctx.ask_choice(
                "Which region?",
                ["eu-west-1", "us-east-1", "Somewhere else"],
                recommended="eu-west-1",
                allow_other=True,
            )
        )
        answers.append(
            await ctx.ask_choice(
                "Which checks?",
                [("lint", "Lint"), ("tests", "Tests"), ("docs", "Docs")],
                multiple=True,
            )
        )
        answers.append(await ctx.ask_input("Test URL?", format="url", placeholder="https://"))
        answers.append(
            await ctx.ask_review(
                "Review the plan",
                content="1. Back up\n2. Migrate",
                attachments=[{"name": "plan.md", "url": "https://example.test/plan.md"}],
            )
        )

    async with running(agent):
        task_id = hub.assign_task()
        region = await _answer_next(hub, 1, option_id="eu-west-1")
        checks = await _answer_next(hub, 2, option_ids=["lint", "tests"])
        url = await _answer_next(hub, 3, text="https://staging.example.test")
        review = await _answer_next(hub, 4, option_id="request_changes", text="Add a rollback")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert [(o["id"], o["label"], o["recommended"]) for o in region["options"]] == [
        ("eu-west-1", "eu-west-1", True),
        ("us-east-1", "us-east-1", False),
        ("option-3", "Somewhere else", False),
    ]
    assert region["allowOther"] is True
    assert checks["multiple"] is True
    assert (url["type"], url["format"], url["placeholder"]) == ("input", "url", "https://")
    assert review["content"] == "1. Back up\n2. Migrate"
    assert review["attachments"] == [{"name": "plan.md", "url": "https://example.test/plan.md"}]

    choice, several, text, verdict = answers
    assert isinstance(choice, Choice)
    assert (choice.option_id, choice.label, choice.other) == ("eu-west-1", "eu-west-1", None)
    assert several.option_ids == ("lint", "tests")
    assert several.labels == ("Lint", "Tests")
    assert isinstance(text, InputAnswer)
    assert text.text == "https://staging.example.test"
    assert isinstance(verdict, Review)
    assert verdict.changes_requested
    assert verdict.comment == "Add a rollback"


async def test_an_other_answer_to_a_choice_comes_back_as_text(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    answers: list[Choice] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        answers.append(await ctx.ask_choice("Name?", ["a", "b"], allow_other=True))

    async with running(agent):
        task_id = hub.assign_task()
        await _answer_next(hub, 1, text="c, please")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert answers[0].option_id is None
    assert answers[0].label == answers[0].other == "c, please"


def test_a_choice_needs_two_to_five_options_and_a_known_recommendation():
    from lineup.sdk._answers import choice_options

    with pytest.raises(ValueError, match="2 to 5"):
        choice_options(["only"], None)
    with pytest.raises(ValueError, match="recommended"):
        choice_options(["a", "b"], "c")


async def test_an_answer_the_hub_accepts_after_the_agents_own_deadline_is_returned(
    hub: FakeHub, make_agent: MakeAgent
):
    """The hub's clock decides an expiry: had the agent given up at ``expires_at`` by its own
    clock, the answer would be lost and its ``succeeded`` refused while the hub still records
    the task waiting for that answer."""
    agent = make_agent()
    deadline = datetime.now(UTC) + timedelta(milliseconds=5)

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            approval = await ctx.ask_approval("Quick?", expires_at=deadline)
        except InteractionExpired:
            return "expired"
        return "approved" if approval.approved else "rejected"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: bool(hub.interactions()))
        await until_async(
            lambda: datetime.now(UTC) > deadline + timedelta(milliseconds=50), "the deadline"
        )
        assert hub.final_status(task_id) is None, "the agent gave up on its own clock"
        hub.resolve(hub.interactions()[0]["id"], option_id="approve")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert hub.statuses(task_id)[-1]["summary"] == "approved"
    assert "expiresAt" in hub.interactions()[0]


async def test_the_hubs_expiry_of_an_interaction_ends_the_wait_before_the_agents_own_timer(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.ask_approval("Soon?", expires_at=datetime.now(UTC) + timedelta(hours=1))
        except InteractionExpired as exc:
            return f"expired at {exc.expires_at.year}"
        return "answered"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: bool(hub.interactions()))
        hub.expire(hub.interactions()[0]["id"], expires_at_ms=1_784_894_400_000)
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert hub.statuses(task_id)[-1]["summary"] == "expired at 2026"


async def test_a_request_the_hub_withdrew_ends_the_wait_with_its_reason(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.ask_approval("Deploy?")
        except RequestWithdrawn as exc:
            return f"withdrawn: {exc.reason}"
        return "answered"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: bool(hub.interactions()))
        hub.withdraw(hub.interactions()[0]["id"])
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert hub.statuses(task_id)[-1]["summary"] == "withdrawn: The task was cancelled."


async def test_an_answer_says_when_it_was_given_from_the_hubs_milliseconds(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        approval = await ctx.ask_approval("Go?")
        return approval.at.isoformat()

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: bool(hub.interactions()))
        hub.resolve(hub.interactions()[0]["id"], option_id="approve")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert hub.statuses(task_id)[-1]["summary"] == "2026-07-24T12:00:00+00:00"


async def test_a_message_handler_replies_in_the_messages_conversation(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    received: list[MessageContext] = []

    @agent.on_message
    async def reply(message: MessageContext) -> None:
        received.append(message)
        await message.say(f"You said: {message.content}", chunk=0)

    async with running(agent):
        message_id = hub.deliver_message("hello", task_id="task_1")
        await hub.wait_for(lambda: hub.effects_of("message.create"))

    reply_event = hub.effects_of("message.create")[0]
    assert reply_event.payload["content"] == "You said: hello"
    assert reply_event.conversation_id == "conv_1"
    assert reply_event.task_id == "task_1"
    assert received[0].message_id == message_id
    assert received[0].author.name == "Ana"
    assert "messages" in hub.hellos[0]["capabilities"]


async def test_without_a_task_handler_a_task_fails_saying_so(hub: FakeHub, make_agent: MakeAgent):
    agent = make_agent()
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "failed")
    assert "no task handler" in hub.statuses(task_id)[0]["error"]


def test_an_agent_takes_one_task_handler():
    from lineup.sdk import AgentConfig

    agent = Agent(AgentConfig("http://h", "ws://h/ws/agent", "agent_1", "ws_1", "secret"))

    @agent.task
    async def first(ctx: TaskContext) -> None:
        return None

    with pytest.raises(ValueError, match="already"):
        agent.task(first)


async def test_a_task_the_hub_will_not_let_this_agent_take_is_not_run(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.refuse = {"task.accepted": [ErrorCode.CONFLICT]}
    agent = make_agent()
    runs: list[str] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        runs.append(ctx.task_id)

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: any(e.type == "task.accepted" for e in hub.received))
        await agent.drain()

    assert runs == []
    assert hub.statuses(task_id) == []


async def test_a_message_handler_asks_for_approval_and_reports_an_artifact_in_the_conversation(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent()
    answers: list[bool] = []

    @agent.on_message
    async def run(message: MessageContext) -> None:
        approval = await message.ask_approval("Run rm -rf build?", risk="high")
        answers.append(approval.approved)
        await message.artifact("build log", "https://ci.example/log/1", mime_type="text/plain")

    async with running(agent):
        hub.deliver_message("clean the build")
        card = await _answer_next(hub, 1, option_id="approve")
        await hub.wait_for(lambda: hub.effects_of("artifact.created"))

    assert card["type"] == "approval" and card["risk"] == "high"
    (asked,) = hub.effects_of("interaction.requested")
    assert asked.conversation_id == "conv_1" and asked.task_id is None
    assert answers == [True]
    (artifact,) = hub.effects_of("artifact.created")
    assert artifact.conversation_id == "conv_1"
    assert artifact.payload["name"] == "build log"
