"""The MCP server: LineUp's questions, reports and app tools as MCP tools.

A wait for a person is never an error and must not be cut short by a host's request timeout,
so each question tool waits at most ``wait_seconds`` (default :data:`DEFAULT_WAIT`), sending
MCP progress notifications meanwhile when the request carries a ``progressToken`` (hosts that
reset their timeout on progress then wait on), and then answers ``{"status": "pending",
"handle": …}``; ``wait_for_answer`` with that handle waits again for the same question —
nothing is asked twice. When the host supports form elicitation, the question is also put to
the person in the host (``_forms``): the first answer wins and the other side is withdrawn.
A host that speaks the MCP tasks utility calls a question as a task instead (``_tasks``):
it is answered at once and the wait, unbounded, runs in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from lineup.mcp import _forms
from lineup.mcp._person import PersonLink
from lineup.mcp._tasks import TasksMiddleware, question_asked, running_task
from lineup.protocol import question_tools as q
from lineup.protocol.errors import LineupError
from lineup.protocol.events import InteractionResolved
from lineup.protocol.interaction import Interaction
from lineup.protocol.question_tools import (
    AllowOther,
    Impact,
    InputFormat,
    Label,
    Multiple,
    Options,
    Pattern,
    Placeholder,
    Recommended,
    ReviewContent,
    ReviewFiles,
    Risk,
    Text,
    TimeoutMs,
    Title,
    ToolName,
    Why,
)
from lineup.sdk import RequestEnded, ToolReply

DEFAULT_WAIT = 45.0
"""Seconds a tool waits for a person before answering "pending": below the 60 s that Codex
allows an MCP tool call by default."""

PROGRESS_EVERY = 10.0
"""Seconds between progress notifications while waiting."""

TaskRef = Annotated[
    str | None,
    Field(description="The task (from create_task) this belongs to; default: the latest one."),
]
Wait = Annotated[
    float | None,
    Field(
        ge=0,
        le=3600,
        description="Seconds to wait for the person before answering 'pending' with a handle "
        "for wait_for_answer (default 45).",
    ),
]

INSTRUCTIONS = (
    "LineUp reaches your person: ask for approval, a choice, an input or a review; report "
    "tasks, progress, messages and artifacts. A question that is not answered within "
    "wait_seconds returns status 'pending' and a handle: call wait_for_answer with it "
    "(it does not ask again)."
)


def build_server(
    person: PersonLink,
    *,
    wait: float = DEFAULT_WAIT,
    progress_every: float = PROGRESS_EVERY,
    elicitation: bool = True,
) -> MCPServer:
    server: MCPServer = MCPServer(
        name="lineup",
        title="LineUp",
        instructions=INSTRUCTIONS,
        version=_version(),
        log_level="WARNING",
    )
    waiting = _Waiting(person, wait, progress_every, elicitation)
    server.middleware.append(TasksMiddleware(_adopter(server, person), _withdrawer(person)))

    definitions = q.BY_NAME

    def tool(name: str) -> Callable[[Any], Any]:
        return server.tool(title=definitions[name].title, description=definitions[name].description)

    @tool("ask_approval")
    async def ask_approval(
        ctx: Context,
        title: Title,
        description: Text | None = None,
        why: Why = None,
        impact: Impact = None,
        risk: Risk = "medium",
        details: dict[str, Any] | None = None,
        approve_label: Label = "Approve",
        reject_label: Label = "Reject",
        task_id: TaskRef = None,
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        question = q.AskApproval(
            title=title,
            description=description,
            why=why,
            impact=impact,
            risk=risk,
            details=details,
            approve_label=approve_label,
            reject_label=reject_label,
        )
        return await waiting.ask(ctx, q.card(question), task_id, wait_seconds)

    @tool("ask_choice")
    async def ask_choice(
        ctx: Context,
        title: Title,
        options: Options,
        recommended: Recommended = None,
        allow_other: AllowOther = False,
        multiple: Multiple = False,
        description: Text | None = None,
        why: Text | None = None,
        impact: Text | None = None,
        details: dict[str, Any] | None = None,
        task_id: TaskRef = None,
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        question = q.AskChoice(
            title=title,
            options=options,
            recommended=recommended,
            allow_other=allow_other,
            multiple=multiple,
            description=description,
            why=why,
            impact=impact,
            details=details,
        )
        return await waiting.ask(ctx, q.card(question), task_id, wait_seconds)

    @tool("ask_input")
    async def ask_input(
        ctx: Context,
        title: Title,
        format: InputFormat | None = None,
        pattern: Pattern = None,
        placeholder: Placeholder = None,
        description: Text | None = None,
        why: Text | None = None,
        details: dict[str, Any] | None = None,
        task_id: TaskRef = None,
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        question = q.AskInput(
            title=title,
            format=format,
            pattern=pattern,
            placeholder=placeholder,
            description=description,
            why=why,
            details=details,
        )
        return await waiting.ask(ctx, q.card(question), task_id, wait_seconds)

    @tool("ask_review")
    async def ask_review(
        ctx: Context,
        title: Title,
        content: ReviewContent = None,
        attachments: ReviewFiles = None,
        description: Text | None = None,
        why: Text | None = None,
        details: dict[str, Any] | None = None,
        task_id: TaskRef = None,
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        question = q.AskReview(
            title=title,
            content=content,
            attachments=attachments,
            description=description,
            why=why,
            details=details,
        )
        return await waiting.ask(ctx, q.card(question), task_id, wait_seconds)

    @server.tool(title="Wait for an answer")
    async def wait_for_answer(
        ctx: Context,
        handle: Annotated[str, Field(description="The handle a 'pending' answer gave.")],
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        """Keep waiting for a question asked earlier (it is not asked again)."""
        if handle.startswith("call_"):
            return await waiting.tool_call(ctx, handle, None, None, {}, None, None, wait_seconds)
        return await waiting.wait(ctx, person.card(handle), wait_seconds)

    @server.tool(title="Start a task")
    async def create_task(
        title: Annotated[str, Field(min_length=1, max_length=500)],
        description: Annotated[str | None, Field(max_length=100_000)] = None,
        conversation_id: str | None = None,
    ) -> dict[str, Any]:
        """Start a task people follow in LineUp; later calls default to it."""
        task_id = await person.create_task(title, description, conversation_id)
        return {"task_id": task_id, "status": "running"}

    @server.tool(title="Update a task")
    async def update_task(
        task_id: str,
        status: Literal["running", "succeeded", "failed", "cancelled"] | None = None,
        progress: Annotated[int | None, Field(ge=0, le=100)] = None,
        summary: Annotated[str | None, Field(max_length=500)] = None,
        error: Annotated[str | None, Field(max_length=4000)] = None,
    ) -> dict[str, Any]:
        """Report a task's progress, or end it (succeeded, failed with an error, cancelled)."""
        done = await person.update_task(task_id, status, progress, summary, error)
        return {"task_id": task_id, "status": done}

    @server.tool(title="Report progress")
    async def report_progress(
        progress: Annotated[int, Field(ge=0, le=100)],
        summary: Annotated[str | None, Field(max_length=500)] = None,
        task_id: TaskRef = None,
    ) -> dict[str, Any]:
        """Report a task's progress (0–100) and one short sentence of status."""
        place = task_id or person.latest_task
        if place is None:
            raise ValueError("No task to report on: start one with create_task.")
        await person.update_task(place, None, progress, summary, None)
        return {"task_id": place, "progress": progress}

    @server.tool(title="Tell the person")
    async def notify(
        text: Annotated[str, Field(min_length=1, max_length=100_000)],
        task_id: TaskRef = None,
        conversation_id: str | None = None,
    ) -> dict[str, Any]:
        """Post a message to the person in LineUp (the task's conversation)."""
        message_id = await person.notify(text, task_id, conversation_id)
        return {"message_id": message_id}

    @server.tool(title="Add an artifact")
    async def add_artifact(
        name: Annotated[str, Field(min_length=1, max_length=200)],
        url: Annotated[str | None, Field(description="An http(s) link to it.")] = None,
        content: Annotated[
            str | None, Field(description="Or its text, stored in the hub as a file.")
        ] = None,
        mime_type: str | None = None,
        summary: Annotated[str | None, Field(max_length=2000)] = None,
        task_id: TaskRef = None,
        conversation_id: str | None = None,
    ) -> dict[str, Any]:
        """Attach a link, file or result to the task for the person to open."""
        if (url is None) == (content is None):
            raise ValueError("Give either url or content.")
        if content is not None:
            url = await person.upload(name, content.encode(), mime_type or "text/plain")
        fields = {"name": name, "url": url, "mime_type": mime_type, "summary": summary}
        artifact_id = await person.artifact(_card(**fields), task_id, conversation_id)
        return {"artifact_id": artifact_id, "url": url}

    @tool("list_app_tools")
    async def list_app_tools() -> dict[str, Any]:
        return {"tools": await person.list_tools()}

    @tool("call_app_tool")
    async def call_app_tool(
        ctx: Context,
        name: ToolName,
        action: str | None = None,
        arguments: dict[str, Any] | None = None,
        timeout_ms: TimeoutMs = None,
        task_id: TaskRef = None,
        wait_seconds: Wait = None,
    ) -> dict[str, Any]:
        return await waiting.tool_call(
            ctx, None, name, action, arguments or {}, timeout_ms, task_id, wait_seconds
        )

    return server


def _adopter(
    server: MCPServer, person: PersonLink
) -> Callable[[str], Awaitable[dict[str, Any]] | None]:
    """After a restart: a question this server asked (its journal says so) is still a task,
    run as ``wait_for_answer`` on it."""

    def adopt(task_id: str) -> Awaitable[dict[str, Any]] | None:
        if not person.asked(task_id):
            return None

        async def wait() -> dict[str, Any]:
            try:
                result = await server.call_tool("wait_for_answer", {"handle": task_id})
            except Exception as error:  # as the SDK answers a failing tool: a tool error
                return {"content": [{"type": "text", "text": str(error)}], "isError": True}
            dumped: dict[str, Any] = result.model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            return dumped

        return wait()

    return adopt


def _withdrawer(person: PersonLink) -> Callable[[str], Awaitable[bool]]:
    async def withdraw(interaction_id: str) -> bool:
        return await person.withdraw(interaction_id, "Cancelled by the MCP host.")

    return withdraw


class _Waiting:
    """Waits for a person, bounded, with progress and (optionally) the host's own form."""

    def __init__(
        self, person: PersonLink, wait: float, progress_every: float, elicitation: bool
    ) -> None:
        self.person = person
        self.default_wait = wait
        self.progress_every = progress_every
        self.elicitation = elicitation

    async def ask(
        self, ctx: Context, card: dict[str, Any], task_id: str | None, wait: float | None
    ) -> dict[str, Any]:
        interaction = await self.person.ask(card, task_id, interaction_id=running_task())
        question_asked()
        return await self.wait(ctx, interaction, wait)

    async def wait(self, ctx: Context, card: Interaction, wait: float | None) -> dict[str, Any]:
        handle = card.id
        lineup = asyncio.ensure_future(self.person.answer(handle))
        host = None if running_task() else self._elicit(ctx, card)
        try:
            outcome = await self._race(ctx, lineup, host, wait)
            if outcome is host and host is not None:
                response = host.result()
                if response is not None and await self.person.withdraw(
                    handle, "Answered in the MCP host."
                ):
                    return _answer(card, response, by="mcp-host")
                outcome = await self._race(ctx, lineup, None, wait)
            if outcome is None:
                return _pending(handle)
            return _answer(card, _response(lineup.result()), resolved=lineup.result())
        except RequestEnded as ended:
            return {"status": "ended", "handle": handle, "reason": str(ended)}
        finally:
            for pending in (lineup, host):
                if pending is not None and not pending.done():
                    pending.cancel()

    async def tool_call(
        self,
        ctx: Context,
        call_id: str | None,
        name: str | None,
        action: str | None,
        arguments: dict[str, Any],
        timeout_ms: int | None,
        task_id: str | None,
        wait: float | None,
    ) -> dict[str, Any]:
        from lineup.protocol.ids import new_id

        own = call_id or new_id("call")
        call = asyncio.ensure_future(
            self.person.tool_result(own)
            if call_id is not None
            else self.person.call_tool(name or "", action, arguments, own, timeout_ms, task_id)
        )
        try:
            if await self._race(ctx, call, None, wait) is None:
                return _pending(own)
            reply: ToolReply = call.result()
        except RequestEnded as ended:
            return {"status": "ended", "handle": own, "reason": str(ended)}
        except LineupError as error:
            return {"status": "error", "handle": own, "code": error.code.value, "error": str(error)}
        finally:
            if not call.done():
                call.cancel()
        return {
            "status": "answered",
            "handle": own,
            "message": reply.message,
            "data": reply.data,
        }

    def _elicit(
        self, ctx: Context, card: Interaction
    ) -> asyncio.Future[dict[str, Any] | None] | None:
        capabilities = ctx.client_capabilities
        if not self.elicitation or capabilities is None or capabilities.elicitation is None:
            return None

        async def ask_host() -> dict[str, Any] | None:
            try:
                result = await ctx.session.elicit_form(
                    _forms.message(card),
                    _forms.requested_schema(card),
                    related_request_id=ctx.request_id,
                )
            except Exception:  # a host that cannot show it: LineUp alone answers
                return None
            if result.action != "accept" or not result.content:
                return None
            return _forms.response_from(card, dict(result.content))

        return asyncio.ensure_future(ask_host())

    async def _race(
        self,
        ctx: Context,
        lineup: asyncio.Future[Any],
        host: asyncio.Future[dict[str, Any] | None] | None,
        wait: float | None,
    ) -> asyncio.Future[Any] | None:
        """The first to finish usefully, or None when ``wait`` ran out. A host form that
        ended without an answer (declined, cancelled) leaves LineUp to answer."""
        limit = self.default_wait if wait is None else wait
        tasked = running_task() is not None
        if tasked:  # the host polls the task: no bound, and no request to send progress on
            limit = math.inf
        started = time.monotonic()
        watching: set[asyncio.Future[Any]] = {lineup} | ({host} if host is not None else set())
        while True:
            left = limit - (time.monotonic() - started)
            if left <= 0:
                return None
            done, _ = await asyncio.wait(
                watching, timeout=min(left, self.progress_every), return_when="FIRST_COMPLETED"
            )
            if lineup in done:
                lineup.result()  # raises what ended the wait
                return lineup
            if host is not None and host in done:
                if host.result() is not None:
                    return host
                watching.discard(host)
            if tasked:
                continue
            with contextlib.suppress(Exception):
                waited = time.monotonic() - started
                await ctx.report_progress(
                    waited, limit, "Waiting for the person to answer in LineUp…"
                )


def _card(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _response(resolved: InteractionResolved) -> dict[str, Any]:
    return resolved.response.model_dump(by_alias=True, exclude_none=True)


def _answer(
    card: Interaction,
    response: dict[str, Any],
    *,
    resolved: InteractionResolved | None = None,
    by: str | None = None,
) -> dict[str, Any]:
    """The answer as the host's model reads it: the decision first, then who gave it."""
    answer: dict[str, Any] = {"status": "answered", "handle": card.id}
    answer.update(q.answer(card, response))
    if resolved is not None:
        answer["answered_by"] = resolved.responded_by_name or resolved.responded_by
        answer["answered_in"] = "lineup"
    else:
        answer["answered_in"] = by or "mcp-host"
    return answer


def _pending(handle: str) -> dict[str, Any]:
    return {
        "status": "pending",
        "handle": handle,
        "next": "The person has not answered yet. Call wait_for_answer with this handle to "
        "keep waiting; the question stays open in LineUp.",
    }


def _version() -> str:
    from lineup import __version__

    return __version__
