"""The LineUp side of the MCP server: one paired agent that asks its person, reports tasks
and calls the app's tools on behalf of whatever MCP host calls it.

Each MCP tool call is its own journaled scope (``mcp:<id>``), so calls need no order and a
restarted server finds every question it asked — with its card and any answer that came
meanwhile — in the agent's state file. A question is asked once: waiting again for it
(``wait_for_answer``) waits for the same interaction.

Tasks the host starts (``create_task``) are tasks the agent gives itself (``task.create``);
the hub assigns them back, and a parked handler holds each one open until the host ends it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import Conflict, InvalidArgument, NotFound
from lineup.protocol.events import (
    AgentMessageCreate,
    AgentTaskCreate,
    ArtifactCreated,
    InteractionCancel,
    InteractionRequested,
    InteractionResolved,
    TaskStatusChanged,
    TaskStatusName,
)
from lineup.protocol.ids import new_id
from lineup.protocol.interaction import Interaction
from lineup.sdk import Agent, TaskContext, TaskStopped, ToolReply
from lineup.sdk._core import Core
from lineup.sdk._journal import Journal, build_payload
from lineup.sdk._tools import ANSWER_PREFIX, Tools
from lineup.sdk._tools import _reply as reply_of

SCOPE = "mcp:"


@dataclass
class OpenTask:
    """A task the host started, held open by its parked handler."""

    context: TaskContext
    end: asyncio.Future[tuple[str, str | None]]
    """Set by the host: (status, summary or error)."""


class PersonLink:
    """What the MCP tools do through LineUp, for one running :class:`~lineup.sdk.Agent`."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._tasks: dict[str, OpenTask] = {}
        self._started: dict[str, asyncio.Event] = {}
        self.latest_task: str | None = None
        agent.task(self._hold_task)

    # --- the running agent ------------------------------------------------------------------

    def _core(self) -> Core:
        core = self.agent._core
        if core is None:
            raise RuntimeError("The LineUp agent is not running.")
        return core

    async def _emit(
        self,
        scope: str,
        event_type: str,
        payload: Any,
        result: Mapping[str, Any],
        *,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Any:
        core = self._core()
        journal = Journal(core, scope, first_index=0)

        def build(index: int) -> tuple[Envelope, Any]:
            envelope = core.make_envelope(
                event_type,
                payload,
                envelope_id=journal.derive("evt", index),
                task_id=task_id,
                conversation_id=conversation_id,
            )
            return envelope, dict(result)

        return await journal.emit(event_type, event_type, build)

    def _place(self, task_id: str | None) -> str | None:
        """The task an event belongs to: the one named, else the host's latest open one."""
        if task_id is not None:
            return task_id
        latest = self.latest_task
        return latest if latest is not None and latest in self._tasks else None

    # --- questions --------------------------------------------------------------------------

    async def ask(
        self, card: dict[str, Any], task_id: str | None, *, interaction_id: str | None = None
    ) -> Interaction:
        """Put the question on the person's inbox (once); return the card as sent. An MCP
        task names its question with its own id, so either finds the other."""
        interaction_id = interaction_id or new_id("int")
        interaction = build_payload(Interaction, id=interaction_id, **card)
        place = self._place(task_id)
        await self._emit(
            SCOPE + interaction_id,
            "interaction.requested",
            InteractionRequested(interaction=interaction),
            {"card": interaction.wire()},
            task_id=place,
        )
        return interaction

    def card(self, interaction_id: str) -> Interaction:
        """A question this agent asked, from its journal (also after a restart)."""
        step = self._core().store.step(SCOPE + interaction_id, 0)
        if step is None or "card" not in (step.result or {}):
            raise NotFound(
                f"No question {interaction_id!r} was asked through this server.",
                details={"handle": interaction_id},
            )
        return Interaction.model_validate(step.result["card"])

    def asked(self, handle: str) -> bool:
        """Whether this server asked this question (or made this app tool call), by its
        journal: also true after a restart."""
        store = self._core().store
        if handle.startswith("call_"):
            return store.step(ANSWER_PREFIX + handle, 0) is not None
        step = store.step(SCOPE + handle, 0)
        return step is not None and "card" in (step.result or {})

    async def answer(self, interaction_id: str) -> InteractionResolved:
        """Wait for the person's answer (kept in the state file once it came)."""
        expiry = self.card(interaction_id).expires_at
        return await self._core().wait_answer(interaction_id, expiry)

    async def withdraw(self, interaction_id: str, reason: str) -> bool:
        """Take the card back (it was answered in the host); False when the person answered
        it in LineUp first, whose answer then stands."""
        try:
            await self._emit(
                f"{SCOPE}{interaction_id}:withdraw",
                "interaction.cancel",
                InteractionCancel(interaction_id=interaction_id, reason=reason),
                {},
            )
        except Conflict:
            return False
        return True

    # --- tasks ------------------------------------------------------------------------------

    async def _hold_task(self, context: TaskContext) -> str | None:
        end: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()
        self._tasks[context.task_id] = OpenTask(context, end)
        self._started.setdefault(context.task_id, asyncio.Event()).set()
        try:
            status, text = await end
        finally:
            self._tasks.pop(context.task_id, None)
        if status == "failed":
            raise TaskFailed(text or "The host reported the task failed.")
        if status == "cancelled":
            raise TaskStopped(text or "Stopped by the agent.")
        return text

    async def create_task(
        self, title: str, description: str | None, conversation_id: str | None
    ) -> str:
        """Start a task assigned to this agent; returns once it is running."""
        task_id = new_id("task")
        started = self._started.setdefault(task_id, asyncio.Event())
        await self._emit(
            SCOPE + task_id,
            "task.create",
            build_payload(AgentTaskCreate, title=title, description=description, task_id=task_id),
            {"taskId": task_id},
            conversation_id=conversation_id,
        )
        await started.wait()
        self._started.pop(task_id, None)
        self.latest_task = task_id
        return task_id

    def open_task(self, task_id: str) -> OpenTask:
        task = self._tasks.get(task_id)
        if task is None:
            raise NotFound(
                f"Task {task_id!r} is not open on this server (it ended, or was never started "
                "here).",
                details={"taskId": task_id},
            )
        return task

    async def update_task(
        self,
        task_id: str,
        status: str | None,
        progress: int | None,
        summary: str | None,
        error: str | None,
    ) -> str:
        """Report progress, or end the task (``succeeded``, ``failed``, ``cancelled``)."""
        task = self.open_task(task_id)
        if status in ("succeeded", "failed", "cancelled"):
            if status == "failed" and not error:
                raise InvalidArgument("A failed task needs an error: say what went wrong.")
            if not task.end.done():
                task.end.set_result((status, error if status == "failed" else summary))
            return status
        if error:
            raise InvalidArgument("Only a failed task has an error.")
        report = build_payload(
            TaskStatusChanged, status=TaskStatusName.RUNNING, progress=progress, summary=summary
        )
        await self._emit(SCOPE + new_id("rep"), "task.status_changed", report, {}, task_id=task_id)
        return "running"

    # --- reports ----------------------------------------------------------------------------

    async def notify(self, text: str, task_id: str | None, conversation_id: str | None) -> str:
        place = self._place(task_id)
        if place is None and conversation_id is None:
            raise InvalidArgument(
                "A message needs a place: start a task first (create_task), or name a "
                "task_id or conversation_id."
            )
        message_id = new_id("msg")
        await self._emit(
            SCOPE + message_id,
            "message.create",
            build_payload(AgentMessageCreate, content=text, message_id=message_id),
            {},
            task_id=place,
            conversation_id=None if place else conversation_id,
        )
        return message_id

    async def artifact(
        self, fields: dict[str, Any], task_id: str | None, conversation_id: str | None
    ) -> str:
        artifact_id = new_id("art")
        place = self._place(task_id)
        await self._emit(
            SCOPE + artifact_id,
            "artifact.created",
            build_payload(ArtifactCreated, artifact_id=artifact_id, **fields),
            {},
            task_id=place,
            conversation_id=None if place else conversation_id,
        )
        return artifact_id

    async def upload(self, name: str, content: bytes, mime_type: str | None) -> str:
        uploaded = await self.agent.upload(name, content, mime_type=mime_type)
        return uploaded.url

    # --- the app's tools ----------------------------------------------------------------------

    def _tools(self, task_id: str | None) -> Tools:
        place = self._place(task_id)
        if place is None:
            return self.agent.tools
        return Tools(self._core, task_id=place)

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self.agent.tools.list()

    async def call_tool(
        self,
        name: str,
        action: str | None,
        arguments: dict[str, Any],
        call_id: str,
        timeout_ms: int | None,
        task_id: str | None,
    ) -> ToolReply:
        return await self._tools(task_id).call(
            name, action, arguments=arguments, call_id=call_id, timeout_ms=timeout_ms
        )

    async def tool_result(self, call_id: str) -> ToolReply:
        """The result of a call made earlier (kept in the state file once it came)."""
        core = self._core()
        if core.store.step(ANSWER_PREFIX + call_id, 0) is None:
            raise NotFound(
                f"No tool call {call_id!r} was made through this server.",
                details={"handle": call_id},
            )
        return reply_of(await core.wait_tool_result(call_id), call_id)


class TaskFailed(Exception):
    """The host ended its task as failed; the message is the error people read."""
