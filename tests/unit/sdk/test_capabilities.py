"""Governed capabilities from the SDK (seed 003 §1, §5; docs/protocol.md §9): list them,
invoke them, wait for a person's approval, hear the outcome across drops and restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from lineup.protocol.capabilities import InvocationStatus
from lineup.protocol.errors import (
    Conflict,
    ErrorCode,
    Forbidden,
    InvalidArgument,
    LineupError,
    NotFound,
    UnknownResult,
)
from lineup.sdk import (
    Agent,
    CapabilitySpec,
    InvocationOutcome,
    MessageContext,
    TaskContext,
)

from .fakehub import FakeHub
from .helpers import crash, running

MakeAgent = Callable[..., Agent]

ORDERS = "scheduling.orders.query"
PUBLISH = "scheduling.schedule.publish"

CATALOGUE: list[dict[str, Any]] = [
    {
        "id": ORDERS,
        "provider": "scheduling",
        "effect": "read",
        "description": "Open orders with due dates.",
        "inputSchema": {"type": "object"},
        "instances": ["plant-1"],
    },
    {
        "id": PUBLISH,
        "provider": "scheduling",
        "effect": "write",
        "mode": "async",
        "description": "Publish a previewed schedule.",
        "inputSchema": {"type": "object", "required": ["draftId", "basedOnVersion"]},
        "preview": True,
        "instances": ["plant-1"],
    },
]

OUTPUT = {"orders": [{"id": "SO-1", "due": "2026-12-03"}]}


def one_invoke(
    hub: FakeHub, agent: Agent, capability: str, params: dict[str, Any], **options: Any
) -> dict[str, Any]:
    """A task handler that invokes once; returns what it saw (outcome, statuses), telling
    ``hub.wait_for`` when it saw something."""
    seen: dict[str, Any] = {"statuses": []}

    def status(outcome: InvocationOutcome) -> None:
        seen["statuses"].append(outcome)
        hub.notify()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        outcome = await ctx.invoke(capability, params, on_status=status, **options)
        seen["outcome"] = outcome
        return outcome.status.value

    return seen


async def test_capabilities_list_returns_what_the_hub_grants_in_the_task_s_conversation(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_catalogue = CATALOGUE
    agent = make_agent()
    listed: list[list[CapabilitySpec]] = []

    @agent.task
    async def handle(ctx: TaskContext) -> None:
        listed.append(await ctx.capabilities.list())

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    [specs] = listed
    assert [s.id for s in specs] == [ORDERS, PUBLISH]
    assert specs[1].effect == "write" and specs[1].mode == "async" and specs[1].preview
    [query] = hub.capability_queries
    assert (query.task_id, query.conversation_id, query.payload) == (task_id, "conv_1", {})
    assert hub.invokes() == []  # a query is not an event


async def test_a_read_returns_its_output(hub: FakeHub, make_agent: MakeAgent):
    hub.capability_script[ORDERS] = [
        {"status": "succeeded", "executionId": "exe_1", "output": OUTPUT, "receipt": {"n": 1}}
    ]
    agent = make_agent()
    seen = one_invoke(hub, agent, ORDERS, {"status": "open"}, instance="plant-1")
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
        outcome: InvocationOutcome = seen["outcome"]
        assert agent._core is not None  # the task is over: its invocation is forgotten
        assert agent._core.store.answer(f"cap:{outcome.invocation_id}") is None
    [invoke] = hub.invokes()
    assert invoke.payload == {
        "invocationId": outcome.invocation_id,
        "capability": ORDERS,
        "instance": "plant-1",
        "params": {"status": "open"},
    }
    assert (invoke.task_id, invoke.conversation_id) == (task_id, "conv_1")
    assert outcome.succeeded and outcome.finished
    assert (outcome.output, outcome.execution_id, outcome.receipt) == (OUTPUT, "exe_1", {"n": 1})
    assert outcome.raise_for_status() is outcome
    assert seen["statuses"] == []
    assert hub.statuses(task_id)[-1]["summary"] == "succeeded"


async def test_a_write_waits_for_approval_then_the_async_job_and_reports_each_status(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "waiting_for_approval", "approvalId": "apr_1"}]
    agent = make_agent()
    seen = one_invoke(hub, agent, PUBLISH, {"draftId": "d1", "basedOnVersion": 7})
    async with running(agent):
        task_id = hub.assign_task()
        invoke = await hub.next_invoke(1)
        await hub.wait_for(lambda: len(seen["statuses"]) == 1)
        assert "outcome" not in seen  # waiting is not the end
        hub.capability_result(invoke, "accepted", executionId="exe_9", approvalId="apr_1")
        await hub.wait_for(lambda: len(seen["statuses"]) == 2)
        hub.capability_result(
            invoke, "succeeded", executionId="exe_9", output={"version": 8}, receipt={"v": 8}
        )
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    statuses: list[InvocationOutcome] = seen["statuses"]
    assert [s.status for s in statuses] == [
        InvocationStatus.WAITING_FOR_APPROVAL,
        InvocationStatus.ACCEPTED,
    ]
    assert statuses[0].approval_id == "apr_1" and statuses[1].execution_id == "exe_9"
    assert not statuses[0].finished
    outcome: InvocationOutcome = seen["outcome"]
    assert (outcome.status, outcome.output) == (InvocationStatus.SUCCEEDED, {"version": 8})


async def test_an_async_status_callback_is_awaited(hub: FakeHub, make_agent: MakeAgent):
    hub.capability_script[PUBLISH] = [
        {"status": "waiting_for_approval", "approvalId": "apr_1"},
        {"status": "succeeded", "output": {"version": 8}},
    ]
    agent = make_agent()
    said: list[str] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        async def tell(outcome: InvocationOutcome) -> None:
            said.append(await ctx.say(f"Waiting for approval {outcome.approval_id}", chunk=0))

        outcome = await ctx.invoke(PUBLISH, {"draftId": "d1"}, on_status=tell)
        return outcome.status.value

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert len(said) == 1
    assert hub.effects_of("message.create")[0].payload["content"] == "Waiting for approval apr_1"


async def test_a_rejected_write_is_an_outcome_and_raises_forbidden_on_request(
    hub: FakeHub, make_agent: MakeAgent
):
    reason = {"code": "forbidden", "message": "Rejected by Ana: not this week."}
    hub.capability_script[PUBLISH] = [
        {"status": "waiting_for_approval", "approvalId": "apr_1"},
        {"status": "rejected", "approvalId": "apr_1", "error": reason},
    ]
    agent = make_agent()
    seen = one_invoke(hub, agent, PUBLISH, {"draftId": "d1", "basedOnVersion": 7})
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    outcome: InvocationOutcome = seen["outcome"]
    assert outcome.status is InvocationStatus.REJECTED and not outcome.succeeded
    assert outcome.error is not None and outcome.error.message == reason["message"]
    with pytest.raises(Forbidden) as raised:
        outcome.raise_for_status()
    assert raised.value.details["invocationId"] == outcome.invocation_id
    assert raised.value.details["approvalId"] == "apr_1"


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("unknown_result", None, UnknownResult),
        ("rejected", {"code": "conflict", "message": "The schedule changed."}, Conflict),
        ("failed", {"code": "invalid_argument", "message": "No such draft."}, InvalidArgument),
    ],
)
async def test_an_ending_that_is_not_success_raises_its_code_on_request(
    hub: FakeHub,
    make_agent: MakeAgent,
    status: str,
    error: dict[str, Any] | None,
    expected: type[LineupError],
):
    hub.capability_script[PUBLISH] = [
        {"status": status, **({"error": error} if error is not None else {})}
    ]
    agent = make_agent()
    seen = one_invoke(hub, agent, PUBLISH, {"draftId": "d1"})
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    outcome: InvocationOutcome = seen["outcome"]
    assert outcome.status.value == status and outcome.finished
    with pytest.raises(expected):
        outcome.raise_for_status()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (ErrorCode.INVALID_ARGUMENT, InvalidArgument),
        (ErrorCode.FORBIDDEN, Forbidden),
        (ErrorCode.NOT_FOUND, NotFound),
        (ErrorCode.CONFLICT, Conflict),
    ],
)
async def test_an_invoke_the_hub_refuses_raises_at_once(
    hub: FakeHub, make_agent: MakeAgent, code: ErrorCode, expected: type[LineupError]
):
    hub.refuse["capability.invoke"] = [code]
    agent = make_agent()
    raised: list[BaseException] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.invoke(PUBLISH, {"draftId": "d1"})
        except LineupError as exc:
            raised.append(exc)
        return "refused"

    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert [type(e) for e in raised] == [expected]
    assert hub.invokes() == []


async def test_an_invoke_unacked_when_the_connection_dropped_is_resent_as_the_same_invocation(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.drop_after = {"capability.invoke": 1}  # recorded; the ack is lost with the connection
    hub.capability_script[ORDERS] = [{"status": "succeeded", "output": OUTPUT}]
    agent = make_agent()
    seen = one_invoke(hub, agent, ORDERS, {})
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    [invoke] = hub.invokes()
    [resent] = hub.duplicates
    assert resent.id == invoke.id and resent.payload == invoke.payload
    assert seen["outcome"].invocation_id == invoke.payload["invocationId"]
    assert seen["outcome"].output == OUTPUT


async def test_a_result_sent_while_the_agent_was_disconnected_is_replayed_and_ends_the_wait(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "waiting_for_approval", "approvalId": "apr_1"}]
    agent = make_agent()
    seen = one_invoke(hub, agent, PUBLISH, {"draftId": "d1"})
    async with running(agent):
        task_id = hub.assign_task()
        invoke = await hub.next_invoke(1)
        await hub.wait_for(lambda: seen["statuses"])
        connections = len(hub.connections)
        hub.drop()
        hub.capability_result(invoke, "succeeded", output={"version": 8})  # nobody connected
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert len(hub.connections) > connections
    assert seen["outcome"].output == {"version": 8}
    assert [s.status for s in seen["statuses"]] == [InvocationStatus.WAITING_FOR_APPROVAL]
    assert len(hub.invokes()) == 1 and hub.duplicates == []


async def test_a_restarted_agent_resumes_the_wait_and_gets_the_outcome_decided_meanwhile(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "waiting_for_approval", "approvalId": "apr_1"}]
    hub.drop_after = {"capability.invoke": 1}  # and the ack never reached the first run
    outcomes: list[InvocationOutcome] = []
    statuses: list[InvocationStatus] = []

    async def handle(ctx: TaskContext) -> str:
        outcome = await ctx.invoke(
            PUBLISH,
            {"draftId": "d1", "basedOnVersion": 7},
            invocation_id="publish-d1",
            on_status=lambda o: statuses.append(o.status),
        )
        outcomes.append(outcome)
        return outcome.status.value

    first = make_agent(backoff=None)
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    invoke = await hub.next_invoke(1)
    await crash(first_run)
    hub.capability_result(invoke, "succeeded", output={"version": 8})  # approved while down

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert [o.output for o in outcomes] == [{"version": 8}]
    assert outcomes[0].invocation_id == "publish-d1"
    assert len(hub.invokes()) == 1
    assert [d.payload["invocationId"] for d in hub.duplicates] == ["publish-d1"]


async def test_an_invocation_named_by_the_handler_keeps_its_outcome_for_a_later_invoke(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "succeeded", "output": {"version": 8}}]
    agent = make_agent()
    outcomes: list[InvocationOutcome] = []

    @agent.on_message
    async def on_message(msg: MessageContext) -> None:
        outcomes.append(await msg.invoke(PUBLISH, {"draftId": "d1"}, invocation_id="pub-1"))
        hub.notify()

    async with running(agent):
        hub.deliver_message("publish it")
        await hub.wait_for(lambda: len(outcomes) == 1)
    second = make_agent()
    second.on_message(on_message)
    async with running(second):
        hub.deliver_message("publish it again")
        await hub.wait_for(lambda: len(outcomes) == 2)
    assert [o.output for o in outcomes] == [{"version": 8}, {"version": 8}]
    [invoke] = hub.invokes()  # the second invoke is the same invocation: nothing ran again
    [again] = hub.duplicates
    assert again.payload == invoke.payload and again.id != invoke.id  # another message's step


async def test_a_resumed_wait_hears_the_same_statuses_so_what_on_status_said_is_not_repeated(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "waiting_for_approval", "approvalId": "apr_1"}]

    async def handle(ctx: TaskContext) -> str:
        async def tell(outcome: InvocationOutcome) -> None:
            await ctx.say(f"Waiting for approval {outcome.approval_id}", chunk=0)

        outcome = await ctx.invoke(PUBLISH, {"draftId": "d1"}, on_status=tell)
        await ctx.say(f"Ended {outcome.status.value}", chunk=0)
        return outcome.status.value

    first = make_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task()
    await hub.wait_for(lambda: hub.effects_of("message.create"))
    await first.drain()
    await crash(first_run)
    hub.capability_result(hub.invokes()[0], "succeeded", output={"version": 8})

    second = make_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    said = [e.payload["content"] for e in hub.effects_of("message.create")]
    assert said == ["Waiting for approval apr_1", "Ended succeeded"]


async def test_a_task_cancelled_while_its_write_waits_for_approval_ends_cancelled(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.capability_script[PUBLISH] = [{"status": "waiting_for_approval", "approvalId": "apr_1"}]
    agent = make_agent()
    seen = one_invoke(hub, agent, PUBLISH, {"draftId": "d1"})
    async with running(agent):
        task_id = hub.assign_task()
        await hub.wait_for(lambda: seen["statuses"])
        hub.cancel(task_id)
        await hub.wait_for(lambda: hub.final_status(task_id) == "cancelled")
    assert "outcome" not in seen
