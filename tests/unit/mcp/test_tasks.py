"""The MCP tasks utility as the middleware serves it: a task-augmented question answers a task
at once whose result is the tool's; only the question tools run as tasks, and only on the
revision that defines them; a cancel withdraws the card unless the person answered first;
a question ended unanswered is a failed task; a task the server no longer holds is adopted
from its journal."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

from lineup.mcp._tasks import MAX_TTL_MS, MIN_TTL_MS, RELATED, TasksMiddleware, running_task


@dataclass(frozen=True)
class Ctx:
    method: str
    params: dict[str, Any] | None = None
    protocol_version: str = "2025-11-25"


@dataclass
class Tool:
    """Stands for the rest of the chain: a tool call that waits until answered."""

    answer: asyncio.Future[dict[str, Any]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    calls: list[dict[str, Any]] = field(default_factory=list)
    ran_as: list[str | None] = field(default_factory=list)

    async def __call__(self, ctx: Any) -> dict[str, Any]:
        self.calls.append(dict(ctx.params or {}))
        self.ran_as.append(running_task())
        return await self.answer


def result(answer: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "…"}], "structuredContent": answer}


class Person:
    def __init__(self, *, answered_first: bool = False) -> None:
        self.withdrawn: list[str] = []
        self.answered_first = answered_first
        self.journal: dict[str, dict[str, Any]] = {}

    async def withdraw(self, interaction_id: str) -> bool:
        self.withdrawn.append(interaction_id)
        return not self.answered_first

    def adopt(self, task_id: str) -> Any:
        if task_id not in self.journal:
            return None

        async def wait() -> dict[str, Any]:
            return result(self.journal[task_id])

        return wait()


async def send(
    middleware: TasksMiddleware, tool: Tool, method: str, version: str = "2025-11-25", **params: Any
) -> Any:
    return await middleware(cast(Any, Ctx(method, params, version)), tool)


def ask(title: str = "Deploy?", **task: Any) -> dict[str, Any]:
    return {"name": "ask_approval", "arguments": {"title": title}, "task": task}


async def test_a_question_asked_as_a_task_answers_at_once_and_its_result_is_the_tools() -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    created = (await send(tasks, tool, "tools/call", **ask(ttl=120_000)))["task"]
    assert (created["status"], created["ttl"]) == ("working", 120_000)
    assert created["taskId"].startswith("int_")
    got = await send(tasks, tool, "tasks/get", taskId=created["taskId"])
    assert got["status"] == "working"
    await asyncio.sleep(0)
    assert tool.calls == [{"name": "ask_approval", "arguments": {"title": "Deploy?"}}]
    assert tool.ran_as == [created["taskId"]]  # the question is asked under the task's id

    waiting = asyncio.ensure_future(send(tasks, tool, "tasks/result", taskId=created["taskId"]))
    await asyncio.sleep(0)
    assert not waiting.done()
    tool.answer.set_result(result({"status": "answered", "approved": True}))
    payload = await waiting
    assert payload["structuredContent"]["approved"] is True
    assert payload["_meta"][RELATED] == {"taskId": created["taskId"]}
    assert (await send(tasks, tool, "tasks/get", taskId=created["taskId"]))["status"] == (
        "completed"
    )
    listed = await send(tasks, tool, "tasks/list")
    assert [t["taskId"] for t in listed["tasks"]] == [created["taskId"]]


async def test_only_the_question_tools_run_as_tasks_and_only_where_the_protocol_has_them() -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    with pytest.raises(MCPError) as refused:
        await send(tasks, tool, "tools/call", name="notify", arguments={}, task={})
    assert refused.value.error.code == METHOD_NOT_FOUND

    tool.answer.set_result(result({"status": "answered"}))
    for version in ("2025-06-18", "2026-07-28"):
        answered = await send(tasks, tool, "tools/call", version, **ask())
        assert "task" not in answered and answered["structuredContent"]["status"] == "answered"
    listing = {"tools": [{"name": "ask_input"}, {"name": "notify"}]}

    async def tools(ctx: Any) -> dict[str, Any]:
        return {"tools": [dict(t) for t in listing["tools"]]}

    shown = await tasks(cast(Any, Ctx("tools/list")), tools)
    assert [t.get("execution") for t in shown["tools"]] == [{"taskSupport": "optional"}, None]
    modern = await tasks(cast(Any, Ctx("tools/list", None, "2026-07-28")), tools)
    assert all("execution" not in t for t in modern["tools"])

    async def initialize(ctx: Any) -> dict[str, Any]:
        return {"protocolVersion": ctx.protocol_version, "capabilities": {"tools": {}}}

    init = await tasks(cast(Any, Ctx("initialize")), initialize)
    assert init["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    for version in ("2025-06-18",):
        old = await tasks(cast(Any, Ctx("initialize", None, version)), initialize)
        assert "tasks" not in old["capabilities"]


async def test_a_cancelled_task_withdraws_its_card_unless_the_person_answered_first() -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    task_id = (await send(tasks, tool, "tools/call", **ask()))["task"]["taskId"]
    cancelled = await send(tasks, tool, "tasks/cancel", taskId=task_id)
    assert cancelled["status"] == "cancelled" and person.withdrawn == [task_id]
    with pytest.raises(MCPError, match="cancelled"):
        await send(tasks, tool, "tasks/result", taskId=task_id)
    with pytest.raises(MCPError, match="already ended"):
        await send(tasks, tool, "tasks/cancel", taskId=task_id)

    late, tool = Person(answered_first=True), Tool()
    tasks = TasksMiddleware(late.adopt, late.withdraw)
    task_id = (await send(tasks, tool, "tools/call", **ask()))["task"]["taskId"]
    cancelling = asyncio.ensure_future(send(tasks, tool, "tasks/cancel", taskId=task_id))
    await asyncio.sleep(0)
    tool.answer.set_result(result({"status": "answered", "approved": False}))
    with pytest.raises(MCPError, match="the person answered"):
        await cancelling
    assert (await send(tasks, tool, "tasks/result", taskId=task_id))["structuredContent"][
        "approved"
    ] is False


async def test_a_question_that_ended_unanswered_is_a_failed_task() -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    task_id = (await send(tasks, tool, "tools/call", **ask()))["task"]["taskId"]
    tool.answer.set_result(result({"status": "ended", "reason": "The question expired."}))
    await send(tasks, tool, "tasks/result", taskId=task_id)
    got = await send(tasks, tool, "tasks/get", taskId=task_id)
    assert (got["status"], got["statusMessage"]) == ("failed", "The question expired.")


async def test_waiting_again_is_the_same_task_and_a_journaled_question_is_adopted() -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    wait = {"name": "wait_for_answer", "arguments": {"handle": "int_1"}, "task": {}}
    first = (await send(tasks, tool, "tools/call", **wait))["task"]
    again = (await send(tasks, tool, "tools/call", **wait))["task"]
    await asyncio.sleep(0)
    assert first["taskId"] == again["taskId"] == "int_1" and len(tool.calls) == 1

    person.journal["int_2"] = {"status": "answered", "text": "OPS-7"}
    adopted = await send(tasks, tool, "tasks/result", taskId="int_2")
    assert adopted["structuredContent"]["text"] == "OPS-7"
    with pytest.raises(MCPError) as unknown:
        await send(tasks, tool, "tasks/get", taskId="int_3")
    assert unknown.value.error.code == INVALID_PARAMS


@pytest.mark.parametrize(
    ("asked", "kept"),
    [(None, 24 * 3600 * 1000), (1, MIN_TTL_MS), (10**12, MAX_TTL_MS), (300_000, 300_000)],
)
async def test_a_requested_ttl_is_kept_within_bounds(asked: int | None, kept: int) -> None:
    person, tool = Person(), Tool()
    tasks = TasksMiddleware(person.adopt, person.withdraw)
    created = await send(tasks, tool, "tools/call", **ask(**({"ttl": asked} if asked else {})))
    assert created["task"]["ttl"] == kept
