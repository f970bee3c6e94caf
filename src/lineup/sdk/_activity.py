"""The live transcript of a handler's work: ``ctx.activity`` (see :mod:`lineup.protocol.activity`).

Entries go through the outbox like every report — written to the agent's state before they
are sent, resent until the hub acknowledges them, so a crash or a lost connection loses
nothing already reported — but they are not journaled steps: a handler does not wait for the
hub to record each line of output, and streamed output (whose chunking depends on timing)
must not make a resumed handler's steps differ. Their ids are derived from the handler's
scope and the entry's number in it, so a resumed handler that reports the same work again
sends the same frames, which the hub records once.

Command output is coalesced: a chunk goes when :data:`FLUSH_CHARS` characters have gathered
or :data:`FLUSH_SECONDS` after the first unsent character, never one event per write. Inline
output stops at the protocol's limit; the whole output is then uploaded as a hub file when
the command finishes, and the finish names it (``outputUrl``). A diff or a result too large
to carry inline is uploaded the same way.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from lineup.protocol.activity import (
    MAX_CHUNK,
    MAX_DIFF,
    MAX_INLINE_JSON,
    MAX_INLINE_OUTPUT,
    MAX_TEXT,
    ActivityFinished,
    ActivityOutput,
    ActivityStarted,
    ActivityUsage,
)
from lineup.protocol.codec import describe_validation_error, encode
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.sdk._journal import Journal, Runtime, build_payload

FLUSH_CHARS = 8000
"""Characters of output gathered before a chunk is sent at once."""
FLUSH_SECONDS = 0.5
"""The longest a piece of output waits before it is sent."""
MAX_CAPTURE = 10 * 1024 * 1024
"""Characters of a command's output kept for the upload at its end (the hub's file limit)."""

Status = Literal["succeeded", "failed", "cancelled"]
Stream = Literal["stdout", "stderr"]


def _json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


class Activity:
    """``ctx.activity``: report tool calls, commands, file changes, reasoning and token use
    as they happen; people see them live in the task and the conversation."""

    def __init__(
        self,
        runtime: Runtime,
        journal: Journal,
        task_id: str | None,
        conversation_id: str | None,
    ) -> None:
        self._runtime = runtime
        self._journal = journal
        self._task_id = task_id
        self._conversation_id = conversation_id
        self._count = 0
        self._epoch = ""

    # --- entries --------------------------------------------------------------------------

    async def tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        title: str | None = None,
    ) -> ToolCallEntry:
        """A tool the agent runs (its own or another's), with its arguments; finish the
        returned entry with the result."""
        args = dict(arguments) if arguments is not None else None
        if args is not None and _json_size(args) > MAX_INLINE_JSON:
            url = await self._upload_text("arguments.json", json.dumps(args), "application/json")
            args = {"truncated": True, "url": url}
        entry = ToolCallEntry(self, self._next_id())
        self._emit(
            entry.activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=entry.activity_id,
                kind="tool_call",
                name=name,
                arguments=args,
                title=title,
            ),
        )
        return entry

    async def command(
        self, command: str, cwd: str | None = None, *, title: str | None = None
    ) -> CommandEntry:
        """A command the agent runs; stream its output with :meth:`CommandEntry.output` and
        end it with :meth:`CommandEntry.finish` (the exit code)."""
        entry = CommandEntry(self, self._next_id())
        self._emit(
            entry.activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=entry.activity_id,
                kind="command",
                command=command,
                cwd=cwd,
                title=title,
            ),
        )
        return entry

    async def file_change(
        self,
        path: str,
        diff: str | None = None,
        *,
        change: Literal["add", "modify", "delete"] = "modify",
        title: str | None = None,
    ) -> str:
        """A file the agent changed, with a unified diff; returns the entry's id. A diff
        over the inline limit is uploaded, and its beginning shown inline."""
        activity_id = self._next_id()
        diff_url = None
        if diff is not None and len(diff) > MAX_DIFF:
            diff_url = await self._upload_text(_file_name(path) + ".diff", diff, "text/x-diff")
            diff = diff[:MAX_DIFF]
        self._emit(
            activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=activity_id,
                kind="file_change",
                path=path,
                change=change,
                diff=diff,
                diff_url=diff_url,
                title=title,
            ),
        )
        return activity_id

    async def reasoning(self, text: str, *, title: str | None = None) -> str:
        """A summary of the agent's reasoning; returns the entry's id."""
        activity_id = self._next_id()
        self._emit(
            activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=activity_id,
                kind="reasoning",
                text=text[:MAX_TEXT],
                title=title,
            ),
        )
        return activity_id

    async def context(
        self,
        text: str,
        snapshot: str | bytes | None = None,
        *,
        file_name: str = "context.json",
        mime_type: str = "application/json",
        reply_to: str | None = None,
        snapshot_url: str | None = None,
        title: str | None = None,
    ) -> str:
        """What the model was given to work from: ``text`` says it in a line, ``snapshot``
        (uploaded as a hub file; or ``snapshot_url``, one uploaded before) is the whole of
        it, so an answer can be traced to its inputs; ``reply_to`` names what the model
        answers with it (the message or task of the turn that starts here). Returns the
        entry's id."""
        activity_id = self._next_id()
        if snapshot is not None:
            data = snapshot.encode() if isinstance(snapshot, str) else snapshot
            key = self._journal.derive("upl", f"{self._epoch}activity{self._count}:{file_name}")
            snapshot_url = (await self._runtime.upload(file_name, data, mime_type, key)).url
        self._emit(
            activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=activity_id,
                kind="context",
                text=text[:MAX_TEXT],
                snapshot_url=snapshot_url,
                reply_to=reply_to,
                title=title,
            ),
        )
        return activity_id

    async def error(self, code: ErrorCode | str, text: str, *, title: str | None = None) -> str:
        """Something that went wrong which the person should see, with its code in the error
        taxonomy (``unavailable``, ``invalid_argument``, …). Returns the entry's id."""
        activity_id = self._next_id()
        self._emit(
            activity_id,
            "start",
            "activity.started",
            build_payload(
                ActivityStarted,
                activity_id=activity_id,
                kind="error",
                code=ErrorCode(code),
                text=text[:MAX_TEXT],
                title=title,
            ),
        )
        return activity_id

    async def usage(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        cached_input_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        context_window: int | None = None,
        model: str | None = None,
    ) -> None:
        """Tokens one model turn used (not a running total)."""
        self._count += 1
        self._emit(
            f"{self._epoch}usage{self._count}",
            "usage",
            "activity.usage",
            _usage_payload(
                {
                    "input_tokens": input_tokens,
                    "output_tokens": output_tokens,
                    "cached_input_tokens": cached_input_tokens,
                    "reasoning_tokens": reasoning_tokens,
                    "context_window": context_window,
                    "model": model,
                }
            ),
        )

    # --- machinery ------------------------------------------------------------------------

    def _next_id(self) -> str:
        self._count += 1
        return self._journal.derive("act", f"{self._epoch}activity{self._count}")

    def _start_over(self, epoch: str) -> None:
        """New ids from here on: a resumed handler that does other work than its first run
        must not reuse the first run's entry ids (the hub would take them as resends)."""
        self._epoch = epoch
        self._count = 0

    def _emit(self, activity_id: str, suffix: str, event_type: str, payload: BaseModel) -> None:
        """Queue one entry in the outbox (durably) and wake the sender; no wait for the ack."""
        runtime = self._runtime
        envelope = runtime.make_envelope(
            event_type,
            payload,
            envelope_id=self._journal.derive("evt", f"{activity_id}:{suffix}"),
            task_id=self._task_id,
            conversation_id=self._conversation_id,
        )
        runtime.store.enqueue(envelope.id, encode(envelope))
        runtime.outbox_changed()

    async def _upload_text(self, name: str, text: str, mime_type: str) -> str:
        key = self._journal.derive("upl", f"{self._epoch}activity{self._count}:{name}")
        uploaded = await self._runtime.upload(name, text.encode(), mime_type, key)
        return uploaded.url


class ToolCallEntry:
    """A tool call in the transcript; :meth:`finish` it once."""

    def __init__(self, activity: Activity, activity_id: str) -> None:
        self._activity = activity
        self.activity_id = activity_id
        self._started = time.monotonic()
        self._done = False

    async def finish(
        self, result: Any = None, *, ok: bool = True, error: str | None = None
    ) -> None:
        """The call's result (any JSON; a large one is uploaded), or ``ok=False`` with the
        error."""
        if self._done:
            return
        self._done = True
        result_url = None
        if result is not None and _json_size(result) > MAX_INLINE_JSON:
            text = result if isinstance(result, str) else json.dumps(result)
            result_url = await self._activity._upload_text("result.json", text, "application/json")
            result = text[:2000]
        self._activity._emit(
            self.activity_id,
            "finish",
            "activity.finished",
            build_payload(
                ActivityFinished,
                activity_id=self.activity_id,
                status="succeeded" if ok else "failed",
                result=result,
                result_url=result_url,
                error=error[:4000] if error else None,
                duration_ms=int((time.monotonic() - self._started) * 1000),
            ),
        )


class CommandEntry:
    """A command in the transcript: :meth:`output` as it comes, then :meth:`finish`."""

    def __init__(self, activity: Activity, activity_id: str) -> None:
        self._activity = activity
        self.activity_id = activity_id
        self._started = time.monotonic()
        self._pending: list[tuple[Stream, str]] = []
        self._pending_chars = 0
        self._sent = 0  # characters sent inline
        self._total = 0  # characters of output in all
        self._captured: list[str] = []
        self._captured_chars = 0
        self._overflow = False
        self._timer: asyncio.TimerHandle | None = None
        self._done = False
        self._chunks = 0

    async def output(self, chunk: str, stream: Stream = "stdout") -> None:
        """Some output of the command; sent coalesced (see the module's docstring)."""
        self.write(chunk, stream)

    def write(self, chunk: str, stream: Stream = "stdout") -> None:
        """:meth:`output` for code that cannot ``await`` (a subprocess reader's callback)."""
        if not chunk or self._done:
            return
        self._total += len(chunk)
        if self._captured_chars < MAX_CAPTURE:
            self._captured.append(chunk)
            self._captured_chars += len(chunk)
        if self._overflow:
            return
        self._pending.append((stream, chunk))
        self._pending_chars += len(chunk)
        if self._pending_chars >= FLUSH_CHARS:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
            else:
                self._timer = loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Send what output gathered now (one chunk per stream change)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending, self._pending_chars = self._pending, [], 0
        runs: list[tuple[Stream, str]] = []
        for stream, text in pending:
            if runs and runs[-1][0] == stream:
                runs[-1] = (stream, runs[-1][1] + text)
            else:
                runs.append((stream, text))
        for stream, text in runs:
            room = MAX_INLINE_OUTPUT - self._sent
            if len(text) > room:
                text = text[:room]
                self._overflow = True
            for start in range(0, len(text), MAX_CHUNK):
                piece = text[start : start + MAX_CHUNK]
                self._chunks += 1
                self._activity._emit(
                    self.activity_id,
                    f"out{self._chunks}",
                    "activity.output",
                    build_payload(
                        ActivityOutput,
                        activity_id=self.activity_id,
                        chunk=piece,
                        offset=self._sent,
                        stream=None if stream == "stdout" else stream,
                    ),
                )
                self._sent += len(piece)
            if self._overflow:
                return

    async def finish(self, exit_code: int | None, *, status: Status | None = None) -> None:
        """The command ended with ``exit_code`` (``None``: killed or unknown); ``status``
        defaults to ``succeeded`` for 0 and ``failed`` otherwise."""
        if self._done:
            return
        self.flush()
        self._done = True
        output_url = None
        if self._overflow:
            output_url = await self._activity._upload_text(
                "output.txt", "".join(self._captured), "text/plain"
            )
        self._captured = []
        self._activity._emit(
            self.activity_id,
            "finish",
            "activity.finished",
            build_payload(
                ActivityFinished,
                activity_id=self.activity_id,
                status=status or ("succeeded" if exit_code == 0 else "failed"),
                exit_code=exit_code,
                output_url=output_url,
                output_chars=self._total,
                duration_ms=int((time.monotonic() - self._started) * 1000),
            ),
        )


def _usage_payload(fields: dict[str, Any]) -> ActivityUsage:
    """``build_payload`` for the usage model, one of whose fields is called ``model``."""
    try:
        return ActivityUsage.model_validate(fields)
    except ValidationError as exc:
        message, problems = describe_validation_error(exc)
        raise InvalidArgument(
            f"Invalid ActivityUsage: {message}", details={"problems": problems}
        ) from None


def _file_name(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name or "change"
