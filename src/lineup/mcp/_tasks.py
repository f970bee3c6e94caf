"""The MCP tasks utility (``tasks/*``, protocol 2025-11-25) for the questions to the person.

A host that sends ``tools/call`` with a ``task`` field gets a task at once instead of a call
held open while the person thinks: it polls ``tasks/get`` and blocks on ``tasks/result`` for
the tool's result, so no request timeout cuts the wait short. The SDK defines the types but
serves none of it, so this is a server middleware: it answers ``tasks/*`` itself, turns a
task-augmented call into a background run of the same tool, and advertises the capability
(and each question tool's ``execution.taskSupport``) on the revision that defines tasks only.

A question's task id is its LineUp interaction id: the card and any answer are journaled in
the agent's state file, so after a restart the server adopts a task it no longer holds the
moment a host asks for it by id, and waits for (or returns) the same answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

from lineup.protocol.ids import new_id

VERSIONS = frozenset({"2025-11-25"})
"""Protocol revisions that define tasks (2026-07-28 moved them to an extension)."""

TOOLS = frozenset({"ask_approval", "ask_choice", "ask_input", "ask_review", "wait_for_answer"})
"""The tools that wait for a person, and so may run as a task."""

RELATED = "io.modelcontextprotocol/related-task"

DEFAULT_TTL_MS = 24 * 3600 * 1000
MIN_TTL_MS = 60 * 1000
MAX_TTL_MS = 7 * 24 * 3600 * 1000
POLL_INTERVAL_MS = 5000
"""A person answers in seconds or hours: polling faster than this only costs the host."""
ASKED_WITHIN = 10.0
"""Seconds a task-augmented call waits for its question to be asked before it answers with
the task anyway (the question then waits in the agent's outbox for the hub)."""

_running: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_task", default=None)
_asked: contextvars.ContextVar[asyncio.Event | None] = contextvars.ContextVar(
    "mcp_task_asked", default=None
)


def running_task() -> str | None:
    """The id of the task this tool call runs as, or None for a plain call: a task waits
    for the person without a bound, and asks in LineUp alone (the host polls, it has no
    open request to show a form in)."""
    return _running.get()


def question_asked() -> None:
    """The running task's question is in the agent's journal and on its way to the person:
    the host may have its task now. Before, a host that disconnected at once (its server
    stopping with it) could leave a task whose question was never asked."""
    asked = _asked.get()
    if asked is not None:
        asked.set()


Adopt = Callable[[str], Awaitable[dict[str, Any]] | None]
"""Given a task id the server does not hold, a wait for that question's result (the
``wait_for_answer`` tool's CallToolResult on the wire), or None when it never asked it."""

Withdraw = Callable[[str], Awaitable[bool]]
"""Take back the person's card for a cancelled task; False when they answered first."""


@dataclass
class _Task:
    task_id: str
    ttl: int
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    updated: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "working"
    message: str | None = "Waiting for the person to answer in LineUp."
    result: dict[str, Any] | None = None
    error: MCPError | None = None
    cancelling: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the question is asked, or the call ended without asking it."""
    runner: asyncio.Task[None] | None = None
    expires: float = 0.0

    def wire(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttl": self.ttl,
            "pollInterval": POLL_INTERVAL_MS,
        }
        if self.message:
            task["statusMessage"] = self.message
        return task

    def end(self, status: str, message: str | None) -> None:
        if self.done.is_set():
            return
        self.status, self.message = status, message
        self.updated = datetime.now(UTC)
        self.done.set()
        self.asked.set()


class TasksMiddleware:
    """Serves ``tasks/*`` and task-augmented ``tools/call`` for the question tools."""

    def __init__(self, adopt: Adopt, withdraw: Withdraw) -> None:
        self._adopt = adopt
        self._withdraw = withdraw
        self._tasks: dict[str, _Task] = {}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        method = ctx.method
        if method == "initialize":
            return _with_capability(await call_next(ctx))
        if ctx.protocol_version not in VERSIONS:
            return await call_next(ctx)
        params = dict(ctx.params or {})
        if method == "tools/list":
            return _with_task_support(await call_next(ctx))
        if method == "tools/call" and params.get("task") is not None:
            return await self._create(ctx, call_next, params)
        if method == "tasks/get":
            return (await self._find(params)).wire()
        if method == "tasks/result":
            return await self._result(await self._find(params))
        if method == "tasks/list":
            self._sweep()
            return {"tasks": [t.wire() for t in self._tasks.values()]}
        if method == "tasks/cancel":
            return await self._cancel(await self._find(params))
        return await call_next(ctx)

    # --- creating ----------------------------------------------------------------------------

    async def _create(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: dict[str, Any]
    ) -> dict[str, Any]:
        name = params.get("name")
        if name not in TOOLS:
            raise MCPError(
                code=METHOD_NOT_FOUND,
                message=f"Tool {name!r} does not run as a task: call it without 'task'.",
            )
        self._sweep()
        arguments = params.get("arguments") or {}
        handle = arguments.get("handle") if name == "wait_for_answer" else None
        if isinstance(handle, str) and handle in self._tasks:
            return {"task": self._tasks[handle].wire()}  # waiting again is the same task
        task_id = handle if isinstance(handle, str) else new_id("int")
        task = _Task(task_id, _ttl(params["task"]))
        plain = {k: v for k, v in params.items() if k not in ("task", "_meta")}
        run = call_next(dataclasses.replace(ctx, params=plain))
        self._start(task, run)
        if name != "wait_for_answer":  # waiting again asks nothing
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(ASKED_WITHIN):
                    await task.asked.wait()
        return {"task": task.wire()}

    def _start(self, task: _Task, run: Awaitable[HandlerResult]) -> None:
        task.expires = time.monotonic() + task.ttl / 1000
        self._tasks[task.task_id] = task

        async def execute() -> None:
            _running.set(task.task_id)
            _asked.set(task.asked)
            try:
                result = _as_dict(await run)
            except asyncio.CancelledError:
                task.end("cancelled", "Cancelled by the MCP host.")
                raise
            except MCPError as error:
                task.error = error
                task.end("cancelled" if task.cancelling else "failed", error.error.message)
            except Exception:
                task.error = MCPError(code=INTERNAL_ERROR, message="The tool call failed.")
                task.end("failed", "The tool call failed.")
            else:
                task.result = result
                if task.cancelling:
                    task.end("cancelled", "Cancelled by the MCP host.")
                else:
                    failed, message = _outcome(result)
                    task.end("failed" if failed else "completed", message)

        task.runner = asyncio.get_running_loop().create_task(
            execute(), name=f"mcp-task-{task.task_id}", context=contextvars.copy_context()
        )
        if inspect.iscoroutine(run):  # a task cancelled before it began never awaited it
            task.runner.add_done_callback(lambda _: run.close())

    # --- reading -----------------------------------------------------------------------------

    async def _find(self, params: Mapping[str, Any]) -> _Task:
        self._sweep()
        task_id = params.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise MCPError(code=INVALID_PARAMS, message="Give the taskId.")
        task = self._tasks.get(task_id)
        if task is not None:
            return task
        wait = self._adopt(task_id)
        if wait is None:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"No task {task_id!r} on this server (it expired, or never existed).",
            )
        adopted = _Task(task_id, DEFAULT_TTL_MS)
        self._start(adopted, wait)
        return adopted

    async def _result(self, task: _Task) -> dict[str, Any]:
        await task.done.wait()
        if task.status == "cancelled":
            raise MCPError(code=INVALID_PARAMS, message=f"Task {task.task_id!r} was cancelled.")
        if task.result is None:
            raise task.error or MCPError(code=INTERNAL_ERROR, message="The task has no result.")
        result = dict(task.result)
        result["_meta"] = {**(result.get("_meta") or {}), RELATED: {"taskId": task.task_id}}
        return result

    # --- cancelling --------------------------------------------------------------------------

    async def _cancel(self, task: _Task) -> dict[str, Any]:
        if task.done.is_set():
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Task {task.task_id!r} already ended ({task.status}).",
            )
        task.cancelling = True
        withdrawn = True
        if task.task_id.startswith("int_"):
            try:
                withdrawn = await self._withdraw(task.task_id)
            except Exception:
                task.cancelling = False
                raise MCPError(
                    code=INTERNAL_ERROR,
                    message="Could not withdraw the question in LineUp: try again.",
                ) from None
        if not withdrawn:  # the person answered first: their answer stands
            task.cancelling = False
            await task.done.wait()
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Task {task.task_id!r} already ended: the person answered.",
            )
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task.runner
        task.end("cancelled", "Cancelled by the MCP host.")
        return task.wire()

    def _sweep(self) -> None:
        """Forget ended tasks past their ttl; a task still waiting for the person is kept
        until it ends (its card stays open in LineUp)."""
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            if task.done.is_set() and task.expires <= now:
                del self._tasks[task_id]


def _ttl(metadata: Any) -> int:
    requested = metadata.get("ttl") if isinstance(metadata, Mapping) else None
    if not isinstance(requested, int) or isinstance(requested, bool):
        return DEFAULT_TTL_MS
    return max(MIN_TTL_MS, min(MAX_TTL_MS, requested))


def _outcome(result: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Whether the call failed, and what to tell: a tool error, or a question that ended
    unanswered (it expired, or was withdrawn)."""
    if result.get("isError"):
        return True, "The tool call failed."
    answer = result.get("structuredContent")
    if isinstance(answer, Mapping) and set(answer) == {"result"}:
        answer = answer["result"]
    if isinstance(answer, Mapping) and answer.get("status") in ("ended", "error"):
        return True, str(answer.get("reason") or answer.get("error") or "The question ended.")
    return False, "The person answered."


def _with_capability(result: HandlerResult) -> HandlerResult:
    wire = _as_dict(result)
    if wire.get("protocolVersion") in VERSIONS:
        capabilities = wire.setdefault("capabilities", {})
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    return wire


def _with_task_support(result: HandlerResult) -> HandlerResult:
    wire = _as_dict(result)
    for tool in wire.get("tools") or []:
        if tool.get("name") in TOOLS:
            tool["execution"] = {"taskSupport": "optional"}
    return wire


def _as_dict(result: HandlerResult) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, dict):
        return result
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
