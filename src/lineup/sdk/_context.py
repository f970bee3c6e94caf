"""What a handler works with: :class:`TaskContext` for a task, :class:`MessageContext` for a
person's message.

Every method that reaches the hub is a journaled step (see ``_journal``): it is written to the
agent's state and outbox before it is sent, returns once the hub has acknowledged it, and is
not repeated when a handler is resumed after a restart. While the hub is unreachable the
methods wait; they never lose what was asked of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar, cast

from pydantic import BaseModel

from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import Conflict
from lineup.protocol.events import (
    AgentMessageCreate,
    ArtifactCreated,
    Author,
    InteractionCancel,
    InteractionRequested,
    InteractionResolved,
    MessageDelivered,
    MessageDelta,
    TaskAccepted,
    TaskAssigned,
    TaskChildCreated,
    TaskStatusChanged,
    TaskStatusName,
)
from lineup.protocol.ids import new_id
from lineup.protocol.interaction import (
    Attachment,
    Interaction,
    InteractionOption,
    InteractionType,
)
from lineup.protocol.times import format_timestamp
from lineup.sdk._activity import Activity
from lineup.sdk._answers import (
    APPROVE,
    REJECT,
    REQUEST_CHANGES,
    Approval,
    Choice,
    InputAnswer,
    Review,
    approval_from,
    choice_from,
    choice_options,
    input_from,
    review_from,
)
from lineup.sdk._capabilities import (
    Capabilities,
    CapabilityRuntime,
    InvocationOutcome,
    StatusCallback,
)
from lineup.sdk._errors import TaskCancelled, TaskEnded
from lineup.sdk._journal import Journal, Runtime, build_payload, derive_id, json_value
from lineup.sdk._tools import ToolRuntime, Tools
from lineup.sdk._uploads import FileContent, UploadedFile, read_content

T = TypeVar("T")

StatusName = Literal["queued", "running", "waiting_for_human", "succeeded", "failed", "cancelled"]
RiskLevel = Literal["low", "medium", "high"]
InputFormatName = Literal["text", "email", "url", "number", "integer"]
AttachmentLike = Attachment | Mapping[str, Any]

DEFAULT_CHUNK = 200
"""Characters per ``message.delta`` when :meth:`TaskContext.say` streams a finished text."""

MAX_DELTA = 16_000
"""The protocol's limit for one ``message.delta``; longer pieces are split."""


class RecordedStep(NamedTuple):
    """A step a handler's earlier run recorded: its kind (``step``, ``message.create``,
    ``interaction.requested``, ``tool.call``, …), its name and its journaled result."""

    kind: str
    name: str
    result: Any


class _Questions:
    """What both contexts do alike: ask people, and keep steps from repeating on resume."""

    _runtime: Runtime
    _journal: Journal
    activity: Activity

    async def _ask(
        self, op: str, expires_at: datetime | None, **fields: Any
    ) -> InteractionResolved:
        raise NotImplementedError

    async def _emit_step(
        self, op: str, event_type: str, make: Callable[[int], tuple[BaseModel, Any]]
    ) -> Any:
        raise NotImplementedError

    async def step(self, name: str, fn: Callable[[], Awaitable[T] | T]) -> T:
        """Run ``fn`` once for this handler, even across restarts; return its (JSON) result.

        The result is journaled; a resumed handler gets the recorded value back without
        calling ``fn`` again. It must be JSON-serialisable and reads back as JSON would
        (tuples as lists), on the first run too. If the agent stops while ``fn`` runs, ``fn``
        runs again on resume: make it safe to repeat, or idempotent.
        """
        index, recorded = self._journal.begin("step", name)
        if recorded is not None:
            return cast(T, recorded.result)
        value = fn()
        if inspect.isawaitable(value):
            value = await value
        result = json_value(value)
        self._journal.commit(index, "step", name, result, None)
        return cast(T, result)

    async def skip_recorded(self, reason: str) -> list[RecordedStep]:
        """Go on after every step this handler recorded before a restart, without repeating
        them — for a handler whose work cannot be replayed (an engine's turn, lost with its
        process, must not run twice). Questions and tool calls among them that nobody
        answered are withdrawn with ``reason``; later steps and transcript entries are new
        to the hub. Returns the steps passed over, in order (none on a first run): what the
        first run did, for the handler to say what became of it."""
        skipped = self._journal.skip_recorded()
        if not skipped:
            return []
        self.activity._start_over(f"after{skipped[-1].index}:")
        runtime = cast(ToolRuntime, self._runtime)
        for step in skipped:
            result = step.result if isinstance(step.result, dict) else {}
            if step.kind == "interaction.requested" and result.get("interactionId"):
                interaction_id = str(result["interactionId"])
                if runtime.store.answer(interaction_id) is None:
                    await self._withdraw(interaction_id, reason)
            elif step.kind == "tool.call" and result.get("callId"):
                runtime.withdraw_tool_call(str(result["callId"]), reason)
        return [RecordedStep(step.kind, step.name, step.result) for step in skipped]

    async def _withdraw(self, interaction_id: str, reason: str) -> None:
        payload = InteractionCancel(interaction_id=interaction_id, reason=reason[:2000])
        # answered, expired or withdrawn meanwhile (a conflict): nothing waits for it
        with contextlib.suppress(Conflict):
            await self._emit_step("withdraw", "interaction.cancel", lambda _index: (payload, None))

    async def ask_approval(
        self,
        title: str,
        *,
        description: str | None = None,
        why: str | None = None,
        impact: str | None = None,
        risk: RiskLevel = "medium",
        details: dict[str, Any] | None = None,
        content: str | None = None,
        editable_input: Mapping[str, Any] | None = None,
        expires_at: datetime | None = None,
        approve_label: str = "Approve",
        reject_label: str = "Reject",
    ) -> Approval:
        """Ask a person to approve or reject; wait (across reconnects and restarts) for them.

        The card reads: ``why`` you are asked → ``impact`` → ``content`` (a command, a diff)
        → the two buttons → ``details``. With ``editable_input`` (the input of the action
        asked about, a JSON object) the person may change it before allowing: the answer's
        :attr:`~lineup.sdk.Approval.input` is then the input to use. Waiting is not an error
        and has no timeout, unless ``expires_at`` is given (then
        :class:`~lineup.sdk.InteractionExpired` is raised once the hub records the expiry —
        by its clock, and heard on reconnect if the agent was away; an answer the hub accepted
        before then is returned, not lost). In a conversation (a message's context) the card
        sits in the conversation and in the inbox.
        """
        card = _approval_card(
            title, description, why, impact, risk, details, approve_label, reject_label
        )
        if content is not None:
            card["content"] = content
        if editable_input is not None:
            card["editable_input"] = dict(editable_input)
        return approval_from(await self._ask("approval", expires_at, **card))

    async def ask_choice(
        self,
        title: str,
        options: Sequence[str] | Sequence[tuple[str, str]],
        *,
        recommended: str | None = None,
        allow_other: bool = False,
        multiple: bool = False,
        description: str | None = None,
        why: str | None = None,
        impact: str | None = None,
        details: dict[str, Any] | None = None,
        expires_at: datetime | None = None,
    ) -> Choice:
        """Offer 2–5 options (labels, or ``(id, label)`` pairs) and wait for the pick.

        ``recommended`` names one option (by id or label); ``allow_other`` lets the person
        write their own answer (``Choice.other``); ``multiple`` lets them pick several.
        """
        built = choice_options(list(options), recommended)
        resolved = await self._ask(
            "choice",
            expires_at,
            type=InteractionType.CHOICE,
            title=title,
            description=description,
            why=why,
            impact=impact,
            options=built,
            allow_other=allow_other,
            multiple=multiple,
            details=details,
        )
        return choice_from(resolved, built)

    async def ask_input(
        self,
        title: str,
        *,
        format: InputFormatName | None = None,
        pattern: str | None = None,
        placeholder: str | None = None,
        description: str | None = None,
        why: str | None = None,
        details: dict[str, Any] | None = None,
        expires_at: datetime | None = None,
    ) -> InputAnswer:
        """Ask for a piece of text (optionally an email, URL or number, or matching
        ``pattern``, a regular expression) and wait for it."""
        resolved = await self._ask(
            "input",
            expires_at,
            type=InteractionType.INPUT,
            title=title,
            description=description,
            why=why,
            format=format,
            pattern=pattern,
            placeholder=placeholder,
            details=details,
        )
        return input_from(resolved)

    async def ask_review(
        self,
        title: str,
        *,
        content: str | None = None,
        attachments: Sequence[AttachmentLike] | None = None,
        description: str | None = None,
        why: str | None = None,
        details: dict[str, Any] | None = None,
        expires_at: datetime | None = None,
    ) -> Review:
        """Show ``content`` (text, such as a plan or a diff) and/or attachments for review;
        wait for approval or a request for changes with a comment."""
        files = [
            a if isinstance(a, Attachment) else build_payload(Attachment, **dict(a))
            for a in attachments or ()
        ]
        resolved = await self._ask(
            "review",
            expires_at,
            type=InteractionType.REVIEW,
            title=title,
            description=description,
            why=why,
            content=content,
            attachments=files or None,
            options=[
                InteractionOption(id=APPROVE, label="Approve", style="primary"),
                InteractionOption(id=REQUEST_CHANGES, label="Request changes"),
            ],
            details=details,
        )
        return review_from(resolved)

    async def ask(
        self, card: Mapping[str, Any], *, expires_at: datetime | None = None
    ) -> InteractionResolved:
        """Put a card made elsewhere to a person — any type, the fields of an interaction
        (docs/protocol.md §6) without ``id`` — and wait for the hub's ``interaction.resolved``
        as it came. For bridges that hand the answer on (hosted engines, the MCP server);
        a handler's own questions read better with ``ask_approval`` and the others."""
        fields = {k: v for k, v in card.items() if k not in ("id", "expires_at", "expiresAt")}
        kind = str(fields.get("type", ""))
        return await self._ask(kind or "ask", expires_at, **fields)


class TaskContext(_Questions):
    """One task given to this agent, and everything the handler can do about it.

    Attributes come from ``task.assigned``: ``task_id``, ``title``, ``description``,
    ``parent_task_id``, ``conversation_id``, ``conversation_title`` and ``messages`` (the
    conversation so far, as the hub sent it).

    ``cancelled`` is set when a person asks to stop the task; the SDK then also cancels the
    handler, which sees :class:`asyncio.CancelledError` at its next ``await``. When the agent
    did not confirm a cancel in time the hub ends the task itself: ``ended_by_hub`` then holds
    the cause (``"cancel_timeout"``), the handler is cancelled the same way, and nothing more
    is reported for the task.

    Call the methods one after another (not concurrently with ``asyncio.gather``): a resumed
    handler is matched to its journal by the order of its calls. Code between calls runs again
    on resume, so put side effects that must happen once in :meth:`step`.
    """

    def __init__(self, runtime: Runtime, envelope: Envelope, assigned: TaskAssigned) -> None:
        self._runtime = runtime
        self._journal = Journal(runtime, assigned.task_id, first_index=0)
        self.task_id: str = assigned.task_id
        self.title: str = assigned.title
        self.description: str | None = assigned.description
        self.parent_task_id: str | None = assigned.parent_task_id
        self.conversation_id: str | None = envelope.conversation_id
        self.conversation_title: str | None = assigned.conversation_title
        self.messages: list[dict[str, Any]] = list(assigned.messages)
        self.cancelled = asyncio.Event()
        self.cancel_reason: str | None = None
        self.ended_by_hub: str | None = None
        # calls carry this task; each is a journaled step of the handler
        self.tools: Tools = Tools(
            lambda: cast(ToolRuntime, runtime),
            journal=self._journal,
            task_id=self.task_id,
            conversation_id=self.conversation_id,
        )
        self.capabilities: Capabilities = Capabilities(
            lambda: cast(CapabilityRuntime, runtime),
            journal=self._journal,
            task_id=self.task_id,
            conversation_id=self.conversation_id,
        )
        self.activity: Activity = Activity(
            runtime, self._journal, self.task_id, self.conversation_id
        )
        """The live transcript: tool calls, commands, file changes, reasoning, token use."""

    def __repr__(self) -> str:
        return f"TaskContext(task_id={self.task_id!r}, title={self.title!r})"

    # --- reports --------------------------------------------------------------------------

    async def progress(self, percent: int, summary: str | None = None) -> None:
        """Report progress (0–100) and optionally one short sentence of status."""
        payload = build_payload(
            TaskStatusChanged, status=TaskStatusName.RUNNING, progress=percent, summary=summary
        )
        await self._send("progress", "task.status_changed", lambda _index: (payload, None))

    async def child(self, title: str, status: StatusName = "running") -> str:
        """Show a child task under this one; returns its id (for :meth:`child_status`)."""

        def make(_index: int) -> tuple[BaseModel, Any]:
            child_id = new_id("task")
            payload = build_payload(
                TaskChildCreated,
                parent_task_id=self.task_id,
                title=title,
                status=status,
                child_task_id=child_id,
            )
            return payload, child_id

        return str(await self._send("child", "task.child_created", make))

    async def child_status(
        self,
        child_id: str,
        status: StatusName,
        *,
        progress: int | None = None,
        summary: str | None = None,
        error: str | None = None,
    ) -> None:
        """Report a child task's status or progress (``error`` only with ``failed``)."""
        payload = build_payload(
            TaskStatusChanged, status=status, progress=progress, summary=summary, error=error
        )
        await self._send(
            "child_status", "task.status_changed", lambda _index: (payload, None), task_id=child_id
        )

    async def say(self, text: str | AsyncIterable[str], *, chunk: int = DEFAULT_CHUNK) -> str:
        """Post a message in the task's conversation; returns the message id.

        The text is streamed as ``message.delta`` frames (``chunk`` characters each; 0 for
        none) that people see live, then sent once whole as the recorded ``message.create``.
        ``text`` may be an async iterable of pieces (a model's token stream): each piece is
        streamed as it comes. Only the final message is durable.
        """
        return await _say(
            self._runtime, self._journal, text, chunk, self.task_id, self.conversation_id
        )

    async def artifact(
        self,
        name: str,
        url: str,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        """Report a link, file or result of the task; returns the artifact id."""

        return await _artifact(self._send, name, url, mime_type, summary)

    async def upload(
        self, name: str, content: FileContent, *, mime_type: str | None = None
    ) -> UploadedFile:
        """Store a file in the hub (bytes, or a path to read); returns its hub address.

        Members of the workspace can open ``.url``; pass it as an artifact's or an
        attachment's URL. ``mime_type`` defaults to a guess from ``name``. While the hub is
        unreachable this waits and retries; a resumed handler gets the recorded file back
        without uploading again. Files over the hub's limit (10 MiB unless its operator
        changed it) raise :class:`~lineup.protocol.errors.InvalidArgument`.
        """
        return await _upload(self._runtime, self._journal, name, content, mime_type)

    async def upload_artifact(
        self,
        name: str,
        content: FileContent,
        *,
        file_name: str | None = None,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        """Upload a file and report it as an artifact of the task, in one call; returns the
        artifact id. People open it from the task (members of the workspace only).

        ``file_name`` (what a download is saved as) defaults to the path's name, or
        ``name``. Two journaled steps: the upload (HTTP, retried) and then ``artifact.created``
        through the outbox, so neither is lost nor repeated across reconnects and restarts.
        """
        stored_as = file_name or (Path(content).name if isinstance(content, os.PathLike) else name)
        uploaded = await self.upload(stored_as, content, mime_type=mime_type)
        return await self.artifact(
            name, uploaded.url, mime_type=uploaded.mime_type.split(";", 1)[0], summary=summary
        )

    async def invoke(
        self,
        capability: str,
        params: Mapping[str, Any] | None = None,
        *,
        instance: str | None = None,
        invocation_id: str | None = None,
        on_status: StatusCallback | None = None,
    ) -> InvocationOutcome:
        """Invoke a governed capability in the task's conversation and wait for its outcome
        (across reconnects and restarts); a write waits for a person's approval first.

        ``on_status`` hears ``waiting_for_approval`` and ``accepted``; the outcome is the
        terminal status — check ``.succeeded`` or call ``.raise_for_status()``. A refusal by
        the hub (unknown capability, bad params, not allowed) raises at once. See
        :meth:`Capabilities.invoke <lineup.sdk.Capabilities.invoke>`.
        """
        self._raise_if_cancelled()
        return await self.capabilities.invoke(
            capability,
            params,
            instance=instance,
            invocation_id=invocation_id,
            on_status=on_status,
        )

    # --- machinery ------------------------------------------------------------------------

    async def _accept(self) -> None:
        payload = TaskAccepted(task_id=self.task_id)
        await self._send("accept", "task.accepted", lambda _index: (payload, None))

    def _request_cancel(self, reason: str | None) -> None:
        self.cancel_reason = self.cancel_reason or reason
        self.cancelled.set()

    def _end_by_hub(self, cause: str) -> None:
        self.ended_by_hub = cause
        self.cancelled.set()

    def _raise_if_cancelled(self) -> None:
        if self.ended_by_hub is not None:
            raise TaskEnded(self.task_id, self.ended_by_hub)
        if self.cancelled.is_set():
            raise TaskCancelled(f"Task {self.task_id} was cancelled: {self.cancel_reason or ''}")

    async def _send(
        self,
        op: str,
        event_type: str,
        make: Callable[[int], tuple[BaseModel, Any]],
        *,
        task_id: str | None = None,
    ) -> Any:
        def build(index: int) -> tuple[Envelope, Any]:
            payload, result = make(index)
            envelope = self._runtime.make_envelope(
                event_type,
                payload,
                envelope_id=self._journal.derive("evt", index),
                task_id=task_id or self.task_id,
                conversation_id=self.conversation_id,
            )
            return envelope, result

        return await self._journal.emit(event_type, op, build)

    async def _ask(
        self, op: str, expires_at: datetime | None, **fields: Any
    ) -> InteractionResolved:
        self._raise_if_cancelled()
        # a task being cancelled has its questions withdrawn by the hub itself
        return await _ask(
            self._runtime,
            self._send,
            self._journal,
            op,
            expires_at,
            withdraw=lambda: not self.cancelled.is_set(),
            **fields,
        )

    async def _emit_step(
        self, op: str, event_type: str, make: Callable[[int], tuple[BaseModel, Any]]
    ) -> Any:
        return await self._send(op, event_type, make)


class MessageContext(_Questions):
    """A person's message for this agent (``message.delivered``), with a way to reply.

    ``task_id`` is set when the message is about a task; ``steer`` when the person marked it
    as interrupting what the agent is doing.
    """

    def __init__(self, runtime: Runtime, envelope: Envelope, delivered: MessageDelivered) -> None:
        self._runtime = runtime
        self._journal = Journal(runtime, f"message:{delivered.message_id}")
        self.message_id: str = delivered.message_id
        self.content: str = delivered.content
        self.author: Author = delivered.author
        self.steer: bool = delivered.steer
        self.task_id: str | None = delivered.task_id or envelope.task_id
        self.conversation_id: str | None = envelope.conversation_id
        self.attachments: list[Attachment] = list(delivered.attachments or ())
        self.tools: Tools = Tools(
            lambda: cast(ToolRuntime, runtime),
            journal=self._journal,
            task_id=self.task_id,
            conversation_id=self.conversation_id,
        )
        self.capabilities: Capabilities = Capabilities(
            lambda: cast(CapabilityRuntime, runtime),
            journal=self._journal,
            task_id=self.task_id,
            conversation_id=self.conversation_id,
        )
        self.activity: Activity = Activity(
            runtime, self._journal, self.task_id, self.conversation_id
        )
        """The live transcript: tool calls, commands, file changes, reasoning, token use."""

    def __repr__(self) -> str:
        return f"MessageContext(message_id={self.message_id!r}, content={self.content[:40]!r})"

    async def say(self, text: str | AsyncIterable[str], *, chunk: int = DEFAULT_CHUNK) -> str:
        """Reply in the message's conversation; see :meth:`TaskContext.say`."""
        return await _say(
            self._runtime, self._journal, text, chunk, self.task_id, self.conversation_id
        )

    async def upload(
        self, name: str, content: FileContent, *, mime_type: str | None = None
    ) -> UploadedFile:
        """Store a file in the hub; see :meth:`TaskContext.upload`."""
        return await _upload(self._runtime, self._journal, name, content, mime_type)

    async def artifact(
        self,
        name: str,
        url: str,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        """Report a link, file or result in the message's conversation (its task's, when it
        is about one); returns the artifact id. See :meth:`TaskContext.artifact`."""
        return await _artifact(self._emit, name, url, mime_type, summary)

    async def upload_artifact(
        self,
        name: str,
        content: FileContent,
        *,
        file_name: str | None = None,
        mime_type: str | None = None,
        summary: str | None = None,
    ) -> str:
        """Upload a file and report it as an artifact of the conversation, in one call; see
        :meth:`TaskContext.upload_artifact`."""
        stored_as = file_name or (Path(content).name if isinstance(content, os.PathLike) else name)
        uploaded = await self.upload(stored_as, content, mime_type=mime_type)
        return await self.artifact(
            name, uploaded.url, mime_type=uploaded.mime_type.split(";", 1)[0], summary=summary
        )

    async def _ask(
        self, op: str, expires_at: datetime | None, **fields: Any
    ) -> InteractionResolved:
        return await _ask(self._runtime, self._emit, self._journal, op, expires_at, **fields)

    async def _emit_step(
        self, op: str, event_type: str, make: Callable[[int], tuple[BaseModel, Any]]
    ) -> Any:
        return await self._emit(op, event_type, make)

    async def _emit(
        self, op: str, event_type: str, make: Callable[[int], tuple[BaseModel, Any]]
    ) -> Any:
        def build(index: int) -> tuple[Envelope, Any]:
            payload, result = make(index)
            envelope = self._runtime.make_envelope(
                event_type,
                payload,
                envelope_id=self._journal.derive("evt", index),
                task_id=self.task_id,
                conversation_id=self.conversation_id,
            )
            return envelope, result

        return await self._journal.emit(event_type, op, build)

    async def invoke(
        self,
        capability: str,
        params: Mapping[str, Any] | None = None,
        *,
        instance: str | None = None,
        invocation_id: str | None = None,
        on_status: StatusCallback | None = None,
    ) -> InvocationOutcome:
        """Invoke a governed capability in the message's conversation (its task's, when it
        is about one) and wait for its outcome; see :meth:`TaskContext.invoke`."""
        return await self.capabilities.invoke(
            capability,
            params,
            instance=instance,
            invocation_id=invocation_id,
            on_status=on_status,
        )


Emit = Callable[[str, str, Callable[[int], tuple[BaseModel, Any]]], Awaitable[Any]]
"""A context's journaled send: ``(op, event type, make payload from the step index)``."""


async def _artifact(
    emit: Emit, name: str, url: str, mime_type: str | None, summary: str | None
) -> str:
    def make(_index: int) -> tuple[BaseModel, Any]:
        artifact_id = new_id("art")
        payload = build_payload(
            ArtifactCreated,
            name=name,
            url=url,
            mime_type=mime_type,
            summary=summary,
            artifact_id=artifact_id,
        )
        return payload, artifact_id

    return str(await emit("artifact", "artifact.created", make))


def _approval_card(
    title: str,
    description: str | None,
    why: str | None,
    impact: str | None,
    risk: RiskLevel,
    details: dict[str, Any] | None,
    approve_label: str,
    reject_label: str,
) -> dict[str, Any]:
    """The fields of an approval card, asked in a task or in a conversation alike."""
    return {
        "type": InteractionType.APPROVAL,
        "title": title,
        "description": description,
        "why": why,
        "impact": impact,
        "risk": risk,
        "options": [
            InteractionOption(id=APPROVE, label=approve_label, style="primary"),
            InteractionOption(id=REJECT, label=reject_label, style="danger"),
        ],
        "details": details,
    }


async def _ask(
    runtime: Runtime,
    emit: Emit,
    journal: Journal,
    op: str,
    expires_at: datetime | None,
    *,
    withdraw: Callable[[], bool] = lambda: True,
    **fields: Any,
) -> InteractionResolved:
    def make(index: int) -> tuple[BaseModel, Any]:
        interaction = build_payload(
            Interaction, id=journal.derive("int", index), expires_at=expires_at, **fields
        )
        expiry = interaction.expires_at
        result = {
            "interactionId": interaction.id,
            "expiresAt": format_timestamp(expiry) if expiry is not None else None,
        }
        return InteractionRequested(interaction=interaction), result

    recorded = await emit(op, "interaction.requested", make)
    expiry_text = recorded.get("expiresAt")
    recorded_expiry = datetime.fromisoformat(expiry_text) if expiry_text else None
    try:
        return await runtime.wait_answer(recorded["interactionId"], recorded_expiry)
    except asyncio.CancelledError:
        if withdraw():
            _withdraw_unanswered(runtime, str(recorded["interactionId"]))
        raise


def _withdraw_unanswered(runtime: Runtime, interaction_id: str) -> None:
    """The handler stopped waiting (it was cancelled; not the agent stopping, which resumes
    the wait): take the card back, durably, so nobody answers a question nothing waits for.
    The hub refuses it harmlessly when the card was answered or withdrawn meanwhile."""
    if getattr(runtime, "shutting_down", True) or runtime.store.answer(interaction_id):
        return
    envelope = runtime.make_envelope(
        "interaction.cancel",
        InteractionCancel(
            interaction_id=interaction_id, reason="The agent stopped waiting for it."
        ),
        envelope_id=derive_id("evt", runtime.agent_id, "interaction.cancel", interaction_id),
    )
    runtime.store.enqueue(envelope.id, encode(envelope))
    runtime.outbox_changed()


async def _upload(
    runtime: Runtime,
    journal: Journal,
    name: str,
    content: FileContent,
    mime_type: str | None,
) -> UploadedFile:
    index, recorded = journal.begin("upload", name)
    if recorded is not None:
        return UploadedFile.from_json(recorded.result)
    data = read_content(content)
    uploaded = await runtime.upload(name, data, mime_type, journal.derive("upl", index))
    journal.commit(index, "upload", name, uploaded.to_json(), None)
    return uploaded


async def _say(
    runtime: Runtime,
    journal: Journal,
    text: str | AsyncIterable[str],
    chunk: int,
    task_id: str | None,
    conversation_id: str | None,
) -> str:
    index, recorded = journal.begin("message.create", "say")
    if recorded is not None:
        close = getattr(text, "aclose", None)
        if close is not None:
            await close()  # an unused async generator: never started, nothing to undo
    else:
        message_id = journal.derive("msg", index)

        async def stream(piece: str) -> None:
            for start in range(0, len(piece), MAX_DELTA):
                delta = MessageDelta(message_id=message_id, delta=piece[start : start + MAX_DELTA])
                envelope = runtime.make_envelope(
                    "message.delta",
                    delta,
                    envelope_id=new_id("evt"),
                    task_id=task_id,
                    conversation_id=conversation_id,
                )
                await runtime.send_live(envelope)

        if isinstance(text, str):
            final = build_payload(AgentMessageCreate, content=text, message_id=message_id)
            if chunk > 0:
                for start in range(0, len(text), chunk):
                    await stream(text[start : start + chunk])
        else:
            pieces: list[str] = []
            async for piece in text:
                if piece:
                    pieces.append(piece)
                    await stream(piece)
            final = build_payload(
                AgentMessageCreate, content="".join(pieces), message_id=message_id
            )
        envelope = runtime.make_envelope(
            "message.create",
            final,
            envelope_id=journal.derive("evt", index),
            task_id=task_id,
            conversation_id=conversation_id,
        )
        recorded = journal.commit(index, "message.create", "say", message_id, envelope)
    await runtime.wait_settled(recorded)
    return str(recorded.result)
