"""The LineUp platform adapter, on Hermes's ``BasePlatformAdapter``.

The gateway hands each inbound :class:`MessageEvent` to its agent and answers through
``send`` / ``edit_message`` / ``send_exec_approval`` / ``send_document``. Here the inbound side
is a LineUp SDK agent's message and task handlers, and each answer goes to the handler's
context (:class:`~lineup.sdk.MessageContext` or :class:`~lineup.sdk.TaskContext`) of the turn
running in that chat — so every reply, card and file is a journaled step of the SDK: written
before it is sent, resent until the hub has it, and not repeated when a handler is resumed
after Hermes restarts (the SDK resumes a message or task whose turn did not finish, and the
turn then runs again in Hermes, with the steps LineUp already has coming back recorded).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gateway.config import HomeChannel, Platform
from gateway.platforms.base import (
    BasePlatformAdapter,
    MessageEvent,
    MessageType,
    ProcessingOutcome,
    SendResult,
)

from lineup import __version__
from lineup.bridges.hermes import PLATFORM
from lineup.sdk import Agent, AgentConfig, MessageContext, TaskContext, pair

logger = logging.getLogger("lineup.hermes")

Context = MessageContext | TaskContext

_CHOICES = {"approve": "once", "reject": "deny"}
"""A LineUp approval's answer → Hermes's approval choice (``once`` runs this command only)."""


def agent_home(extra: dict[str, Any]) -> Path:
    """Where this Hermes profile keeps its LineUp credentials and state: ``extra.home``,
    ``$LINEUP_AGENT_HOME``, else ``$HERMES_HOME/lineup`` (one agent per Hermes profile)."""
    configured = extra.get("home") or os.environ.get("LINEUP_AGENT_HOME")
    if configured:
        return Path(str(configured)).expanduser()
    from hermes_constants import get_hermes_home

    return Path(get_hermes_home()) / "lineup"


def _setting(extra: dict[str, Any], key: str, env: str) -> str | None:
    value = os.environ.get(env) or extra.get(key)
    return str(value) if value else None


@dataclass
class _Stream:
    """One reply being streamed: the gateway sends its start and edits it as text grows."""

    local_id: str
    queue: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    sent: str = ""
    runner: asyncio.Task[str] | None = None

    async def pieces(self) -> AsyncIterator[str]:
        while (piece := await self.queue.get()) is not None:
            yield piece

    def grow(self, text: str) -> None:
        """Stream what ``text`` adds to what was sent (edits only ever append here)."""
        if text.startswith(self.sent):
            piece, self.sent = text[len(self.sent) :], text
            if piece:
                self.queue.put_nowait(piece)
        else:
            logger.debug("a streamed reply was rewritten, not extended; kept the first text")

    async def close(self) -> None:
        self.queue.put_nowait(None)
        if self.runner is not None:
            await self.runner


@dataclass
class _Turn:
    """A person's message (or a task) being answered by Hermes in one chat."""

    context: Context
    message_id: str
    done: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: ProcessingOutcome | None = None
    stream: _Stream | None = None
    replies: list[str] = field(default_factory=list)
    steps: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a step is written, so steps keep their order (the SDK journal's)."""
    counter: int = 0
    tools: int = 0
    """Tools Hermes started in this turn (a task's progress)."""
    adopting: bool = False
    """Waiting to see whether Hermes resumes this chat's interrupted turn itself."""
    adopted: bool = False
    approval: asyncio.Task[None] | None = None
    approval_key: str = ""

    async def settle_approval(self) -> None:
        """Drop the wait for a card Hermes stopped waiting for (its ``approvals.timeout``
        passed): the card stays in LineUp, a later answer there changes nothing."""
        from tools.approval import has_blocking_approval

        waiting = self.approval
        if waiting is None or waiting.done() or has_blocking_approval(self.approval_key):
            return
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting

    async def end_stream(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            await stream.close()
            if stream.sent:
                self.replies.append(stream.sent)


class LineUpAdapter(BasePlatformAdapter):  # type: ignore[misc]
    """Hermes's gateway ↔ a LineUp hub, as one paired LineUp agent."""

    REQUIRES_EDIT_FINALIZE = True
    """The last edit of a streamed reply ends its LineUp message: it must come."""

    def __init__(self, config: Any, **_: Any) -> None:
        super().__init__(config=config, platform=Platform(PLATFORM))
        if getattr(config, "home_channel", None) is None:
            # Hermes asks each new chat to become the "home channel" (where cron results go)
            # unless one is set; LineUp has no such place, so the question is not asked.
            config.home_channel = HomeChannel(Platform(PLATFORM), chat_id="lineup", name="LineUp")
        self._extra: dict[str, Any] = dict(getattr(config, "extra", None) or {})
        self._home = agent_home(self._extra)
        self._agent: Agent | None = None
        self._runner: asyncio.Task[None] | None = None
        self._turns: dict[str, _Turn] = {}
        self._chat_locks: dict[str, asyncio.Lock] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return "LineUp"

    @property
    def authorization_is_upstream(self) -> bool:
        """Who may talk to the agent is the hub's business: only members of its workspace
        reach it, over the agent's authenticated connection."""
        return True

    # --- lifecycle ------------------------------------------------------------------------

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        try:
            config = await self._credentials()
        except Exception as error:  # the gateway shows the reason; it never sees a trace
            logger.error("LineUp: cannot pair: %s", error)
            self._set_fatal_error("lineup_pairing", str(error), retryable=False)
            return False
        agent = Agent(
            config,
            name=self._extra.get("name") or "Hermes",
            state_dir=self._home / "state",
            runtime="hermes",
            agent_version=_hermes_version(),
            diagnostic_loggers=("lineup.hermes",),
        )
        self._loop = asyncio.get_running_loop()
        agent.on_message(self._on_message)
        agent.task(self._on_task)
        self._agent = agent
        self._runner = asyncio.create_task(self._run(agent), name="lineup-agent")
        _LIVE.append(self)
        self._mark_connected()
        logger.info("LineUp: agent %s connecting to %s", config.agent_id, config.hub_url)
        return True

    async def _credentials(self) -> AgentConfig:
        path = self._home / "credentials.json"
        if path.exists():
            return AgentConfig.load(path)
        hub = _setting(self._extra, "hub_url", "LINEUP_HUB_URL")
        code = _setting(self._extra, "pairing_code", "LINEUP_PAIRING_CODE")
        if not (hub and code):
            raise RuntimeError(
                f"no LineUp credentials in {path}: run `lineup hermes install --hub URL "
                "--code CODE`, or set LINEUP_HUB_URL and LINEUP_PAIRING_CODE"
            )
        name = self._extra.get("name") or "Hermes"
        return await pair(
            hub,
            code,
            name=name,
            runtime="hermes",
            agent_version=_hermes_version(),
            credentials_path=path,
        )

    async def _run(self, agent: Agent) -> None:
        try:
            await agent.run()
        except Exception as error:
            logger.error("LineUp: the agent stopped: %s", error)
            self._set_fatal_error("lineup_refused", str(error), retryable=False)
            await self._notify_fatal_error()

    async def disconnect(self) -> None:
        self._mark_disconnected()
        if self in _LIVE:
            _LIVE.remove(self)
        if self._agent is not None:
            self._agent.stop()
        if self._runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        self._agent = self._runner = None

    async def get_chat_info(self, chat_id: str) -> dict[str, Any]:
        return {"name": chat_id, "type": "dm"}

    async def send_typing(self, chat_id: str, metadata: Any = None) -> None:
        """LineUp shows a streaming reply as it comes; there is no typing signal."""

    # --- inbound: LineUp → Hermes ---------------------------------------------------------

    async def _on_message(self, message: MessageContext) -> None:
        chat = message.conversation_id or f"message:{message.message_id}"
        await self._turn(message, chat, message.content, message.message_id, message.steer)

    async def _on_task(self, task: TaskContext) -> str | None:
        chat = task.conversation_id or f"task:{task.task_id}"
        text = "\n\n".join(part for part in (task.title, task.description) if part)
        await task.progress(0, "Hermes is on it")
        turn = await self._turn(task, chat, text, task.task_id, steer=False)
        if turn.outcome is ProcessingOutcome.FAILURE:
            raise RuntimeError("Hermes could not finish this task")
        return (turn.replies[-1] if turn.replies else "Done")[:500]

    async def _turn(
        self, context: Context, chat: str, text: str, message_id: str, steer: bool
    ) -> _Turn:
        """Run one Hermes turn for ``context``; messages wait for the chat's current turn,
        unless a person marked theirs as steering (then Hermes is interrupted, its way)."""
        lock = self._chat_locks.setdefault(chat, asyncio.Lock())
        if steer and lock.locked():
            return await self._dispatch(context, chat, text, message_id)
        async with lock:
            return await self._dispatch(context, chat, text, message_id)

    def _restoring(self) -> bool:
        """True while the gateway restores its sessions after a start: it then resumes, on
        its own, the turns a restart interrupted, and queues what it is handed meanwhile."""
        runner = getattr(self._message_handler, "__self__", None)
        return bool(getattr(runner, "_startup_restore_in_progress", False))

    async def _dispatch(self, context: Context, chat: str, text: str, message_id: str) -> _Turn:
        turn = _Turn(context=context, message_id=message_id)
        self._turns[chat] = turn
        try:
            if self._restoring():
                # A handler the SDK resumed after a restart: if Hermes resumes this chat's
                # interrupted turn itself, that turn answers the message (its replies and
                # cards come here); only if it does not is the message handed over again.
                turn.adopting = True
                while self._restoring():  # noqa: ASYNC110 - Hermes's flag, no event to await
                    await asyncio.sleep(0.05)
                turn.adopting = False
                if turn.adopted:
                    await self._finish(turn, chat)
                    return turn
            await self.handle_message(self._event(context, chat, text, message_id))
            await turn.done.wait()
            await self._finish(turn, chat)
        finally:
            if self._turns.get(chat) is turn:
                del self._turns[chat]
        return turn

    def _event(self, context: Context, chat: str, text: str, message_id: str) -> MessageEvent:
        author = getattr(context, "author", None)
        source = self.build_source(
            chat_id=chat,
            chat_name=getattr(context, "conversation_title", None) or chat,
            chat_type="dm",
            user_id=getattr(author, "id", None) or "lineup",
            user_name=getattr(author, "name", None) or getattr(author, "id", None) or "LineUp",
        )
        return MessageEvent(
            text=text,
            message_type=MessageType.TEXT,
            source=source,
            message_id=message_id,
            timestamp=datetime.now(),
        )

    async def _finish(self, turn: _Turn, chat: str) -> None:
        await self._session_released(chat)
        await turn.settle_approval()
        async with turn.steps:
            await turn.end_stream()

    async def _session_released(self, chat: str) -> None:
        """Wait until the gateway lets go of the chat's session (it reports a turn complete a
        moment before): a message handed over before then would interrupt the turn."""
        suffix = f":{chat}"
        while any(key.endswith(suffix) for key in self._active_sessions):  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    async def on_processing_complete(self, event: MessageEvent, outcome: ProcessingOutcome) -> None:
        turn = self._turns.get(event.source.chat_id)
        if turn is not None and turn.adopting and getattr(event, "internal", False):
            turn.adopted = True
        elif turn is not None and turn.message_id == event.message_id:
            turn.outcome = outcome
            turn.done.set()

    # --- outbound: Hermes → LineUp --------------------------------------------------------

    def _turn_for(self, chat_id: str) -> _Turn | None:
        turn = self._turns.get(chat_id)
        if turn is not None and turn.adopting:
            turn.adopted = True
        if turn is None:
            logger.warning("LineUp: Hermes wrote to %s outside a turn; not delivered", chat_id)
        return turn

    async def send(
        self,
        chat_id: str,
        content: str,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SendResult:
        turn = self._turn_for(chat_id)
        if turn is None:
            return SendResult(success=False, error="no LineUp turn in this chat")
        await turn.settle_approval()
        async with turn.steps:
            await turn.end_stream()
            turn.counter += 1
            stream = _Stream(local_id=f"{turn.message_id}:{turn.counter}")
            stream.runner = asyncio.create_task(turn.context.say(stream.pieces()))
            stream.grow(self._visible(content))
            turn.stream = stream
        return SendResult(success=True, message_id=stream.local_id)

    async def edit_message(
        self, chat_id: str, message_id: str, content: str, *, finalize: bool = False
    ) -> SendResult:
        turn = self._turns.get(chat_id)
        stream = turn.stream if turn is not None else None
        if turn is None or stream is None or stream.local_id != message_id:
            return SendResult(success=False, error="that reply is finished")
        stream.grow(self._visible(content))
        if finalize:
            async with turn.steps:
                await turn.end_stream()
        return SendResult(success=True, message_id=message_id)

    def _visible(self, content: str) -> str:
        """The text without the stream consumer's cursor (LineUp draws its own) and without
        the blank lines it puts before a reply that follows a tool call."""
        for cursor in (" ▉", "▉", " ▌", "▌"):
            if content.endswith(cursor):
                content = content[: -len(cursor)]
                break
        return content.lstrip()

    async def send_exec_approval(
        self,
        chat_id: str,
        command: str,
        session_key: str,
        description: str = "dangerous command",
        metadata: dict[str, Any] | None = None,
        allow_permanent: bool = True,
        smart_denied: bool = False,
    ) -> SendResult:
        """Hermes wants to run a command it found dangerous: ask on a LineUp approval card,
        and hand the answer back to the waiting agent thread."""
        turn = self._turn_for(chat_id)
        if turn is None:
            return SendResult(success=False, error="no LineUp turn in this chat")
        await turn.steps.acquire()
        try:
            await turn.end_stream()
        except BaseException:
            turn.steps.release()
            raise
        turn.approval_key = session_key
        turn.approval = asyncio.create_task(
            self._approve(turn, command, session_key, description), name="lineup-approval"
        )
        return SendResult(success=True, message_id=f"{turn.message_id}:approval")

    async def _approve(self, turn: _Turn, command: str, session_key: str, why: str) -> None:
        from tools.approval import resolve_gateway_approval

        try:
            approval = await turn.context.ask_approval(
                "Run this command?",
                description=command if len(command) <= 2000 else command[:1999] + "…",
                why=f"Hermes flagged it: {why}",
                impact="Hermes runs it on its machine as soon as you allow it.",
                risk="high",
                details={"command": command},
                approve_label="Allow once",
                reject_label="Deny",
            )
        except Exception as error:
            logger.error("LineUp: the approval could not be asked: %s", error)
            resolve_gateway_approval(session_key, "deny", reason="LineUp could not ask")
            return
        finally:
            turn.steps.release()
        choice = _CHOICES["approve" if approval.approved else "reject"]
        resolve_gateway_approval(session_key, choice, reason=approval.note)

    async def send_document(
        self,
        chat_id: str,
        file_path: str,
        caption: str | None = None,
        file_name: str | None = None,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
        **_: Any,
    ) -> SendResult:
        """A file of Hermes's: uploaded to the hub and shown as an artifact."""
        turn = self._turn_for(chat_id)
        if turn is None:
            return SendResult(success=False, error="no LineUp turn in this chat")
        path = Path(file_path)
        name = file_name or path.name
        await turn.settle_approval()
        async with turn.steps:
            await turn.end_stream()
            artifact = await turn.context.upload_artifact(
                name,
                path,
                file_name=name,
                mime_type=mimetypes.guess_type(name)[0],
                summary=caption,
            )
        return SendResult(success=True, message_id=artifact)

    async def send_image_file(
        self,
        chat_id: str,
        image_path: str,
        caption: str | None = None,
        reply_to: str | None = None,
        metadata: dict[str, Any] | None = None,
        **_: Any,
    ) -> SendResult:
        return await self.send_document(chat_id, image_path, caption=caption)

    async def send_voice(
        self, chat_id: str, audio_path: str, caption: str | None = None, **_: Any
    ) -> SendResult:
        return await self.send_document(chat_id, audio_path, caption=caption)

    async def send_video(
        self, chat_id: str, video_path: str, caption: str | None = None, **_: Any
    ) -> SendResult:
        return await self.send_document(chat_id, video_path, caption=caption)

    def format_tool_event(
        self, event: Any, *, mode: str = "all", preview_max_len: int = 40
    ) -> str | None:
        """No tool chrome in LineUp's conversations: work shows as tasks and their progress
        (:func:`tool_started`)."""
        return None

    def tool_started(self, tool: str) -> None:
        """Hermes starts ``tool`` (in its agent thread): in a task, that is the task's
        progress."""
        from gateway.session_context import get_session_env

        turn = self._turns.get(get_session_env("HERMES_SESSION_CHAT_ID"))
        loop = self._loop
        if turn is None or not isinstance(turn.context, TaskContext) or loop is None:
            return
        turn.tools += 1
        percent = min(90, 10 * turn.tools)
        loop.call_soon_threadsafe(lambda: loop.create_task(_report(turn, percent, tool)))


_LIVE: list[LineUpAdapter] = []
"""The adapters connected in this process (one per Hermes profile's gateway)."""


def on_tool_start(**fields: Any) -> None:
    """Hermes's ``pre_tool_call`` hook: observe, never block."""
    tool = str(fields.get("tool_name") or "a tool")
    for adapter in list(_LIVE):
        adapter.tool_started(tool)


async def _report(turn: _Turn, percent: int, tool: str) -> None:
    assert isinstance(turn.context, TaskContext)
    async with turn.steps:
        await turn.context.progress(percent, f"Running {tool}")


def _hermes_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"hermes-agent {version('hermes-agent')}; lineup {__version__}"
    except PackageNotFoundError:
        return f"lineup {__version__}"


def registration() -> dict[str, Any]:
    """What the plugin registers: ``ctx.register_platform(**registration())``."""

    def configured() -> dict[str, Any] | None:
        extra: dict[str, Any] = {}
        home = agent_home(extra)
        if (home / "credentials.json").exists() or os.environ.get("LINEUP_PAIRING_CODE"):
            return {"home": str(home)} if os.environ.get("LINEUP_AGENT_HOME") else {}
        return None

    return {
        "name": PLATFORM,
        "label": "LineUp",
        "adapter_factory": lambda config: LineUpAdapter(config),
        "check_fn": lambda: True,
        "validate_config": lambda config: True,
        "required_env": [],
        "install_hint": "lineup hermes install --hub URL --code CODE",
        "env_enablement_fn": configured,
        "emoji": "🧭",
        "allow_update_command": False,
        "platform_hint": (
            "You are talking with people through LineUp, a web app that renders Markdown. "
            "Dangerous commands are approved by a person on an approval card."
        ),
    }
