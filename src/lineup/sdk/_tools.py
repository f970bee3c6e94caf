"""Tools on people's apps (seed 000 §4): list them, call them, get their results.

::

    tools = await agent.tools.list()                  # what the apps offer
    where = await ctx.tools.choice("Deploy where?", ["test", "staging", "production"])
    if await ctx.tools.confirm(f"Deploy to {where}?"):
        ...
    total = await ctx.tools.calculator.add(2, 3)      # 5, computed by the app
    canvas = await ctx.tools.canvas.open(800, 600)
    await canvas.draw("M10 10 L50 50", color="red", width=3)
    await canvas.undo()
    await canvas.close()
    result = await ctx.tools.call("canvas", "open", width=800, height=600)  # any tool

A call is durable like ``ask_*``: inside a task (``ctx.tools``) it is a journaled step, so a
handler resumed after a restart resends nothing and gets the answer that arrived while the
agent was down. ``agent.tools`` (outside a task) is durable the same way when given a
``call_id`` of your own, which works like an idempotency key.

A call waits until an app answers — there is no timeout unless ``timeout_ms`` is given; the
hub then ends the call when it passes (even while the agent is away) and the call raises
:class:`~lineup.protocol.errors.Unavailable`. An
app's error answer, and the hub's refusal of the call (an unknown tool is ``NotFound``, bad
arguments ``InvalidArgument`` with ``details["problems"]``), raise the taxonomy's exceptions.
Cancelling the waiting coroutine (or a person cancelling the task) withdraws the call
(``tool.cancel``); an agent shutting down does not, so the call resumes on restart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import LineupError, error_from_code
from lineup.protocol.ids import new_id
from lineup.protocol.tools import ToolCall, ToolResult
from lineup.sdk._journal import Journal, Runtime, build_payload, derive_id

ANSWER_PREFIX = "tool:"
"""Tool results share the journal's answers table with interactions, under this prefix."""


class ToolRuntime(Runtime, Protocol):
    """What tool calls need from the running agent, beyond a context's ``Runtime``."""

    @property
    def shutting_down(self) -> bool: ...

    async def wait_tool_result(self, call_id: str) -> ToolResult: ...

    async def query_tools(self) -> list[dict[str, Any]]: ...

    def withdraw_tool_call(self, call_id: str, reason: str | None = None) -> None: ...

    def forget_tool_call(self, scope: str, call_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolReply:
    """An app's answer to a tool call: ``message`` (seed 000 §4.5) and the whole ``data``."""

    call_id: str
    name: str
    action: str | None
    message: str
    data: dict[str, Any] = field(default_factory=dict)


class Tools:
    """The tools of people's apps, as an agent calls them (``agent.tools``, ``ctx.tools``)."""

    def __init__(
        self,
        runtime: Callable[[], ToolRuntime],
        *,
        journal: Journal | None = None,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        self._runtime = runtime
        self._journal = journal
        self._task_id = task_id
        self._conversation_id = conversation_id
        self.calculator = Calculator(self)
        self.canvas = CanvasTool(self)

    def __repr__(self) -> str:
        where = self._task_id or self._conversation_id or "agent"
        return f"Tools({where})"

    async def list(self) -> list[dict[str, Any]]:
        """The tools the people's apps offer (seed 000 §4.6 definitions, as dicts).

        The union of what the workspace's apps registered, or the built-in catalogue (choice,
        confirm, input, calculator, canvas) when none registered any. Waits for a connection.
        """
        return await (await self._current()).query_tools()

    async def _current(self) -> ToolRuntime:
        try:
            return self._runtime()
        except RuntimeError:
            await asyncio.sleep(0)  # an agent.run() task created just now has not started yet
            return self._runtime()

    async def call(
        self,
        tool: str,
        action: str | None = None,
        /,
        *,
        arguments: Mapping[str, Any] | None = None,
        call_id: str | None = None,
        timeout_ms: int | None = None,
        **kwargs: Any,
    ) -> ToolReply:
        """Call ``tool``'s ``action`` on the people's apps and wait for the answer.

        Arguments go as keywords (``width=800``) or, for names this method uses itself
        (``arguments``, ``call_id``, ``timeout_ms``), in ``arguments``. Returns the app's
        :class:`ToolReply`; raises the taxonomy's exception for a refusal or an error answer.
        """
        args = {**(arguments or {}), **kwargs}
        runtime = await self._current()
        name = f"{tool}.{action}" if action else tool

        def build(index: int, own_id: str) -> tuple[Envelope, dict[str, Any]]:
            payload = build_payload(
                ToolCall,
                call_id=own_id,
                name=tool,
                action=action,
                arguments=args,
                timeout_ms=timeout_ms,
            )
            envelope = runtime.make_envelope(
                "tool.call",
                payload,
                envelope_id=derive_id("evt", runtime.agent_id, f"tool:{own_id}", index),
                task_id=self._task_id,
                conversation_id=self._conversation_id,
            )
            return envelope, {"callId": own_id}

        # One journaled step, as Journal.emit does, but keeping hold of the call id so that a
        # cancel arriving before the hub's ack still withdraws the call.
        scope: str | None = None
        if self._journal is not None:
            journal = self._journal
            own = None
        else:
            own = call_id or new_id("call")
            scope = f"{ANSWER_PREFIX}{own}"
            journal = Journal(runtime, scope, first_index=0)
        index, step = journal.begin("tool.call", name)
        if step is None:
            envelope, made = build(index, own or journal.derive("call", index))
            step = journal.commit(index, "tool.call", name, made, envelope)
        own_id = str(step.result["callId"])
        try:
            await runtime.wait_settled(step)
            result = await runtime.wait_tool_result(own_id)
        except asyncio.CancelledError:
            if not runtime.shutting_down:
                runtime.withdraw_tool_call(own_id, "The agent stopped waiting for it.")
            raise
        if scope is not None and call_id is None:
            runtime.forget_tool_call(scope, own_id)
        return _reply(result, own_id)

    # --- the built-in action tools ------------------------------------------------------------

    async def choice(
        self,
        question: str,
        options: Sequence[str],
        *,
        timeout_ms: int | None = None,
        call_id: str | None = None,
    ) -> str:
        """Offer ``options`` and return the one the person chose."""
        reply = await self.call(
            "choice",
            "select",
            question=question,
            options=list(options),
            timeout_ms=timeout_ms,
            call_id=call_id,
        )
        return reply.message

    async def confirm(
        self, message: str, *, timeout_ms: int | None = None, call_id: str | None = None
    ) -> bool:
        """Ask a yes/no question; True for yes."""
        reply = await self.call(
            "confirm", None, message=message, timeout_ms=timeout_ms, call_id=call_id
        )
        confirmed = reply.data.get("confirmed")
        return confirmed if isinstance(confirmed, bool) else reply.message == "yes"

    async def input(
        self,
        question: str,
        format: str | None = None,
        *,
        placeholder: str | None = None,
        timeout_ms: int | None = None,
        call_id: str | None = None,
    ) -> str:
        """Ask for a typed answer, optionally in a ``format`` (text, email, url, number,
        integer) the app checks before sending it."""
        extra: dict[str, Any] = {}
        if format is not None:
            extra["format"] = format
        if placeholder is not None:
            extra["placeholder"] = placeholder
        reply = await self.call(
            "input", None, question=question, timeout_ms=timeout_ms, call_id=call_id, **extra
        )
        return reply.message


class Calculator:
    """``calculator`` (a toolset): the app computes; dividing by zero is ``InvalidArgument``."""

    def __init__(self, tools: Tools) -> None:
        self._tools = tools

    async def _compute(self, action: str, a: float, b: float, timeout_ms: int | None) -> float:
        reply = await self._tools.call("calculator", action, a=a, b=b, timeout_ms=timeout_ms)
        value = reply.data.get("value")
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        return float(reply.message)

    async def add(self, a: float, b: float, *, timeout_ms: int | None = None) -> float:
        """``a + b``."""
        return await self._compute("add", a, b, timeout_ms)

    async def subtract(self, a: float, b: float, *, timeout_ms: int | None = None) -> float:
        """``a - b``."""
        return await self._compute("subtract", a, b, timeout_ms)

    async def multiply(self, a: float, b: float, *, timeout_ms: int | None = None) -> float:
        """``a * b``."""
        return await self._compute("multiply", a, b, timeout_ms)

    async def divide(self, a: float, b: float, *, timeout_ms: int | None = None) -> float:
        """``a / b``."""
        return await self._compute("divide", a, b, timeout_ms)


class CanvasTool:
    """``canvas`` (an app): open drawing boards on the people's screens."""

    def __init__(self, tools: Tools) -> None:
        self._tools = tools

    async def open(self, width: int, height: int, *, timeout_ms: int | None = None) -> Canvas:
        """Open a ``width`` × ``height`` canvas; several may be open at once."""
        reply = await self._tools.call(
            "canvas", "open", width=width, height=height, timeout_ms=timeout_ms
        )
        instance = reply.data.get("instance_id")
        if not isinstance(instance, str):
            instance = reply.message.removeprefix("instance_id:").strip()
        return Canvas(self._tools, instance, width, height)


class Canvas:
    """One open canvas instance: ``draw`` SVG paths, ``undo``, ``clear``, ``close``."""

    def __init__(self, tools: Tools, instance_id: str, width: int, height: int) -> None:
        self._tools = tools
        self.instance_id = instance_id
        self.width = width
        self.height = height

    def __repr__(self) -> str:
        return f"Canvas({self.instance_id!r}, {self.width}×{self.height})"

    async def _do(self, action: str, timeout_ms: int | None, **arguments: Any) -> None:
        await self._tools.call(
            "canvas", action, instance_id=self.instance_id, timeout_ms=timeout_ms, **arguments
        )

    async def draw(
        self,
        path: str,
        *,
        color: str | None = None,
        width: int | None = None,
        timeout_ms: int | None = None,
    ) -> None:
        """Draw SVG path data (``"M10 10 L50 50"``) with an optional colour and line width."""
        extra: dict[str, Any] = {}
        if color is not None:
            extra["color"] = color
        if width is not None:
            extra["width"] = width
        await self._do("draw", timeout_ms, path=path, **extra)

    async def undo(self, *, timeout_ms: int | None = None) -> None:
        """Take back the last draw or clear."""
        await self._do("undo", timeout_ms)

    async def clear(self, *, timeout_ms: int | None = None) -> None:
        """Empty the canvas (``undo`` brings the strokes back)."""
        await self._do("clear", timeout_ms)

    async def close(self, *, timeout_ms: int | None = None) -> None:
        """Close the canvas; later calls on it are ``NotFound``."""
        await self._do("close", timeout_ms)


def _reply(result: ToolResult, call_id: str) -> ToolReply:
    if result.error is not None:
        raise tool_error(result, call_id)
    data: dict[str, Any] = {}
    message = ""
    if result.result is not None:
        data = result.result.model_dump(mode="json", by_alias=True)
        message = result.result.message
    return ToolReply(
        call_id=call_id, name=result.name, action=result.action, message=message, data=data
    )


def tool_error(result: ToolResult, call_id: str) -> LineupError:
    """The exception an error answer stands for (``Unavailable`` for a timeout)."""
    assert result.error is not None
    details = {"call_id": call_id, "tool": result.name, "action": result.action}
    extra = result.error.model_extra or {}
    if isinstance(extra.get("details"), dict):
        details.update(extra["details"])
    return error_from_code(result.error.code, result.error.message, details)


def parse_result(raw: str) -> ToolResult:
    return ToolResult.model_validate_json(raw)


def dump_result(result: BaseModel) -> str:
    return result.model_dump_json(by_alias=True, exclude_none=True)
