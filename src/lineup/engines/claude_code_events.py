"""What Claude Code prints in stream-json mode, in LineUp's runtime terms — no process, no I/O.

:class:`ClaudeCodeEventMapper` turns the lines ``claude -p --output-format stream-json
--verbose --include-partial-messages`` writes (2.1.332: ``stream_event`` deltas, ``assistant``
and ``user`` messages, ``result``, ``system/*``, ``command_lifecycle``) into
:class:`~lineup.engines.runtime.RuntimeEvent` values, and decides where a LineUp turn ends.

A LineUp turn is the person's message plus every follow-up sent while it runs. Claude Code
takes a follow-up into the running turn when it still has a model request to make, and runs
it as a turn of its own (a second ``result``) when it does not; each message the host sends
carries a ``uuid``, and Claude Code reports it ``queued``, ``started``, ``completed`` or
``cancelled`` in ``command_lifecycle`` lines. So a ``result`` ends the LineUp turn only when
none of the turn's messages is still waiting to start.

The module also computes the unified diffs shown for Claude Code's file tools (``Edit``,
``MultiEdit``, ``Write``): before they run, from the proposed input and the file as it is
(:func:`proposed_diff`); after, from what the tool reported (the mapper's
:class:`~lineup.engines.runtime.FileChange`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lineup.engines import engine_questions as questions
from lineup.engines.engine_questions import AskedQuestion
from lineup.engines.runtime import (
    CommandFinished,
    CommandOutput,
    CommandStarted,
    EngineError,
    FileChange,
    MessageDelta,
    MessageDone,
    ReasoningSummary,
    RuntimeEvent,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode

SERVER = "lineup"
"""The name of the MCP server, answered by the host, that offers LineUp's tools."""
TOOL_PREFIX = f"mcp__{SERVER}__"
"""How Claude Code names a tool of that server."""

SHELL_TOOL = "Bash"
FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})
ASK_TOOL = "AskUserQuestion"
"""Claude Code's tool for asking the person to choose; it takes the answers as an edited
input (``answers``: the question's text → the chosen labels, comma-separated)."""

NO_OUTPUT = "(Bash completed with no output)"
_EXIT_CODE = re.compile(r"^(?:Error: )?Exit code (\d+)\n?")
_TOOL_ERROR = re.compile(r"<tool_use_error>(.*)</tool_use_error>", re.DOTALL)

_ABORTED = frozenset({"aborted_streaming", "aborted_tools"})
_TERMINAL_STATES = frozenset({"started", "completed", "cancelled", "discarded", "refused"})

_STATUS_CODES: Mapping[int, ErrorCode] = {
    400: ErrorCode.INVALID_ARGUMENT,
    401: ErrorCode.UNAUTHENTICATED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.INVALID_ARGUMENT,
    422: ErrorCode.INVALID_ARGUMENT,
    429: ErrorCode.RATE_LIMITED,
}
_REASON_CODES: Mapping[str, ErrorCode] = {
    "prompt_too_long": ErrorCode.INVALID_ARGUMENT,
    "blocking_limit": ErrorCode.INVALID_ARGUMENT,
    "image_error": ErrorCode.INVALID_ARGUMENT,
    "malformed_tool_use_exhausted": ErrorCode.INVALID_ARGUMENT,
    "structured_output_retry_exhausted": ErrorCode.INVALID_ARGUMENT,
    "max_turns": ErrorCode.RATE_LIMITED,
    "budget_exhausted": ErrorCode.RATE_LIMITED,
    "rapid_refill_breaker": ErrorCode.RATE_LIMITED,
    "model_error": ErrorCode.UNAVAILABLE,
    "turn_setup_failed": ErrorCode.UNAVAILABLE,
}


def status_code(status: Any) -> ErrorCode:
    """The taxonomy code of the model server's HTTP status (``None``: no answer at all)."""
    if not isinstance(status, int):
        return ErrorCode.UNAVAILABLE
    if status in _STATUS_CODES:
        return _STATUS_CODES[status]
    return ErrorCode.UNAVAILABLE if status >= 500 else ErrorCode.INVALID_ARGUMENT


def anthropic_base_url(base_url: str) -> str:
    """What ``ANTHROPIC_BASE_URL`` takes: the server's root. Claude Code adds
    ``/v1/messages`` itself, so an endpoint given as ``…/v1`` (as OpenAI clients take it) loses
    that suffix."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def lineup_tool(name: str) -> str | None:
    """LineUp's name for one of its own tools as Claude Code names it, else ``None``."""
    return name[len(TOOL_PREFIX) :] if name.startswith(TOOL_PREFIX) else None


# --- the model's questions to the person ----------------------------------------------------


def user_questions(arguments: Mapping[str, Any]) -> list[tuple[str, AskedQuestion]] | None:
    """``AskUserQuestion``'s questions as LineUp's choice cards, each with the text Claude
    Code keys its answer by; ``None`` when the input is not what the tool takes. The person
    may answer in their own words, as Claude Code offers "Other" with every question."""
    raw = arguments.get("questions")
    if not isinstance(raw, list) or not raw:
        return None
    asked: list[tuple[str, AskedQuestion]] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("question"), str):
            return None
        options = [o for o in item.get("options") or [] if isinstance(o, Mapping)]
        labels = [str(o.get("label", "")) for o in options]
        described = [
            f"- {o.get('label', '')}: {o['description']}" for o in options if o.get("description")
        ]
        header = str(item.get("header") or "").strip()
        description = "\n".join(([header] if header else []) + described) or None
        question = questions.choice(
            item["question"],
            labels,
            multiple=bool(item.get("multiSelect")),
            allow_other=True,
            description=description,
        )
        if question is None:
            return None
        asked.append((item["question"], question))
    return asked


# --- diffs of file changes -------------------------------------------------------------------


def unified(path: str, before: str | None, after: str | None) -> str:
    """A unified diff of one file; ``None`` is a file that does not exist."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    name = path.lstrip("/")
    lines = difflib.unified_diff(
        old,
        new,
        "/dev/null" if before is None else f"a/{name}",
        "/dev/null" if after is None else f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _replace(text: str, old: str, new: str, replace_all: bool) -> str | None:
    if not old or old not in text:
        return None
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def edited_text(tool: str, arguments: Mapping[str, Any], current: str | None) -> str | None:
    """The file's content after ``tool`` ran with ``arguments`` on ``current`` — ``None`` when
    it cannot be told (an edit of a missing file, a string that is not there)."""
    if tool == "Write":
        content = arguments.get("content")
        return content if isinstance(content, str) else None
    if current is None:
        return None
    if tool == "Edit":
        return _replace(
            current,
            str(arguments.get("old_string", "")),
            str(arguments.get("new_string", "")),
            bool(arguments.get("replace_all")),
        )
    if tool == "MultiEdit":
        text: str | None = current
        for edit in arguments.get("edits") or []:
            if text is None or not isinstance(edit, Mapping):
                return None
            text = _replace(
                text,
                str(edit.get("old_string", "")),
                str(edit.get("new_string", "")),
                bool(edit.get("replace_all")),
            )
        return text
    return None


def proposed_diff(
    tool: str, arguments: Mapping[str, Any], path: str, current: str | None
) -> str | None:
    """The diff a file tool would make, for the person deciding whether it may: ``current``
    is the file as it is on disk now (``None`` when there is none)."""
    after = edited_text(tool, arguments, current)
    if after is None:
        return None
    return unified(path, current, after)


def _patch_diff(path: str, hunks: Sequence[Any]) -> str:
    """Claude Code's ``structuredPatch`` (hunks of ``' '``/``-``/``+`` lines) as a diff."""
    name = path.lstrip("/")
    lines = [f"--- a/{name}\n", f"+++ b/{name}\n"]
    for hunk in hunks:
        if not isinstance(hunk, Mapping):
            continue
        lines.append(
            f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
            f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@\n"
        )
        lines.extend(f"{line}\n" for line in hunk.get("lines") or [])
    return "".join(lines)


def applied_change(
    path: str, report: Mapping[str, Any]
) -> tuple[Literal["add", "modify"], str] | None:
    """The kind and diff of a change a file tool reported having made (its
    ``tool_use_result``), or ``None`` when it reported none."""
    if report.get("staged"):
        return None  # held for review: the file is unchanged
    created = report.get("type") == "create"
    kind: Literal["add", "modify"] = "add" if created else "modify"
    hunks = report.get("structuredPatch")
    if isinstance(hunks, list) and hunks:
        return kind, _patch_diff(path, hunks)
    content = report.get("content")
    original = report.get("originalFile")
    if isinstance(content, str) and (created or isinstance(original, str)):
        return kind, unified(path, original if isinstance(original, str) else None, content)
    return None


# --- the mapper -----------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return _unwrapped(content)
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
            if not isinstance(part, Mapping) or part.get("type", "text") == "text"
        )
    return "" if content is None else json.dumps(content)


def _unwrapped(text: str) -> str:
    """A tool error without the tags Claude Code puts around it for the model."""
    match = _TOOL_ERROR.fullmatch(text.strip())
    return match.group(1) if match else text


@dataclass
class _Call:
    name: str
    arguments: Mapping[str, Any]
    started: bool = False


class ClaudeCodeEventMapper:
    """The events of one session, turn by turn. The session calls :meth:`begin` when it
    sends a turn's message, :meth:`sent` for each follow-up, :meth:`interrupting` when it
    asks Claude Code to stop, and feeds every line Claude Code prints to :meth:`line`."""

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd
        """Paths under it are reported relative to it; commands run in it."""
        self.session_id: str | None = None
        self.turn_id: str | None = None
        self.calls: dict[str, _Call] = {}
        """The turn's tool calls by ``tool_use`` id."""
        self._waiting: set[str] = set()
        self._interrupting = False
        self._blocks: dict[tuple[str, int], str] = {}
        self._texts_started: dict[str, int] = {}
        self._texts_done: dict[str, int] = {}
        self._api_error: str | None = None

    # --- what the session tells it --------------------------------------------------------

    def begin(self, turn_id: str, message_uuid: str | None = None) -> list[RuntimeEvent]:
        """A turn starts with the person's message (sent with ``message_uuid``)."""
        self.turn_id = turn_id
        self.calls.clear()
        self._waiting.clear()
        self._blocks.clear()
        self._texts_started.clear()
        self._texts_done.clear()
        self._interrupting = False
        self._api_error = None
        if message_uuid:
            self._waiting.add(message_uuid)
        return [TurnStarted(turn_id=turn_id)]

    def sent(self, message_uuid: str) -> None:
        """A follow-up was sent into the running turn: the turn lasts until it has run."""
        self._waiting.add(message_uuid)

    def permitted(self, call_id: str, arguments: Mapping[str, Any]) -> list[RuntimeEvent]:
        """The person allowed a call, with ``arguments`` (theirs, when they edited it): a
        command is reported as it will run."""
        call = self.calls.get(call_id)
        if call is None:
            return []
        call.arguments = arguments
        return self._command_started(call_id, call)

    def interrupting(self) -> None:
        """The host asked Claude Code to stop the turn (and to drop what is queued)."""
        self._interrupting = True
        self._waiting.clear()

    @property
    def in_turn(self) -> bool:
        return self.turn_id is not None

    def relative(self, path: str) -> str:
        if self.cwd:
            root = self.cwd.rstrip("/") + "/"
            if path.startswith(root):
                return path[len(root) :]
        return path

    # --- what Claude Code prints ----------------------------------------------------------

    def line(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        session = message.get("session_id")
        if isinstance(session, str) and session:
            self.session_id = session
        kind = message.get("type")
        if kind == "stream_event":
            return self._stream_event(message)
        if kind == "assistant":
            return self._assistant(message)
        if kind == "user":
            return self._user(message)
        if kind == "result":
            return self._result(message)
        if kind == "system":
            return self._system(message)
        if kind == "command_lifecycle":
            if message.get("state") in _TERMINAL_STATES:
                self._waiting.discard(str(message.get("command_uuid", "")))
            return []
        return []

    def _text_item(self, message_id: str, ordinal: int) -> str:
        return message_id if ordinal == 0 else f"{message_id}/{ordinal}"

    def _stream_event(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        if message.get("parent_tool_use_id"):
            return []  # a subagent's stream: its result comes back as the Task tool's
        event = message.get("event") or {}
        message_id = str(message.get("api_message_id") or "")
        kind = event.get("type")
        if kind == "message_start":
            inner = event.get("message") or {}
            message_id = str(inner.get("id") or message_id)
            self._texts_started.pop(message_id, None)
            return []
        index = int(event.get("index", 0))
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "text":
                ordinal = self._texts_started.get(message_id, 0)
                self._texts_started[message_id] = ordinal + 1
                self._blocks[(message_id, index)] = self._text_item(message_id, ordinal)
            return []
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            item = self._blocks.get((message_id, index))
            if delta.get("type") == "text_delta" and item is not None and delta.get("text"):
                return [MessageDelta(item_id=item, text=str(delta["text"]))]
        return []

    def _assistant(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        if message.get("parent_tool_use_id"):
            return []
        inner = message.get("message") or {}
        message_id = str(inner.get("id") or "")
        content = inner.get("content") or []
        if message.get("is_api_error_message") or message.get("error"):
            # Claude Code's own words for a failed model request; the result reports it
            self._api_error = _text_of(content) or self._api_error
            return []
        events: list[RuntimeEvent] = []
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text":
                ordinal = self._texts_done.get(message_id, 0)
                self._texts_done[message_id] = ordinal + 1
                item = self._text_item(message_id, ordinal)
                events.append(MessageDone(item_id=item, text=str(block.get("text", ""))))
            elif kind == "thinking" and block.get("thinking"):
                events.append(ReasoningSummary(item_id=message_id, text=str(block["thinking"])))
            elif kind == "tool_use":
                events.extend(self._tool_use(block))
        return events

    def _tool_use(self, block: Mapping[str, Any]) -> list[RuntimeEvent]:
        call_id = str(block.get("id", ""))
        name = str(block.get("name", ""))
        arguments = block.get("input")
        if not isinstance(arguments, Mapping):
            arguments = {}
        self.calls[call_id] = _Call(name, arguments)
        if name == SHELL_TOOL:
            return []  # reported when it starts: the person may change it first
        shown = lineup_tool(name) or name
        return [ToolCallStarted(call_id=call_id, name=shown, arguments=arguments)]

    def _command_started(self, call_id: str, call: _Call) -> list[RuntimeEvent]:
        if call.name != SHELL_TOOL or call.started:
            return []
        call.started = True
        command = str(call.arguments.get("command", ""))
        return [CommandStarted(item_id=call_id, command=command, cwd=self.cwd or "")]

    def _user(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        if message.get("isReplay") or message.get("parent_tool_use_id"):
            return []
        content = (message.get("message") or {}).get("content")
        if not isinstance(content, list):
            return []
        results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        # the structured report describes the message's one tool result
        report = message.get("tool_use_result") if len(results) == 1 else None
        events: list[RuntimeEvent] = []
        for block in results:
            events.extend(self._tool_result(block, report))
        return events

    def _tool_result(self, block: Mapping[str, Any], report: Any) -> list[RuntimeEvent]:
        call_id = str(block.get("tool_use_id", ""))
        call = self.calls.get(call_id)
        failed = bool(block.get("is_error"))
        text = _text_of(block.get("content"))
        if call is not None and call.name == SHELL_TOOL:
            started = self._command_started(call_id, call)
            return [*started, *self._command_result(call_id, failed, text, report)]
        events: list[RuntimeEvent] = [ToolCallFinished(call_id=call_id, ok=not failed, result=text)]
        if call is not None and call.name in FILE_TOOLS and not failed:
            events.extend(self._file_change(call_id, call, report))
        return events

    def _command_result(
        self, call_id: str, failed: bool, text: str, report: Any
    ) -> list[RuntimeEvent]:
        exit_code: int | None
        if isinstance(report, Mapping):
            output = str(report.get("stdout") or "") + str(report.get("stderr") or "")
            exit_code = None if report.get("interrupted") else 0
        else:
            match = _EXIT_CODE.match(text)
            output = text[match.end() :] if match else text
            exit_code = int(match.group(1)) if match else (None if failed else 0)
        if output == NO_OUTPUT:
            output = ""
        events: list[RuntimeEvent] = []
        if output:
            events.append(CommandOutput(item_id=call_id, chunk=output))
        events.append(CommandFinished(item_id=call_id, exit_code=exit_code))
        return events

    def _file_change(self, call_id: str, call: _Call, report: Any) -> list[RuntimeEvent]:
        path = str(
            (report.get("filePath") if isinstance(report, Mapping) else None)
            or call.arguments.get("file_path")
            or ""
        )
        if not isinstance(report, Mapping):
            return []
        change = applied_change(self.relative(path), report)
        if change is None:
            return []
        kind, diff = change
        return [FileChange(item_id=call_id, path=self.relative(path), kind=kind, diff=diff)]

    def _result(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        events: list[RuntimeEvent] = []
        usage = message.get("usage")
        if isinstance(usage, Mapping):
            used = _token_usage(usage, message.get("modelUsage"))
            if used.input_tokens or used.output_tokens:
                events.append(used)
        reason = str(message.get("terminal_reason") or "")
        aborted = reason in _ABORTED
        failed = bool(message.get("is_error"))
        if failed and not aborted and not self._interrupting:
            events.append(self._error(message, reason))
        if self._waiting and not aborted:
            return events  # a follow-up is still queued: Claude Code runs it next
        status: Literal["completed", "interrupted", "failed"] = "completed"
        if aborted or (self._interrupting and failed):
            status = "interrupted"
        elif failed:
            status = "failed"
        events.append(
            TurnFinished(
                turn_id=self.turn_id or "", status=status, native_session_id=self.session_id
            )
        )
        self.turn_id = None
        self._interrupting = False
        return events

    def _error(self, message: Mapping[str, Any], reason: str) -> EngineError:
        text = message.get("result")
        errors = [str(e) for e in message.get("errors") or [] if e]
        described = (text if isinstance(text, str) and text else None) or self._api_error
        if reason == "api_error":
            code = status_code(message.get("api_error_status"))
        else:
            code = _REASON_CODES.get(reason, ErrorCode.UNKNOWN_RESULT)
        if message.get("subtype") in ("error_max_turns", "error_max_budget_usd"):
            code = ErrorCode.RATE_LIMITED
        return EngineError(
            code=code, message=described or "; ".join(errors) or "Claude Code's turn failed"
        )

    def _system(self, message: Mapping[str, Any]) -> list[RuntimeEvent]:
        subtype = message.get("subtype")
        if subtype == "task_started":
            call_id = str(message.get("tool_use_id", ""))
            call = self.calls.get(call_id)
            return self._command_started(call_id, call) if call is not None else []
        if subtype == "api_retry":
            status = message.get("error_status")
            seconds = int(message.get("retry_delay_ms") or 0) / 1000
            return [
                EngineError(
                    code=status_code(status),
                    message=(
                        f"The model request failed ({status or 'no answer'}); Claude Code "
                        f"tries again in {seconds:g} s (attempt {message.get('attempt')} of "
                        f"{message.get('max_retries')})."
                    ),
                )
            ]
        if subtype == "permission_denied":
            why = message.get("decision_reason") or message.get("message") or "a rule"
            return [
                EngineError(
                    code=ErrorCode.FORBIDDEN,
                    message=f"Claude Code refused {message.get('tool_name')} itself: {why}",
                )
            ]
        return []


def _token_usage(usage: Mapping[str, Any], models: Any) -> TokenUsage:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    window = None
    if isinstance(models, Mapping):
        windows = [
            int(m["contextWindow"])
            for m in models.values()
            if isinstance(m, Mapping) and m.get("contextWindow")
        ]
        window = max(windows) if windows else None
    return TokenUsage(
        input_tokens=int(usage.get("input_tokens") or 0) + cached + written,
        output_tokens=int(usage.get("output_tokens") or 0),
        cached_input_tokens=cached,
        context_window=window,
    )


__all__ = [
    "ASK_TOOL",
    "FILE_TOOLS",
    "SERVER",
    "SHELL_TOOL",
    "TOOL_PREFIX",
    "ClaudeCodeEventMapper",
    "anthropic_base_url",
    "applied_change",
    "edited_text",
    "lineup_tool",
    "proposed_diff",
    "status_code",
    "unified",
    "user_questions",
]
