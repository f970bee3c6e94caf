"""`lineup mcp` driven by the official MCP Python client over stdio and streamable HTTP,
against a real hub, while a person answers through the hub's API: every tool, the bounded
wait that answers "pending" and resumes without asking twice, progress notifications while
waiting, a question answered in the host (elicitation) withdrawing its LineUp card and one
answered in LineUp first withdrawing the host's form, and a question asked as an MCP task
(polled, answered, cancelled, and found again after a restart)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import (
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    ElicitResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
)

from tests.e2e.mcp_host import PairedServer, http_server, pair_mcp_server
from tests.e2e.processes import LINEUP, HubProcess
from tests.support.people import Person
from tests.support.waiting import until_async

pytestmark = pytest.mark.slow


@pytest.fixture
def database_url() -> None:
    """The MCP server is a client of the hub's agent protocol: one database suffices."""
    return None


@asynccontextmanager
async def connected(paired: PairedServer, transport: str, **options: Any) -> AsyncIterator[Client]:
    if transport == "stdio":
        server = StdioServerParameters(command=LINEUP, args=paired.args(), env=paired.env)
        async with Client(server, **options) as client:
            yield client
        return
    with http_server(paired) as url:
        async with Client(url, **options) as client:
            yield client


async def open_card(ana: Person, title: str) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        cards = ana.read("/interactions?status=requested")["interactions"]
        return next((c for c in cards if c["request"]["title"] == title), None)

    return await until_async(lambda: asyncio.to_thread(find), f"the card {title!r}")


async def answered_by(ana: Person, title: str, response: dict[str, Any]) -> None:
    card = await open_card(ana, title)
    await asyncio.to_thread(ana.send, f"/interactions/{card['id']}/respond", {"response": response})


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    value = result.structured_content
    assert isinstance(value, dict), result
    return value.get("result", value) if set(value) == {"result"} else value


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_mcp_host_reaches_its_person_through_every_tool(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person], transport: str
) -> None:
    ana = sign_up()
    paired = await asyncio.to_thread(pair_mcp_server, hub.url, ana, tmp_path / "mcp")
    async with connected(paired, transport) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {
            "ask_approval",
            "ask_choice",
            "ask_input",
            "ask_review",
            "wait_for_answer",
            "notify",
            "report_progress",
            "create_task",
            "update_task",
            "add_artifact",
            "list_app_tools",
            "call_app_tool",
        } <= names

        task = structured(await client.call_tool("create_task", {"title": "Upgrade the DB"}))
        task_id = task["task_id"]
        shown = (await asyncio.to_thread(ana.read, f"/tasks/{task_id}"))["task"]
        assert (shown["status"], shown["targetAgentId"]) == ("running", paired.agent_id)

        await client.call_tool("report_progress", {"progress": 40, "summary": "Dumping"})
        await until_async(
            lambda: asyncio.to_thread(
                lambda: ana.read(f"/tasks/{task_id}")["task"]["progress"] == 40
            ),
            "the task's progress in LineUp",
        )

        # approval: the host's call waits for the person, who answers in LineUp
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        asking = asyncio.ensure_future(
            client.call_tool(
                "ask_approval",
                {"title": "Run the migration?", "risk": "high", "impact": "10 s downtime"},
                progress_callback=on_progress,
            )
        )
        card = await open_card(ana, "Run the migration?")
        assert (card["taskId"], card["request"]["risk"]) == (task_id, "high")
        await until_async(lambda: len(progress) >= 2, "progress notifications while waiting")
        await asyncio.to_thread(
            ana.send,
            f"/interactions/{card['id']}/respond",
            {"response": {"optionId": "approve", "text": "Go"}},
        )
        approval = structured(await asking)
        assert (approval["approved"], approval["note"], approval["answered_in"]) == (
            True,
            "Go",
            "lineup",
        )

        asking = asyncio.ensure_future(
            client.call_tool("ask_choice", {"title": "Which region?", "options": ["eu", "us"]})
        )
        await answered_by(ana, "Which region?", {"optionId": "option-2"})
        assert structured(await asking)["choices"] == ["us"]

        # a bounded wait answers "pending"; waiting again does not ask again
        pending = structured(
            await client.call_tool("ask_input", {"title": "Ticket number?", "wait_seconds": 0.3})
        )
        assert pending["status"] == "pending"
        await answered_by(ana, "Ticket number?", {"text": "OPS-7"})
        resumed = structured(
            await client.call_tool("wait_for_answer", {"handle": pending["handle"]})
        )
        assert (resumed["status"], resumed["text"]) == ("answered", "OPS-7")
        asked = await asyncio.to_thread(ana.read, "/interactions")
        assert [c["request"]["title"] for c in asked["interactions"]].count("Ticket number?") == 1

        asking = asyncio.ensure_future(
            client.call_tool("ask_review", {"title": "The plan", "content": "1. dump 2. migrate"})
        )
        await answered_by(ana, "The plan", {"optionId": "request_changes", "text": "Add a backup"})
        review = structured(await asking)
        assert (review["approved"], review["comment"]) == (False, "Add a backup")

        await client.call_tool("notify", {"text": "Backup first, as asked."})
        conversation = shown["conversationId"]
        await until_async(
            lambda: asyncio.to_thread(
                lambda: any(
                    m["content"] == "Backup first, as asked."
                    for m in ana.read(f"/conversations/{conversation}/messages")["messages"]
                )
            ),
            "the agent's message in the task's conversation",
        )

        artifact = structured(
            await client.call_tool("add_artifact", {"name": "plan.md", "content": "# Plan"})
        )
        listed = await asyncio.to_thread(ana.read, f"/artifacts?taskId={task_id}")
        assert [a["id"] for a in listed["artifacts"]] == [artifact["artifact_id"]]

        tools = structured(await client.call_tool("list_app_tools", {}))["tools"]
        assert "confirm" in {t["name"] for t in tools}
        calling = asyncio.ensure_future(
            client.call_tool("call_app_tool", {"name": "confirm", "arguments": {"message": "OK?"}})
        )

        def the_call() -> dict[str, Any] | None:
            calls = ana.read("/tool-calls?status=pending")["toolCalls"]
            return next(iter(calls), None)

        call = await until_async(lambda: asyncio.to_thread(the_call), "the confirm tool call")
        await asyncio.to_thread(
            ana.send,
            f"/tool-calls/{call['id']}/result",
            {"result": {"message": "yes", "confirmed": True}},
        )
        confirmed = structured(await calling)
        assert (confirmed["status"], confirmed["message"]) == ("answered", "yes")

        await client.call_tool(
            "update_task", {"task_id": task_id, "status": "succeeded", "summary": "Migrated"}
        )
        ended = await until_async(
            lambda: asyncio.to_thread(
                lambda: (t := ana.read(f"/tasks/{task_id}")["task"])["status"] == "succeeded" and t
            ),
            "the task to succeed in LineUp",
        )
        assert ended["summary"] == "Migrated"


async def test_a_question_answered_in_the_host_withdraws_its_lineup_card(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    paired = await asyncio.to_thread(pair_mcp_server, hub.url, ana, tmp_path / "mcp")
    asked: list[dict[str, Any]] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.requested_schema)
        await open_card(ana, "Deploy now?")  # both sides ask at once
        return ElicitResult(action="accept", content={"decision": "approve", "note": "from IDE"})

    # hosts today (Codex, Claude Code) speak the handshake-era protocol, where a server may
    # send the host requests of its own (elicitation/create) while a tool call runs
    async with connected(paired, "stdio", elicitation_callback=elicit, mode="legacy") as client:
        answer = structured(
            await client.call_tool("ask_approval", {"title": "Deploy now?", "wait_seconds": 20})
        )
    assert (answer["approved"], answer["note"], answer["answered_in"]) == (
        True,
        "from IDE",
        "mcp-host",
    )
    assert asked[0]["properties"]["decision"]["enum"] == ["approve", "reject"]
    cards = await asyncio.to_thread(ana.read, "/interactions")
    card = next(c for c in cards["interactions"] if c["request"]["title"] == "Deploy now?")
    assert card["status"] == "cancelled"


async def test_a_question_answered_in_lineup_first_withdraws_the_hosts_form(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    paired = await asyncio.to_thread(pair_mcp_server, hub.url, ana, tmp_path / "mcp")
    shown = asyncio.Event()
    withdrawn = asyncio.Event()

    async def elicit(context: Any, params: Any) -> ElicitResult:
        shown.set()
        try:
            await asyncio.Event().wait()  # the person never answers in the host
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        raise AssertionError("not reached")

    async with connected(paired, "stdio", elicitation_callback=elicit, mode="legacy") as client:
        asking = asyncio.ensure_future(
            client.call_tool("ask_choice", {"title": "Which day?", "options": ["Mon", "Tue"]})
        )
        await until_async(shown.is_set, "the host's form")
        await answered_by(ana, "Which day?", {"optionId": "option-1"})
        answer = structured(await asking)
        await until_async(withdrawn.is_set, "the host's form to be withdrawn")
    assert (answer["choices"], answer["answered_in"]) == (["Mon"], "lineup")


async def test_a_question_left_pending_is_answered_after_the_server_restarts(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    paired = await asyncio.to_thread(pair_mcp_server, hub.url, ana, tmp_path / "mcp")
    async with connected(paired, "stdio") as client:
        task_id = structured(await client.call_tool("create_task", {"title": "Rotate keys"}))[
            "task_id"
        ]
        pending = structured(
            await client.call_tool("ask_input", {"title": "Which key?", "wait_seconds": 0.2})
        )
    assert pending["status"] == "pending"
    # the host and its server are gone; the person answers meanwhile
    await answered_by(ana, "Which key?", {"text": "the 2024 one"})

    async with connected(paired, "stdio") as client:
        resumed = structured(
            await client.call_tool("wait_for_answer", {"handle": pending["handle"]})
        )
        assert (resumed["status"], resumed["text"]) == ("answered", "the 2024 one")
        await client.call_tool("update_task", {"task_id": task_id, "status": "succeeded"})
    asked = await asyncio.to_thread(ana.read, "/interactions")
    assert [c["request"]["title"] for c in asked["interactions"]] == ["Which key?"]
    ended = await until_async(
        lambda: asyncio.to_thread(
            lambda: ana.read(f"/tasks/{task_id}")["task"]["status"] == "succeeded"
        ),
        "the task, resumed by the restarted server, to end",
    )
    assert ended


async def call_as_task(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tools/call`` with a ``task`` field. The Python client validates every ``tools/call``
    answer as a CallToolResult, so it cannot take the CreateTaskResult the protocol answers
    with: this request goes out raw, through the session's own JSON-RPC connection."""
    params = {"name": name, "arguments": arguments, "task": {"ttl": 600_000}}
    created = await client.session._dispatcher.send_raw_request("tools/call", params)
    task: dict[str, Any] = created["task"]
    return task


async def task_status(client: Client, task_id: str) -> GetTaskResult:
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, GetTaskResult)


async def task_result(client: Client, task_id: str) -> CallToolResult:
    request = GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, CallToolResult)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_question_asked_as_an_mcp_task_is_polled_answered_or_cancelled(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person], transport: str
) -> None:
    ana = sign_up()
    paired = await asyncio.to_thread(pair_mcp_server, hub.url, ana, tmp_path / "mcp")
    # tasks exist on the handshake-era revision 2025-11-25 only
    async with connected(paired, transport, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        tasks = client.server_capabilities.tasks
        assert tasks is not None and tasks.requests is not None and tasks.requests.tools
        support = {t.name: t.execution for t in (await client.list_tools()).tools}
        assert support["ask_approval"] is not None
        assert support["ask_approval"].task_support == "optional"
        assert support["notify"] is None

        task = await call_as_task(client, "ask_approval", {"title": "Drop the old table?"})
        assert (task["status"], task["pollInterval"]) == ("working", 5000)
        card = await open_card(ana, "Drop the old table?")
        assert card["id"] == task["taskId"]  # the task is the LineUp question
        assert (await task_status(client, task["taskId"])).status == "working"
        listed = await client.session.send_request(ListTasksRequest(), ListTasksResult)
        assert [t.task_id for t in listed.tasks] == [task["taskId"]]

        blocked = asyncio.ensure_future(task_result(client, task["taskId"]))
        await asyncio.to_thread(
            ana.send,
            f"/interactions/{card['id']}/respond",
            {"response": {"optionId": "approve", "text": "It is backed up"}},
        )
        approval = structured(await blocked)
        assert (approval["approved"], approval["note"]) == (True, "It is backed up")
        assert (await task_status(client, task["taskId"])).status == "completed"

        # cancelling the task withdraws the card: the person sees it withdrawn
        task = await call_as_task(client, "ask_input", {"title": "Which branch?"})
        card = await open_card(ana, "Which branch?")
        cancel = CancelTaskRequest(params=CancelTaskRequestParams(task_id=task["taskId"]))
        cancelled = await client.session.send_request(cancel, CancelTaskResult)
        assert cancelled.status == "cancelled"
        shown = await asyncio.to_thread(ana.read, f"/interactions/{card['id']}")
        assert shown["status"] == "cancelled"

        task = await call_as_task(
            client, "ask_choice", {"title": "Which day?", "options": ["Mon", "Tue"]}
        )

    # the server restarts; the person answers meanwhile; the task is found by its id
    await answered_by(ana, "Which day?", {"optionId": "option-2"})
    async with connected(paired, transport, mode="legacy") as client:
        assert structured(await task_result(client, task["taskId"]))["choices"] == ["Tue"]
        assert (await task_status(client, task["taskId"])).status == "completed"
